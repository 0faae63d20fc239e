#include "archive_writer.h"

#include <zip.h>

#include <QFuture>
#include <QThreadPool>
#include <QtConcurrent/QtConcurrentRun>
#include <cstring>
#include <map>

#include "compress.h"
#include "tensordict/error.h"

namespace tensordict {
namespace {

constexpr std::uint16_t kPaddingFieldId = 0x6474;  // "td", as Python writes it
constexpr std::uint64_t kAlignment = 64;
constexpr std::uint64_t kLocalHeaderSize = 30;
constexpr std::uint64_t kZip64LocalExtra = 20;

struct Compressed {
    std::string payload;
    std::uint32_t crc = 0;
    std::string error;
};

class ArchiveJob;

// One entry's bytes as libzip pulls them at zip_close().
struct EntrySource {
    ArchiveJob* job;
    std::size_t index;
    LeafBytes bytes;  // stored entries: the data itself
    std::uint64_t offset = 0;
};

class ArchiveJob {
public:
    ArchiveJob(const std::string& path, const WritePlan& plan, int method, int level, int threads,
               ProgressTracker& progress)
        : path_(path), plan_(plan), method_(method), level_(level), progress_(progress) {
        pool_.setMaxThreadCount(std::max(1, threads));
        window_ = static_cast<std::size_t>(std::max(1, threads)) + 1;
    }

    void run() {
        int err = 0;
        zip_t* za = zip_open(path_.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
        if (!za) {
            zip_error_t ze;
            zip_error_init_with_code(&ze, err);
            const std::string why = zip_error_strerror(&ze);
            zip_error_fini(&ze);
            throw Error(path_, "cannot create archive: " + why);
        }
        try {
            addEntries(za);
        } catch (...) {
            zip_discard(za);
            throw;
        }
        if (zip_close(za) != 0) {
            std::string why = zip_strerror(za);
            zip_discard(za);
            waitForWorkers();
            if (!firstError_.empty())
                throw Error(firstErrorWhere_, firstError_);
            throw Error(path_, "cannot write archive: " + why);
        }
        waitForWorkers();
    }

    // libzip's source callback, per entry.
    zip_int64_t callback(EntrySource& src, void* data, zip_uint64_t len, zip_source_cmd_t cmd) {
        const PlannedFile& file = plan_.files[src.index];
        try {
            switch (cmd) {
                case ZIP_SOURCE_SUPPORTS:
                    return zip_source_make_command_bitmap(ZIP_SOURCE_OPEN, ZIP_SOURCE_READ,
                                                          ZIP_SOURCE_CLOSE, ZIP_SOURCE_STAT,
                                                          ZIP_SOURCE_ERROR, ZIP_SOURCE_FREE, -1);
                case ZIP_SOURCE_STAT: {
                    auto* st = static_cast<zip_stat_t*>(data);
                    zip_stat_init(st);
                    st->valid = ZIP_STAT_SIZE | ZIP_STAT_COMP_METHOD;
                    st->size = file.size;
                    if (compressed(src.index)) {
                        const Compressed& c = result(src.index);
                        st->comp_method = static_cast<zip_uint16_t>(method_);
                        st->comp_size = c.payload.size();
                        st->crc = c.crc;
                        st->valid |= ZIP_STAT_COMP_SIZE | ZIP_STAT_CRC;
                    } else {
                        st->comp_method = ZIP_CM_STORE;
                    }
                    return sizeof(zip_stat_t);
                }
                case ZIP_SOURCE_OPEN:
                    src.offset = 0;
                    if (!compressed(src.index))
                        src.bytes = file.bytes();  // maps the leaf now
                    return 0;
                case ZIP_SOURCE_READ: {
                    progress_.throwIfCancelled(path_);
                    const std::byte* base;
                    std::uint64_t size;
                    if (compressed(src.index)) {
                        const Compressed& c = result(src.index);
                        base = reinterpret_cast<const std::byte*>(c.payload.data());
                        size = c.payload.size();
                    } else {
                        base = src.bytes.data.get();
                        size = file.size;
                    }
                    const std::uint64_t n = std::min<std::uint64_t>(len, size - src.offset);
                    if (n)
                        std::memcpy(data, base + src.offset, n);
                    src.offset += n;
                    if (!compressed(src.index))
                        progress_.add(n, file.path);
                    return static_cast<zip_int64_t>(n);
                }
                case ZIP_SOURCE_CLOSE:
                    src.bytes = {};
                    progress_.fileDone(file.path);
                    return 0;
                case ZIP_SOURCE_ERROR:
                    return zip_error_to_data(&error_, data, len);
                case ZIP_SOURCE_FREE:
                    delete &src;
                    return 0;
                default:
                    zip_error_set(&error_, ZIP_ER_OPNOTSUPP, 0);
                    return -1;
            }
        } catch (const Error& e) {
            recordError(e.where(), e.reason());
        } catch (const std::exception& e) {
            recordError(path_ + ":" + file.path, e.what());
        }
        zip_error_set(&error_, ZIP_ER_INTERNAL, 0);
        return -1;
    }

private:
    bool compressed(std::size_t i) const {
        return method_ != ZIP_CM_STORE && plan_.files[i].isTensorData;
    }

    void recordError(const std::string& where, const std::string& why) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (firstError_.empty())
            firstErrorWhere_ = where, firstError_ = why;
    }

    void addEntries(zip_t* za) {
        std::uint64_t offset =
            0;  // predicted local header offset (exact while all entries are stored)
        for (std::size_t i = 0; i < plan_.files.size(); ++i) {
            const PlannedFile& file = plan_.files[i];
            auto* src = new EntrySource{this, i, {}, 0};
            zip_source_t* zs = zip_source_function(za, &ArchiveJob::trampoline, src);
            if (!zs) {
                delete src;
                throw Error(path_, zip_strerror(za));
            }
            const zip_int64_t idx = zip_file_add(za, file.path.c_str(), zs, ZIP_FL_ENC_UTF_8);
            if (idx < 0) {
                zip_source_free(zs);
                throw Error(path_ + ":" + file.path,
                            std::string("cannot add entry: ") + zip_strerror(za));
            }
            const auto index = static_cast<zip_uint64_t>(idx);
            std::uint64_t extra = file.size >= 0xFFFFFFFFull ? kZip64LocalExtra : 0;
            if (!compressed(i)) {
                if (zip_set_file_compression(za, index, ZIP_CM_STORE, 0) != 0)
                    throw Error(path_ + ":" + file.path, zip_strerror(za));
                if (file.isTensorData) {
                    // Pad so that the payload starts on a 64-byte boundary, as Python does.
                    const std::uint64_t before =
                        offset + kLocalHeaderSize + file.path.size() + 4 + extra;
                    const std::uint64_t pad = (kAlignment - before % kAlignment) % kAlignment;
                    const std::string zeros(pad, '\0');
                    if (zip_file_extra_field_set(za, index, kPaddingFieldId, ZIP_EXTRA_FIELD_NEW,
                                                 reinterpret_cast<const zip_uint8_t*>(zeros.data()),
                                                 static_cast<zip_uint16_t>(pad),
                                                 ZIP_FL_LOCAL | ZIP_FL_CENTRAL) != 0)
                        throw Error(path_ + ":" + file.path, zip_strerror(za));
                    extra += 4 + pad;
                }
            }
            offset += kLocalHeaderSize + file.path.size() + extra + file.size;
        }
    }

    static zip_int64_t trampoline(void* user, void* data, zip_uint64_t len, zip_source_cmd_t cmd) {
        auto* src = static_cast<EntrySource*>(user);
        return src->job->callback(*src, data, len, cmd);
    }

    // Starts compressing entries from `i` on, up to the window ahead.
    void schedule(std::size_t i) {
        std::size_t started = 0;
        for (std::size_t j = i; j < plan_.files.size() && started < window_; ++j) {
            if (!compressed(j))
                continue;
            ++started;
            if (futures_.count(j) || results_.count(j))
                continue;
            const PlannedFile* file = &plan_.files[j];
            futures_[j] = QtConcurrent::run(&pool_, [this, file] {
                Compressed c;
                try {
                    if (progress_.cancelled())
                        throw Error(path_, "cancelled");
                    const LeafBytes bytes = file->bytes();
                    c.crc = crc32Of(bytes.data.get(), bytes.size);
                    c.payload = compressPayload(bytes.data.get(), bytes.size, method_, level_,
                                                [this, file](std::uint64_t n) {
                                                    progress_.add(n, file->path);
                                                    return !progress_.cancelled();
                                                });
                } catch (const Error& e) {
                    c.error = e.what();
                } catch (const std::exception& e) {
                    c.error = path_ + ":" + file->path + ": " + e.what();
                }
                return c;
            });
        }
    }

    const Compressed& result(std::size_t i) {
        // libzip stats an entry again after writing it, so a payload is kept
        // until the writer has moved on to a later entry.
        results_.erase(results_.begin(), results_.lower_bound(i));
        auto done = results_.find(i);
        if (done == results_.end()) {
            schedule(i);
            QFuture<Compressed> f = futures_.at(i);
            futures_.erase(i);
            done = results_.emplace(i, f.result()).first;  // waits for it
        }
        if (!done->second.error.empty())
            throw Error(path_ + ":" + plan_.files[i].path, done->second.error);
        return done->second;
    }

    void waitForWorkers() {
        for (auto& [i, f] : futures_)
            f.waitForFinished();
        futures_.clear();
        pool_.waitForDone();
    }

    std::string path_;
    const WritePlan& plan_;
    int method_;
    int level_;
    ProgressTracker& progress_;
    QThreadPool pool_;
    std::size_t window_;
    // Used on the writing thread only: compressions under way, and finished ones not yet written.
    std::map<std::size_t, QFuture<Compressed>> futures_;
    std::map<std::size_t, Compressed> results_;
    zip_error_t error_{};
    std::mutex mutex_;
    std::string firstError_, firstErrorWhere_;
};

}  // namespace

void writeArchive(const std::string& path, const WritePlan& plan, int method, int level,
                  int threads, ProgressTracker& progress) {
    if (method != kZipStored && method != kZipDeflate && method != kZipBzip2 && method != kZipLzma)
        throw Error(path, "unsupported compression method " + std::to_string(method) +
                              " (stored 0, deflate 8, bzip2 12, lzma 14)");
    ArchiveJob job(path, plan, method, level, threads, progress);
    job.run();
}

}  // namespace tensordict
