#include "tensordict/guarded_read.h"

#include <sys/mman.h>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csetjmp>
#include <csignal>
#include <cstring>
#include <deque>
#include <future>
#include <mutex>
#include <thread>

#include "codec/codec.h"
#include "tensordict/cancel.h"
#include "tensordict/error.h"
#include "tensordict/keys.h"
#include "tensordict/store.h"
#include "tensordict/worker_threads.h"

namespace tensordict {
namespace {

// The landing point of the guarded region running on this thread, if any.
// volatile: the signal handler reads it, so the compiler must not drop or
// move the stores around the guarded access.
thread_local sigjmp_buf* volatile tlsLanding = nullptr;
struct sigaction previousAction {};

void onSigbus(int signal, siginfo_t* info, void* context) {
    if (sigjmp_buf* landing = tlsLanding) {
        tlsLanding = nullptr;
        siglongjmp(*landing, 1);
    }
    // Not ours: what the process did before us (by default, die with SIGBUS).
    if (previousAction.sa_flags & SA_SIGINFO) {
        if (previousAction.sa_sigaction) {
            previousAction.sa_sigaction(signal, info, context);
            return;
        }
    } else if (previousAction.sa_handler != SIG_DFL && previousAction.sa_handler != SIG_IGN) {
        previousAction.sa_handler(signal);
        return;
    }
    ::sigaction(SIGBUS, &previousAction, nullptr);
    // Returning re-runs the faulting access, which now takes that action.
}

void installHandler() {
    static std::once_flag once;
    std::call_once(once, [] {
        struct sigaction action {};
        action.sa_sigaction = onSigbus;
        // SA_NODEFER: SIGBUS stays unblocked after the jump, so sigsetjmp
        // need not save the signal mask (no system call per guarded copy).
        action.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
        sigemptyset(&action.sa_mask);
        ::sigaction(SIGBUS, &action, &previousAction);
    });
}

// After the jump out of the handler. SA_NODEFER should leave SIGBUS
// unblocked, but not every runtime honours it (ThreadSanitizer's signal
// interposition does not): make sure, so the next fault is caught too.
void unblockSigbus() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGBUS);
    pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

}  // namespace

bool tryGuardedCopy(void* dst, const void* src, std::size_t n) noexcept {
    // One captured reference: small enough for std::function to store in
    // place, so a copy costs no allocation (table cells call this per element).
    const struct {
        void* dst;
        const void* src;
        std::size_t n;
    } copy{dst, src, n};
    return tryGuardedRun([&copy] { std::memcpy(copy.dst, copy.src, copy.n); });
}

void guardedCopy(void* dst, const void* src, std::size_t n, const Node& leaf) {
    if (!tryGuardedCopy(dst, src, n))
        throw Error::changed(leaf.fileName());
}

bool tryGuardedRun(const std::function<void()>& work) {
    installHandler();
    sigjmp_buf landing;
    sigjmp_buf* const outer = tlsLanding;  // guarded regions may nest
    if (sigsetjmp(landing, 0) != 0) {
        tlsLanding = outer;
        unblockSigbus();
        return false;
    }
    tlsLanding = &landing;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    try {
        work();
    } catch (...) {
        tlsLanding = outer;
        throw;
    }
    std::atomic_signal_fence(std::memory_order_seq_cst);
    tlsLanding = outer;
    return true;
}

void guardedRun(const std::function<void()>& work, const Node& leaf) {
    if (!tryGuardedRun(work))
        throw Error::changed(leaf.fileName());
}

namespace {

// The next `n` bytes of `decoder`, which stands at byte `at` of `size`, into
// `dst`; a stream that ends early is corrupt, and a fault a change.
void inflateExactly(Decompressor& decoder, std::byte* dst, std::size_t n, std::uint64_t at,
                    std::uint64_t size, const Node& leaf) {
    std::size_t got = 0;
    guardedRun([&] { got = decoder.read(dst, n); }, leaf);
    if (got != n)
        throw Error::corrupt(leaf.fileName(), "compressed data ends after " +
                                                  std::to_string(at + got) + " of " +
                                                  std::to_string(size) + " bytes");
}

// The most of an entry before its leaf whose CRC is taken to check the
// leaf's (an .npz member's .npy header: NumPy writes a few hundred bytes).
constexpr std::uint64_t kMaxLeadingHeaderBytes = 1u << 20;

}  // namespace

// A compressed entry decoded as it is read, from its payload in the mapped archive.
struct LeafReader::Stream {
    LeafBytes payload;
    std::unique_ptr<Decompressor> decoder;
};

LeafReader::LeafReader(const Node& leaf) : leaf_(leaf) {
    if (!leaf.isTensor())
        throw Error::invalid(formatKeyPath(leaf.keyPath()), "not a tensor leaf");
    size_ = leaf.leaf().nbytes;
    if (size_ == 0)
        return;
    const StorageInfo& info = leaf.leaf().storage;
    const CompressedRecords* records =
        leaf.store() ? leaf.store()->container().compressedRecords() : nullptr;
    if (info.kind == StorageKind::CompressedEntry && info.isPlain() && records &&
        !leaf.store()->container().isResident(info)) {
        records_ = records;  // inflated front to back from the first read, unless by ranges
    } else if (info.isPlain() && leaf.store() && !leaf.store()->container().readsInPlace(info)) {
        ranged_ = true;  // read chunk by chunk: a leaf of any size costs one chunk
    } else {
        mapped_ = leaf.bytes();
    }
    // The CRC covers the whole entry: checked when the leaf is all of it,
    // or, stored, all of it after a header of its own (an .npz member's
    // array after its .npy header), whose bytes are read once the leaf's
    // are and their CRC combined with the leaf's. (Inflating an entry checks
    // its CRC already.)
    checkCrc_ = info.crc32.has_value() && info.isPlain() && info.size == size_;
    if (info.crc32 && info.kind == StorageKind::StoredEntry && info.offset > 0 &&
        info.offset <= kMaxLeadingHeaderBytes && info.strides.empty() && !info.bigEndian &&
        info.size >= info.offset && info.size - info.offset == size_ && leaf.store()) {
        headerBytes_ = info.offset;
        checkCrc_ = true;
    }
}

void LeafReader::readAsStream() {
    const StorageInfo& info = leaf_.leaf().storage;
    if (!records_)
        throw Error::invalid(formatKeyPath(leaf_.keyPath()), "not a compressed entry");
    ranged_ = segmented_ = false;
    // Inflated as it is read: a leaf of any size costs one chunk of memory.
    stream_ = std::make_unique<Stream>();
    stream_->payload = records_->compressedPayload(info);
    stream_->decoder = Decompressor::create(info.zipMethod, stream_->payload.data.get(),
                                            stream_->payload.size, leaf_.fileName());
    // A first pass over a large deflate entry leaves access points behind.
    if (const std::uint64_t spacing = records_->recordPointsEvery(info);
        spacing && done_ == 0 && info.size == size_)
        stream_->decoder->recordPoints(spacing, size_, [store = leaf_.store(), info](auto points) {
            store->container().compressedRecords()->keepRecordedPoints(info, std::move(points));
        });
    // What was read by range: inflated again and dropped.
    std::unique_ptr<std::byte[]> skipped;
    constexpr std::size_t kSkipChunk = 1u << 20;
    for (std::uint64_t left = done_; left > 0;) {
        if (!skipped)
            skipped.reset(new std::byte[kSkipChunk]);
        const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(kSkipChunk, left));
        inflateExactly(*stream_->decoder, skipped.get(), want, done_ - left, size_, leaf_);
        left -= want;
    }
}

LeafReader::~LeafReader() = default;

std::size_t LeafReader::read(std::byte* dst, std::size_t n) {
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(n, size_ - done_));
    if (want == 0)
        return 0;
    if (records_ && !ranged_ && !stream_)
        readAsStream();
    if (stream_) {
        inflateExactly(*stream_->decoder, dst, want, done_, size_, leaf_);
    } else if (ranged_) {
        leaf_.store()->container().readLeafRange(leaf_.leaf().storage, done_, dst, want);
    } else {
        guardedCopy(dst, mapped_.data.get() + done_, want, leaf_);
    }
    taken(dst, want);
    return want;
}

bool LeafReader::readByRanges() {
    // Access points let several cores inflate a large entry at once; a
    // small one, or small reads, are best inflated front to back.
    const StorageInfo& info = leaf_.leaf().storage;
    if (records_ && !stream_ && done_ == 0 && size_ >= kLargeLeafBytes && info.size == size_ &&
        records_->hasRandomAccess(info))
        ranged_ = segmented_ = true;
    return ranged_;
}

bool LeafReader::fetchAt(std::uint64_t offset, std::byte* dst, std::size_t n) const {
    if (!ranged_ || offset > size_ || n > size_ - offset)
        throw Error::invalid(formatKeyPath(leaf_.keyPath()), "fetchAt() of a reader not by range");
    // Points found wrong are forgotten (and recorded ones may be evicted):
    // past that, a range would be inflated from the entry's start each time.
    if (segmented_ && !records_->hasRandomAccess(leaf_.leaf().storage))
        return false;
    leaf_.store()->container().readLeafRange(leaf_.leaf().storage, offset, dst, n);
    return true;
}

void LeafReader::taken(const std::byte* data, std::size_t n) {
    if (checkCrc_)
        crc_ = crc32(crc_, data, n);
    done_ += n;
    if (done_ == size_)
        finish();
}

void LeafReader::finish() {
    if (!checkCrc_ || !leaf_.store())
        return;
    if (headerBytes_) {
        StorageInfo entry = leaf_.leaf().storage;
        entry.offset = 0;
        std::vector<std::byte> header(static_cast<std::size_t>(headerBytes_));
        leaf_.store()->container().readLeafRange(entry, 0, header.data(), header.size());
        crc_ = crc32Combine(crc32Of(header.data(), header.size()), crc_, size_);
    }
    if (crc_ != *leaf_.leaf().storage.crc32)
        leaf_.store()->container().reportIntegrityProblem(
            leaf_.leaf().storage,
            "CRC-32 mismatch: the entry's data does not match the checksum in the "
            "archive (stale after an in-place write, or corrupt)");
}

namespace {

// Runs produce(piece) on a helper thread, at most `ahead` pieces ahead of
// consume(piece) on this one, until produce() returns false. The first
// error on either side stops both and reaches the caller.
template <typename Piece, typename Produce, typename Consume>
void readAhead(std::size_t ahead, Produce produce, Consume consume) {
    std::mutex mutex;
    std::condition_variable changed;
    std::deque<Piece> ready;
    bool ended = false, stop = false;
    std::exception_ptr error;
    std::thread reading([&] {
        try {
            for (;;) {
                {
                    std::unique_lock<std::mutex> lock(mutex);
                    changed.wait(lock, [&] { return stop || ready.size() < ahead; });
                    if (stop)
                        break;
                }
                Piece piece{};
                if (!produce(piece))
                    break;
                std::lock_guard<std::mutex> lock(mutex);
                ready.push_back(std::move(piece));
                changed.notify_all();
            }
        } catch (...) {
            std::lock_guard<std::mutex> lock(mutex);
            error = std::current_exception();
        }
        std::lock_guard<std::mutex> lock(mutex);
        ended = true;
        changed.notify_all();
    });
    const auto finish = [&] {
        {
            std::lock_guard<std::mutex> lock(mutex);
            stop = true;
        }
        changed.notify_all();
        reading.join();
    };
    try {
        for (;;) {
            Piece piece{};
            {
                std::unique_lock<std::mutex> lock(mutex);
                changed.wait(lock, [&] { return !ready.empty() || ended; });
                if (ready.empty()) {
                    if (error)
                        std::rethrow_exception(error);
                    break;
                }
                piece = std::move(ready.front());
                ready.pop_front();
            }
            changed.notify_all();
            consume(piece);
        }
    } catch (...) {
        finish();
        throw;
    }
    finish();
}

}  // namespace

namespace {

// A leaf on a web server, in requests of `chunk` bytes, the next batch of
// them under way while the one before is consumed, in order. A batch is one
// request while they come fast (loopback, a LAN: more at once only compete
// for the cores); while a request's round trip dominates (a WAN: 40 ms
// each), the batch doubles, up to kMostInFlight requests under way at once.
void forEachRequestedChunk(LeafReader& reader, std::size_t chunk,
                           const std::function<void(const std::byte*, std::size_t)>& consume) {
    constexpr std::size_t kMostInFlight = 4;
    constexpr double kFastBytesPerSecond = 400e6;
    const std::uint64_t size = reader.size();
    std::size_t inFlight = 1;
    // Not cleared: every byte is fetched before it is used.
    struct Buffer {
        std::unique_ptr<std::byte[]> bytes;
        std::size_t capacity = 0, size = 0;
        std::byte* data() const { return bytes.get(); }
    } buffers[2];
    const CancelToken* cancel = CancelScope::current();  // for the helper threads too
    // Fills buffers[b] from `from` (its size: the batch); returns the seconds it took.
    const auto fetch = [&reader, &buffers, chunk, cancel](std::uint64_t from, int b) {
        const auto start = std::chrono::steady_clock::now();
        const std::uint64_t n = buffers[b].size;
        std::vector<std::future<void>> parts;
        for (std::uint64_t at = 0; at < n; at += chunk)
            parts.push_back(std::async(std::launch::async, [&reader, &buffers, b, from, at, n,
                                                            chunk, cancel] {
                const CancelScope scope(cancel);
                reader.fetchAt(from + at, buffers[b].data() + at,
                               static_cast<std::size_t>(std::min<std::uint64_t>(chunk, n - at)));
            }));
        for (std::future<void>& part : parts)
            part.get();  // the first error; the others are waited for by their futures
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    const auto start = [&](std::uint64_t from, int b) {
        Buffer& buffer = buffers[b];
        buffer.size = static_cast<std::size_t>(
            std::min<std::uint64_t>(std::uint64_t(chunk) * inFlight, size - from));
        if (buffer.size > buffer.capacity) {
            buffer.bytes.reset(new std::byte[buffer.size]);
            buffer.capacity = buffer.size;
        }
        return std::async(std::launch::async, fetch, from, b);
    };
    std::future<double> next = start(0, 0);
    for (std::uint64_t from = 0, i = 0; from < size; ++i) {
        const double seconds = next.get();
        const Buffer& ready = buffers[i % 2];
        const std::uint64_t n = ready.size, after = from + n;
        if (n >= chunk * inFlight && double(n) < kFastBytesPerSecond * seconds)
            inFlight = std::min(kMostInFlight, inFlight * 2);
        if (after < size)
            next = start(after, int((i + 1) % 2));
        for (std::uint64_t at = 0; at < n; at += chunk) {
            const auto m = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, n - at));
            reader.taken(ready.data() + at, m);
            consume(ready.data() + at, m);
        }
        from = after;
    }
}

// Anonymous memory in huge pages where the system gives them: a fresh
// buffer of many MiB otherwise costs a page fault per 4 KiB on first touch,
// and faults are dear in a virtual machine.
class RingMemory {
public:
    explicit RingMemory(std::size_t size) : size_(size) {
        void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            throw std::bad_alloc();
        ::madvise(p, size, MADV_HUGEPAGE);
        data_ = static_cast<std::byte*>(p);
    }
    ~RingMemory() { ::munmap(data_, size_); }
    RingMemory(const RingMemory&) = delete;
    RingMemory& operator=(const RingMemory&) = delete;
    std::byte* get() const { return data_; }

private:
    std::byte* data_ = nullptr;
    std::size_t size_ = 0;
};

// A large compressed entry with access points: a thread per core
// inflates its segments ahead, each straight into a slot of a ring, while
// this thread consumes them in order. False, once every segment before it
// is consumed, at a segment that could not be read by range (the points
// proved wrong): the caller reads on as a stream.
bool forEachInflatedSegment(LeafReader& reader,
                            const std::function<void(const std::byte*, std::size_t)>& consume) {
    constexpr std::uint64_t kSegment = kAccessPointSpacing;
    const std::uint64_t size = reader.size();
    const auto count = static_cast<std::size_t>((size + kSegment - 1) / kSegment);
    const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const std::size_t slots = std::min<std::size_t>(count, std::size_t(threads) + 2);
    const RingMemory ring(slots * kSegment);
    const auto lengthOf = [&](std::size_t s) {
        return static_cast<std::size_t>(std::min(kSegment, size - s * kSegment));
    };
    std::mutex mutex;
    std::condition_variable changed;
    std::vector<std::size_t> held(slots, count);  // the segment each slot holds, once inflated
    std::size_t next = 0, consumed = 0, lostAt = count;
    bool stop = false;
    FirstFailure failure;
    const CancelToken* cancel = CancelScope::current();  // for the helper threads too
    const auto inflate = [&] {
        const CancelScope scope(cancel);
        try {
            for (;;) {
                std::size_t s = 0;
                {
                    std::unique_lock<std::mutex> lock(mutex);
                    changed.wait(lock,
                                 [&] { return stop || next >= lostAt || next < consumed + slots; });
                    if (stop || next >= lostAt)
                        return;
                    s = next++;
                }
                const bool read =
                    reader.fetchAt(s * kSegment, ring.get() + (s % slots) * kSegment, lengthOf(s));
                {
                    std::lock_guard<std::mutex> lock(mutex);
                    if (read)
                        held[s % slots] = s;
                    else
                        lostAt = std::min(lostAt, s);
                }
                changed.notify_all();
            }
        } catch (...) {
            failure.keepCurrent();
            {
                std::lock_guard<std::mutex> lock(mutex);
                stop = true;
            }
            changed.notify_all();
        }
    };
    const auto finish = [&] {
        {
            std::lock_guard<std::mutex> lock(mutex);
            stop = true;
        }
        changed.notify_all();
    };
    // This thread: each segment in turn, as soon as it is inflated.
    const auto consumeInOrder = [&] {
        for (std::size_t s = 0; s < count; ++s) {
            {
                std::unique_lock<std::mutex> lock(mutex);
                changed.wait(lock, [&] { return stop || s >= lostAt || held[s % slots] == s; });
                if (stop || s >= lostAt)
                    break;  // a worker failed (rethrown below), or the points are gone
            }
            const std::byte* data = ring.get() + (s % slots) * kSegment;
            reader.taken(data, lengthOf(s));
            consume(data, lengthOf(s));
            {
                std::lock_guard<std::mutex> lock(mutex);
                ++consumed;
            }
            changed.notify_all();
        }
    };
    {
        const WorkerThreads inflating(threads, inflate, true, finish);
        if (inflating.size() == 0)
            return false;
        consumeInOrder();
    }  // the workers stopped and joined: their failure, if any, is theirs no more
    failure.rethrow();
    return reader.position() == size;
}

}  // namespace

void forEachChunk(const Node& leaf, std::size_t chunk,
                  const std::function<void(const std::byte*, std::size_t)>& consume) {
    const bool large = leaf.isTensor() && leaf.leaf().nbytes >= kLargeLeafBytes;
    LeafReader reader(leaf);
    if (reader.size() > 0 && reader.readByRanges()) {
        // A request per chunk: 8 MiB ones, as curl's stream would be, not
        // thousands of small round trips; a few under way at once.
        constexpr std::size_t kRequestChunk = 8u << 20;
        if (!reader.inflatesSegments()) {
            forEachRequestedChunk(reader, std::max(chunk, kRequestChunk), consume);
            return;
        }
        if (forEachInflatedSegment(reader, consume))
            return;
        reader.readAsStream();
    }
    // No larger than the leaf: hashing 100,000 small leaves must not
    // allocate (and clear) a full chunk for each.
    chunk = static_cast<std::size_t>(
        std::max<std::uint64_t>(1, std::min<std::uint64_t>(chunk, leaf.leaf().nbytes)));
    if (!large) {
        std::unique_ptr<std::byte[]> buffer(new std::byte[chunk]);
        while (const std::size_t n = reader.read(buffer.get(), chunk))
            consume(buffer.get(), n);
        return;
    }
    // Large leaves: a helper thread reads (copies or inflates, and checks
    // the CRC) a few chunks ahead while this one consumes: a hash then runs
    // at its own speed, not that plus the inflate's. Chunks small enough to
    // stay in cache; `ahead` queued, one consumed and one read at a time.
    constexpr std::size_t kAhead = 2, kSlots = kAhead + 2;
    std::unique_ptr<std::byte[]> buffers(new std::byte[kSlots * chunk]);
    std::uint64_t next = 0;
    using Chunk = std::pair<const std::byte*, std::size_t>;
    readAhead<Chunk>(
        kAhead,
        [&](Chunk& piece) {
            std::byte* slot = buffers.get() + (next++ % kSlots) * chunk;
            piece = {slot, reader.read(slot, chunk)};
            return piece.second != 0;
        },
        [&](const Chunk& piece) { consume(piece.first, piece.second); });
}

}  // namespace tensordict
