#include "writing/archive_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "codec/codec.h"
#include "containers/access_index.h"
#include "containers/zip_layout.h"
#include "tensordict/error.h"
#include "tensordict/guarded_read.h"
#include "tensordict/worker_threads.h"

namespace tensordict {
namespace {

// Payloads are copied and checksummed in pieces of this size: large enough
// to amortise a system call, small enough to stay in cache between the CRC
// and the copy, and to spread one large entry over every thread.
constexpr std::uint64_t kCopyChunk = 1u << 20;
// Small entries are gathered into one buffer and written with one call.
constexpr std::uint64_t kGroupBytes = 1u << 20;
constexpr std::size_t kGroupFiles = 512;

std::string sysError(const char* what) {
    return std::string(what) + ": " + std::strerror(errno);
}

// A piece of work: whole files [first, last) when `group`, else bytes
// [begin, end) of file `first`.
struct Unit {
    std::size_t first = 0;
    std::size_t last = 0;
    std::uint64_t begin = 0;
    std::uint64_t end = 0;
    bool group = false;
    bool lastOfFile = true;
};

// What a unit produced, for the in-order writer of compressed archives.
struct UnitOutput {
    std::string bytes;  // compressed bytes (or a copy of small stored content)
    std::uint32_t crc = 0;
    bool ready = false;
};

class ArchiveWriter {
public:
    ArchiveWriter(const std::string& path, const WritePlan& plan, int method, int level,
                  bool accessPoints, int threads, ProgressTracker& progress)
        : path_(path),
          plan_(plan),
          method_(method),
          level_(level),
          accessPoints_(accessPoints),
          threads_(std::max(1, threads)),
          progress_(progress),
          headers_(plan.files.size()) {
        zip::dosDateTime(dosTime_, dosDate_);
        for (std::size_t i = 0; i < plan.files.size(); ++i) {
            zip::EntryHeader& h = headers_[i];
            h.name = plan.files[i].path;
            h.method = compressed(i) ? method_ : zip::kStored;
            h.size = plan.files[i].size;
            h.dosTime = dosTime_;
            h.dosDate = dosDate_;
        }
    }

    ~ArchiveWriter() {
        if (fd_ >= 0)
            ::close(fd_);
    }

    void run() {
        fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (fd_ < 0)
            throw Error::io(path_, sysError("cannot create archive"));
        progress_.started(path_);
        std::uint64_t end = 0;
        if (method_ == zip::kStored)
            end = writeStored();
        else
            end = writeCompressed();
        std::string directory;
        for (const zip::EntryHeader& h : headers_)
            directory += zip::centralHeader(h);
        const std::uint64_t directoryOffset = end;
        directory += zip::endRecords(headers_.size(), directoryOffset, directory.size());
        writeAt(directory.data(), directory.size(), directoryOffset, path_);
        if (::close(fd_) != 0) {
            fd_ = -1;
            throw Error::io(path_, sysError("close failed"));
        }
        fd_ = -1;
    }

private:
    bool compressed(std::size_t i) const {
        return method_ != zip::kStored && plan_.files[i].isTensorData;
    }

    void writeAt(const void* data, std::size_t n, std::uint64_t offset,
                 const std::string& what) const {
        std::size_t done = 0;
        while (done < n) {
            const ssize_t w = ::pwrite(fd_, static_cast<const char*>(data) + done, n - done,
                                       static_cast<off_t>(offset + done));
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0 && errno == EFAULT)  // the kernel's copy from a mapping that lost pages
                throw Error::changed(path_ + ":" + what);
            if (w <= 0)
                throw Error::io(path_ + ":" + what, sysError("write failed"));
            done += static_cast<std::size_t>(w);
        }
    }

    // --- Stored archives: every offset known in advance ---

    std::uint64_t writeStored() {
        std::uint64_t offset = 0;
        for (std::size_t i = 0; i < plan_.files.size(); ++i) {
            zip::EntryHeader& h = headers_[i];
            h.localHeaderOffset = offset;
            if (plan_.files[i].isTensorData) {
                h.padding = zip::alignmentPadding(offset, h.name.size());
                // Every stored payload 64-byte aligned, as Python writes them.
                if ((offset + zip::localHeaderSize(h)) % 64 != 0)
                    throw Error::invalid(path_ + ":" + h.name,
                                         "payload would not be 64-byte aligned");
            }
            h.compressedSize = h.size;
            offset += zip::localHeaderSize(h) + h.size;
        }
        // Units in file order, so the file grows front to back.
        firstUnit_.assign(plan_.files.size(), 0);
        for (std::size_t i = 0; i < plan_.files.size();) {
            const std::uint64_t size = plan_.files[i].size;
            if (size > kGroupBytes) {
                firstUnit_[i] = units_.size();
                for (std::uint64_t b = 0; b < size; b += kCopyChunk)
                    units_.push_back({i, i + 1, b, std::min(size, b + kCopyChunk), false,
                                      b + kCopyChunk >= size});
                ++i;
                continue;
            }
            Unit u{i, i, 0, 0, true, true};
            std::uint64_t bytes = 0;
            while (u.last < plan_.files.size() && u.last - u.first < kGroupFiles &&
                   plan_.files[u.last].size <= kGroupBytes &&
                   (u.last == u.first || bytes + plan_.files[u.last].size <= kGroupBytes))
                bytes += plan_.files[u.last++].size;
            units_.push_back(u);
            i = u.last;
        }
        chunkCrcs_.assign(units_.size(), 0);
        unitsLeft_ = std::vector<std::atomic<std::uint32_t>>(plan_.files.size());
        for (const Unit& u : units_)
            if (!u.group)
                ++unitsLeft_[u.first];
        runWorkers(threads_ - 1, [this] { storedWorker(); });
        return offset;
    }

    void storedWorker() {
        for (;;) {
            const std::size_t k = nextUnit_.fetch_add(1);
            if (k >= units_.size() || failed())
                return;
            const Unit& u = units_[k];
            if (u.group)
                writeGroup(u);
            else
                writeChunk(k, u);
        }
    }

    // Headers and payloads of consecutive small entries, in one write.
    void writeGroup(const Unit& u) {
        const std::uint64_t start = headers_[u.first].localHeaderOffset;
        const zip::EntryHeader& lastHeader = headers_[u.last - 1];
        std::string buffer;
        buffer.reserve(lastHeader.localHeaderOffset + zip::localHeaderSize(lastHeader) +
                       lastHeader.size - start);
        for (std::size_t i = u.first; i < u.last; ++i) {
            progress_.throwIfCancelled(path_);
            const PlannedFile& file = plan_.files[i];
            zip::EntryHeader& h = headers_[i];
            buffer += zip::localHeader(h);  // its CRC is patched in below
            const std::size_t at = buffer.size();
            buffer.resize(at + file.size);
            readSmallSource(file, buffer.data() + at);
            h.crc = crc32Of(reinterpret_cast<const std::byte*>(buffer.data() + at), file.size);
            const std::string header = zip::localHeader(h);
            buffer.replace(at - header.size(), header.size(), header);
        }
        writeAt(buffer.data(), buffer.size(), start, plan_.files[u.first].path);
        for (std::size_t i = u.first; i < u.last; ++i) {
            progress_.add(plan_.files[i].size, plan_.files[i].path);
            progress_.fileDone(plan_.files[i].path);
        }
    }

    // A piece of a large stored entry, straight from its mapping to its offset.
    void writeChunk(std::size_t k, const Unit& u) {
        progress_.throwIfCancelled(path_);
        const PlannedFile& file = plan_.files[u.first];
        const LeafBytes bytes = file.bytes();  // mapped once, then cached by the leaf
        zip::EntryHeader& h = headers_[u.first];
        const std::byte* p = bytes.data.get() + u.begin;
        const std::size_t n = u.end - u.begin;
        guardSource(file, [&] { chunkCrcs_[k] = crc32Of(p, n); });
        writeAt(p, n, h.localHeaderOffset + zip::localHeaderSize(h) + u.begin, file.path);
        progress_.add(n, file.path);
        if (unitsLeft_[u.first].fetch_sub(1) != 1)
            return;
        // The last piece to finish: join the pieces' CRCs in order, then the header.
        std::uint32_t crc = 0;
        for (std::size_t m = firstUnit_[u.first]; m < units_.size() && units_[m].first == u.first;
             ++m)
            crc = crc32Combine(crc, chunkCrcs_[m], units_[m].end - units_[m].begin);
        h.crc = crc;
        const std::string header = zip::localHeader(h);
        writeAt(header.data(), header.size(), h.localHeaderOffset, file.path);
        progress_.fileDone(file.path);
    }

    // --- Compressed archives: compressed ahead, appended in order ---

    std::uint64_t writeCompressed() {
        spacing_.assign(plan_.files.size(), 0);
        for (std::size_t i = 0; i < plan_.files.size(); ++i) {
            const std::uint64_t size = plan_.files[i].size;
            if (compressed(i) && method_ == zip::kDeflate && size > kDeflateChunk) {
                if (accessPoints_)
                    spacing_[i] = zip::accessSpacing(size, kDeflateChunk);
                for (std::uint64_t b = 0; b < size; b += kDeflateChunk)
                    units_.push_back({i, i + 1, b, std::min(size, b + kDeflateChunk), false,
                                      b + kDeflateChunk >= size});
            } else {
                units_.push_back({i, i + 1, 0, size, false, true});
            }
        }
        outputs_ = std::vector<UnitOutput>(units_.size());
        // Compression runs at most this many units ahead of the writer, which bounds memory.
        window_ = static_cast<std::size_t>(threads_) * 4;

        std::uint64_t cursor = 0;
        const int helpers = threads_ > 1 ? threads_ : 0;
        {
            // Compressors run ahead of this thread, which writes in order.
            const WorkerThreads compressors(
                helpers, [this] { guarded([this] { compressWorker(); }); }, false,
                [this] {
                    {
                        std::lock_guard<std::mutex> lock(mutex_);
                        stop_ = true;
                    }
                    changed_.notify_all();
                });
            std::uint32_t crc = 0;
            std::uint64_t compressedSize = 0;
            std::vector<std::uint64_t> segmentLengths;  // the entry's access index, as it grows
            std::vector<std::uint32_t> segmentCrcs;
            for (std::size_t k = 0; k < units_.size(); ++k) {
                const Unit& u = units_[k];
                zip::EntryHeader& h = headers_[u.first];
                if (u.begin == 0) {
                    h.localHeaderOffset = cursor;
                    cursor += zip::localHeaderSize(h);
                    crc = 0;
                    compressedSize = 0;
                    segmentLengths.clear();
                    segmentCrcs.clear();
                }
                UnitOutput out = helpers ? awaitOutput(k) : produce(u);
                writeAt(out.bytes.data(), out.bytes.size(), cursor, plan_.files[u.first].path);
                cursor += out.bytes.size();
                compressedSize += out.bytes.size();
                crc = u.begin == 0 ? out.crc : crc32Combine(crc, out.crc, u.end - u.begin);
                if (const std::uint64_t spacing = spacing_[u.first]) {
                    if (u.begin % spacing == 0) {
                        segmentLengths.push_back(0);
                        segmentCrcs.push_back(out.crc);
                    } else {
                        segmentCrcs.back() =
                            crc32Combine(segmentCrcs.back(), out.crc, u.end - u.begin);
                    }
                    segmentLengths.back() += out.bytes.size();
                    if (u.lastOfFile)
                        h.centralExtra =
                            zip::accessIndexBlock(spacing, segmentLengths, segmentCrcs);
                }
                if (!compressed(u.first))
                    progress_.add(u.end - u.begin, plan_.files[u.first].path);
                if (u.lastOfFile) {
                    h.crc = crc;
                    h.compressedSize = compressedSize;
                    const std::string header = zip::localHeader(h);
                    writeAt(header.data(), header.size(), h.localHeaderOffset,
                            plan_.files[u.first].path);
                    progress_.fileDone(plan_.files[u.first].path);
                }
            }
        }
        rethrowFirstError();
        return cursor;
    }

    UnitOutput produce(const Unit& u) {
        progress_.throwIfCancelled(path_);
        const PlannedFile& file = plan_.files[u.first];
        const LeafBytes bytes = file.bytes();
        const std::byte* p = bytes.data.get() + u.begin;
        const std::size_t n = u.end - u.begin;
        UnitOutput out;
        const std::string where = path_ + ":" + file.path;
        try {
            if (!compressed(u.first)) {
                out.bytes.resize(n);
                copySource(file, out.bytes.data(), p, n);
                out.crc = crc32Of(reinterpret_cast<const std::byte*>(out.bytes.data()), n);
            } else if (method_ == zip::kDeflate) {
                // An access point (access_index.h) starts unprimed: nothing before it is needed.
                const std::uint64_t spacing = spacing_[u.first];
                const bool accessPoint = spacing && u.begin % spacing == 0;
                const std::size_t dictionary =
                    accessPoint ? 0 : std::min<std::uint64_t>(u.begin, 32768);
                guardSource(file, [&] {
                    out.crc = crc32Of(p, n);
                    out.bytes =
                        deflateChunk(p, n, p - dictionary, dictionary, u.lastOfFile, level_);
                });
                progress_.add(n, file.path);
            } else {
                guardSource(file, [&] {
                    out.crc = crc32Of(p, n);
                    out.bytes =
                        compressPayload(p, n, method_, level_, [this, &file](std::uint64_t k) {
                            progress_.add(k, file.path);
                            return !progress_.cancelled();
                        });
                });
            }
        } catch (const Error& e) {
            throw Error({e.kind(), where, e.reason()});  // named by the entry it was writing
        }
        return out;
    }

    void compressWorker() {
        for (;;) {
            std::size_t k;
            {
                std::unique_lock<std::mutex> lock(mutex_);
                changed_.wait(lock, [this] {
                    return stop_ || nextUnit_ >= units_.size() || nextUnit_ < written_ + window_;
                });
                if (stop_ || nextUnit_ >= units_.size())
                    return;
                k = nextUnit_++;
            }
            UnitOutput out = produce(units_[k]);
            {
                std::lock_guard<std::mutex> lock(mutex_);
                outputs_[k] = std::move(out);
                outputs_[k].ready = true;
            }
            changed_.notify_all();
        }
    }

    UnitOutput awaitOutput(std::size_t k) {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return outputs_[k].ready || failed(); });
        if (!outputs_[k].ready)
            rethrowFirstError();
        UnitOutput out = std::move(outputs_[k]);
        outputs_[k] = UnitOutput{};
        written_ = k + 1;
        lock.unlock();
        changed_.notify_all();
        return out;
    }

    // --- Reading the sources ---

    // A leaf's bytes may be mapped from a file that shrinks under us: every
    // read of them runs guarded (guarded_read.h), and a fault becomes an
    // Error naming the leaf. Contents made in memory (meta.json) need none.
    static void copySource(const PlannedFile& file, char* dst, const std::byte* src,
                           std::size_t n) {
        if (file.leaf)
            guardedCopy(dst, src, n, *file.leaf);
        else if (n)
            std::memcpy(dst, src, n);
    }
    // A small file's bytes straight into the group's buffer: one read of
    // the file (Node::readInto), no mapping to make and unmap, nothing kept.
    static void readSmallSource(const PlannedFile& file, char* dst) {
        if (file.leaf)
            file.leaf->readInto(0, reinterpret_cast<std::byte*>(dst), file.size);
        else if (file.size)
            std::memcpy(dst, file.content.data(), file.size);
    }
    template <typename F>
    static void guardSource(const PlannedFile& file, F&& work) {
        if (file.leaf)
            guardedRun(work, *file.leaf);
        else
            work();
    }

    // --- Threads and errors ---

    template <typename F>
    void guarded(F&& f) {
        try {
            f();
        } catch (...) {
            {
                // Under the lock the waiters check it with: no wake-up is lost.
                std::lock_guard<std::mutex> lock(mutex_);
                failure_.keepCurrent();
            }
            changed_.notify_all();
        }
    }

    bool failed() const { return failure_.failed(); }
    void rethrowFirstError() const { failure_.rethrow(); }

    // Runs `work` on the calling thread and `extra` more threads.
    template <typename F>
    void runWorkers(int extra, F work) {
        {
            const WorkerThreads helpers(
                extra, [this, work] { guarded(work); }, false);
            guarded(work);
        }
        rethrowFirstError();
    }

    const std::string path_;
    const WritePlan& plan_;
    const int method_;
    const int level_;
    const bool accessPoints_;
    std::vector<std::uint64_t> spacing_;  // per file: its access points' spacing, 0 for none
    const int threads_;
    ProgressTracker& progress_;
    int fd_ = -1;
    std::uint16_t dosTime_ = 0, dosDate_ = 0;
    std::vector<zip::EntryHeader> headers_;
    std::vector<Unit> units_;
    std::atomic<std::size_t> nextUnit_{0};
    std::vector<std::uint32_t> chunkCrcs_;
    std::vector<std::size_t> firstUnit_;  // a large stored entry's first piece
    std::vector<std::atomic<std::uint32_t>> unitsLeft_;
    std::vector<UnitOutput> outputs_;
    std::size_t window_ = 1;
    std::size_t written_ = 0;  // units appended by the writer
    bool stop_ = false;
    std::mutex mutex_;
    std::condition_variable changed_;
    FirstFailure failure_;
};

}  // namespace

void writeArchive(const std::string& path, const WritePlan& plan, int method, int level,
                  bool accessPoints, int threads, ProgressTracker& progress) {
    if (method != zip::kStored && method != zip::kDeflate && method != zip::kBzip2 &&
        method != zip::kLzma)
        throw Error::unsupported(path, "unsupported compression method " + std::to_string(method) +
                                           " (stored 0, deflate 8, bzip2 12, lzma 14)");
    ArchiveWriter writer(path, plan, method, level, accessPoints, threads, progress);
    writer.run();
}

}  // namespace tensordict
