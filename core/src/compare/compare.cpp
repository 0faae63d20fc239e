#include "tensordict/compare.h"

#include "compare/compare_kernels.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <system_error>
#include <thread>
#include <unordered_map>

#include "tensordict/error.h"
#include "tensordict/guarded_read.h"
#include "tensordict/keys.h"
#include "tensordict/store.h"
#include "tensordict/worker_threads.h"

namespace tensordict {

std::string_view differenceName(Difference d) {
    switch (d) {
        case Difference::Class:
            return "class";
        case Difference::BatchSize:
            return "batch_size";
        case Difference::Device:
            return "device";
        case Difference::DType:
            return "dtype";
        case Difference::Shape:
            return "shape";
        case Difference::Values:
            return "values";
        case Difference::NonTensor:
            return "non_tensor";
    }
    return "?";
}

std::vector<Difference> differencesOf(unsigned flags) {
    std::vector<Difference> out;
    for (Difference d :
         {Difference::Class, Difference::BatchSize, Difference::Device, Difference::DType,
          Difference::Shape, Difference::Values, Difference::NonTensor})
        if (hasDifference(flags, d))
            out.push_back(d);
    return out;
}

std::string_view keyStatusName(KeyStatus status) {
    switch (status) {
        case KeyStatus::Same:
            return "same";
        case KeyStatus::Changed:
            return "changed";
        case KeyStatus::OnlyInA:
            return "only_in_a";
        case KeyStatus::OnlyInB:
            return "only_in_b";
        case KeyStatus::Error:
            return "error";
    }
    return "?";
}

std::vector<std::int64_t> unflattenIndex(std::int64_t flat,
                                         const std::vector<std::int64_t>& shape) {
    std::vector<std::int64_t> index(shape.size(), 0);
    for (std::size_t i = shape.size(); i-- > 0;) {
        const std::int64_t extent = std::max<std::int64_t>(shape[i], 1);
        index[i] = flat % extent;
        flat /= extent;
    }
    return index;
}

namespace {

// ---------------------------------------------------------------------------
// Reading the two leaves

constexpr std::size_t kChunkBytes = 1u << 20;

std::size_t chunkElements(const Node& a, const Node& b) {
    return std::max<std::size_t>(
        1, kChunkBytes / std::max(itemSize(a.leaf().dtype), itemSize(b.leaf().dtype)));
}

std::uint64_t elementCount(const Node& leaf) {
    return leaf.leaf().nbytes / itemSize(leaf.leaf().dtype);
}

bool isStreamed(const Node& leaf) {
    // A view into a compressed entry (an .npz member's array) is read whole, then gathered.
    return leaf.leaf().storage.kind == StorageKind::CompressedEntry &&
           leaf.leaf().storage.isPlain() && !leaf.isMaterialized();
}

// After a guarded read of two mappings failed: the error naming the file
// that shrank (a truncated file loses its last page first).
[[noreturn]] void throwChanged(const Node& a, const LeafBytes& aBytes, const Node& b,
                               const LeafBytes& bBytes) {
    std::byte last;
    guardedCopy(&last, aBytes.data.get() + aBytes.size - 1, 1, a);
    guardedCopy(&last, bBytes.data.get() + bBytes.size - 1, 1, b);
    // Both still end where they should: a page in the middle went away.
    throw Error::changed(formatKeyPath(a.keyPath()),
                         "a file of A or B was truncated or replaced by another program");
}

// Elements [begin, end) of two mapped leaves, guarded against files that
// shrink underneath. Throws Error.
bool compareMapped(const Node& a, const LeafBytes& aBytes, const Node& b, const LeafBytes& bBytes,
                   std::uint64_t begin, std::uint64_t end, const Tolerance& t, bool firstOnly,
                   Tally& tally) {
    const std::size_t chunk = chunkElements(a, b);
    const std::size_t aStep = itemSize(a.leaf().dtype), bStep = itemSize(b.leaf().dtype);
    bool stopped = false;
    const bool completed = tryGuardedRun([&] {
        for (std::uint64_t i = begin; i < end && !stopped; i += chunk) {
            const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, end - i));
            stopped = compareRange(aBytes.data.get() + i * aStep, a.leaf().dtype,
                                   bBytes.data.get() + i * bStep, b.leaf().dtype, n,
                                   static_cast<std::int64_t>(i), t, firstOnly, tally);
        }
    });
    if (!completed)
        throwChanged(a, aBytes, b, bBytes);
    return stopped;
}

// Both leaves front to back through LeafReader (compressed entries are
// inflated as they are read), from element `from` on. `onChunk` gets the
// bytes of both sides each chunk covered; returning false stops. True when
// stopped that way, before the end.
bool compareStreamed(const Node& a, const Node& b, std::uint64_t from, const Tolerance& t,
                     bool firstOnly, Tally& tally,
                     const std::function<bool(std::uint64_t)>& onChunk) {
    const std::size_t chunk = chunkElements(a, b);
    const std::size_t aStep = itemSize(a.leaf().dtype), bStep = itemSize(b.leaf().dtype);
    const std::uint64_t total = elementCount(a);
    LeafReader readerA(a), readerB(b);
    std::vector<std::byte> bufA(chunk * aStep), bufB(chunk * bStep);
    for (std::uint64_t i = 0; i < total; i += chunk) {
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, total - i));
        readerA.read(bufA.data(), n * aStep);
        readerB.read(bufB.data(), n * bStep);
        if (i + n <= from)
            continue;
        const std::size_t skip = i < from ? static_cast<std::size_t>(from - i) : 0;
        if (compareRange(bufA.data() + skip * aStep, a.leaf().dtype, bufB.data() + skip * bStep,
                         b.leaf().dtype, n - skip, static_cast<std::int64_t>(i + skip), t,
                         firstOnly, tally))
            return false;
        if (onChunk && !onChunk(n * (aStep + bStep)))
            return i + n < total;
    }
    return false;
}

ValueDifference toValueDifference(const Tally& tally) {
    ValueDifference v;
    v.differing = tally.differing;
    v.maxAbsDiff = tally.maxAbs;
    v.maxRelDiff = tally.maxRel;
    v.firstIndex = tally.first;
    v.nanDiffering = tally.nans;
    return v;
}

// ---------------------------------------------------------------------------
// The comparison of two trees

bool sameNonTensor(const Node& a, const Node& b) {
    if (a.nonTensor().pickleOpaque || b.nonTensor().pickleOpaque) {
        // Values we never unpickle: equal when their sidecars hold the same bytes.
        if (!(a.nonTensor().pickleOpaque && b.nonTensor().pickleOpaque) || !a.store() || !b.store())
            return false;
        constexpr std::uint64_t cap = 1ull << 30;
        return a.store()->container().read(a.nonTensor().pickleFile, cap) ==
               b.store()->container().read(b.nonTensor().pickleFile, cap);
    }
    return a.value() == b.value();
}

// Whether the node's format records tensordict's metadata (class, device,
// batch size): memmap directories and archives do; a checkpoint, a
// safetensors or numpy file holds plain containers and tensors.
bool recordsTensordictMetadata(const Node& n) {
    return !n.store() || n.store()->ownContainer() != OwnContainer::None;
}

// What a node is when one side does not record tensordict's metadata: a
// checkpoint's dict and its converted TensorDict, or an int and its
// NonTensorData, are the same thing.
int structuralKind(const Node& n) {
    if (n.kind() == NodeKind::Object)
        return 3;
    return n.isTensor() ? 0 : n.isNonTensor() ? 1 : n.isCollection() ? 2 : 4;
}

unsigned metadataDifferences(const Node& a, const Node& b) {
    unsigned flags = 0;
    const bool both = recordsTensordictMetadata(a) && recordsTensordictMetadata(b);
    if (!both) {
        if (structuralKind(a) != structuralKind(b) ||
            (a.kind() == NodeKind::Object && a.className() != b.className()))
            flags = flags | Difference::Class;
    } else if (a.kind() != b.kind() || (!a.isTensor() && a.className() != b.className())) {
        flags = flags | Difference::Class;
    }
    if (a.isTensor() && b.isTensor()) {
        if (a.leaf().dtype != b.leaf().dtype)
            flags = flags | Difference::DType;
        // Equal shapes with other element counts cannot come from the loader,
        // but trees built in memory are compared too.
        if (a.leaf().shape != b.leaf().shape || a.leaf().isNested != b.leaf().isNested ||
            a.leaf().nestedShapes != b.leaf().nestedShapes || elementCount(a) != elementCount(b))
            flags = flags | Difference::Shape;
        if (both && a.device() != b.device())
            flags = flags | Difference::Device;
        return flags;
    }
    if (a.isTensor() || b.isTensor())
        return flags;
    if (!both) {
        if (a.isNonTensor() && b.isNonTensor() && !sameNonTensor(a, b))
            flags = flags | Difference::NonTensor;
        return flags;
    }
    if (a.batchSize() != b.batchSize() ||
        (a.kind() == NodeKind::LazyStack && b.kind() == NodeKind::LazyStack &&
         a.collection().stackDim != b.collection().stackDim))
        flags = flags | Difference::BatchSize;
    if (a.isCollection() && b.isCollection() && a.device() != b.device())
        flags = flags | Difference::Device;
    if (a.isNonTensor() && b.isNonTensor() && !sameNonTensor(a, b))
        flags = flags | Difference::NonTensor;
    // A tensorclass's non-tensor fields and a view's parameters.
    if (a.isCollection() && b.isCollection() &&
        a.collection().attributes != b.collection().attributes)
        flags = flags | Difference::NonTensor;
    return flags;
}

// One pair of leaves whose values are compared, split into tasks.
struct LeafJob {
    std::size_t entry = 0;
    const Node* a = nullptr;
    const Node* b = nullptr;
    bool streamed = false;
    std::atomic<std::size_t> remaining{0};
    std::mutex mutex;  // guards the fields below
    Tally tally;
    std::optional<Failure> error;  // the first failure of its tasks
    bool cutShort = false;         // a streamed leaf stopped by a cancel before its end
    LeafBytes aBytes, bBytes;      // mapped once, by the first task that needs them
    bool mapped = false;
};

struct Task {
    LeafJob* job;
    std::uint64_t begin, end;  // elements (whole leaf for streamed jobs)
};

class Comparison {
public:
    explicit Comparison(const CompareOptions& options) : options_(options) {}

    CompareResult run(const Node& a, const Node& b) {
        if (options_.keys.empty()) {
            walk(&a, &b, {});
        } else {
            for (const auto& path : requestedKeys()) {
                const Node* na = a.find(path);
                const Node* nb = b.find(path);
                if (!na && !nb)
                    throw Error::notFound(formatKeyPath(path), "no such key in either tensordict");
                walk(na, nb, path);
            }
        }
        planTasks();
        for (const KeyComparison& entry : result_.keys)
            if (!entry.pending)
                emit(entry);
        work();
        if (failure_)  // a callback threw: the caller gets it, not a terminated thread
            std::rethrow_exception(failure_);
        result_.cancelled = cancelled_.load();
        return std::move(result_);
    }

private:
    // options_.keys without repeats and without paths inside another one.
    std::vector<std::vector<std::string>> requestedKeys() const {
        const auto& keys = options_.keys;
        auto inside = [](const std::vector<std::string>& p, const std::vector<std::string>& q) {
            return q.size() <= p.size() && std::equal(q.begin(), q.end(), p.begin());
        };
        std::vector<std::vector<std::string>> out;
        for (std::size_t i = 0; i < keys.size(); ++i) {
            bool covered = false;
            for (std::size_t j = 0; j < keys.size() && !covered; ++j)
                covered = j != i && inside(keys[i], keys[j]) && (keys[i] != keys[j] || j < i);
            if (!covered)
                out.push_back(keys[i]);
        }
        return out;
    }

    void walk(const Node* a, const Node* b, std::vector<std::string> key) {
        KeyComparison entry;
        entry.key = std::move(key);
        entry.a = a;
        entry.b = b;
        if (!a || !b) {
            entry.status = a ? KeyStatus::OnlyInA : KeyStatus::OnlyInB;
            result_.keys.push_back(std::move(entry));
            return;
        }
        if (a->isError() || b->isError()) {
            entry.status = KeyStatus::Error;
            if (a->isError())
                entry.error = "A: " + a->error();
            if (b->isError())
                entry.error += (entry.error.empty() ? "B: " : "; B: ") + b->error();
            entry.errorKind = (a->isError() ? a : b)->failure()->kind;
            result_.keys.push_back(std::move(entry));
            return;
        }
        try {
            entry.differences = metadataDifferences(*a, *b);
        } catch (const Error& e) {
            entry.status = KeyStatus::Error;
            entry.error = e.what();
            entry.errorKind = e.kind();
        }
        if (entry.status != KeyStatus::Error && entry.differences)
            entry.status = KeyStatus::Changed;
        const bool compareValues = a->isTensor() && b->isTensor() &&
                                   !hasDifference(entry.differences, Difference::Shape) &&
                                   elementCount(*a) > 0 && elementCount(*a) == elementCount(*b);
        if (compareValues) {
            entry.pending = true;
            auto job = std::make_unique<LeafJob>();
            job->entry = result_.keys.size();
            job->a = a;
            job->b = b;
            job->streamed = isStreamed(*a) || isStreamed(*b);
            jobs_.push_back(std::move(job));
        }
        const std::vector<std::string> path = entry.key;
        result_.keys.push_back(std::move(entry));
        if (!a->isCollection() || !b->isCollection())
            return;
        auto childPath = [&path](const std::string& k) {
            std::vector<std::string> p = path;
            p.push_back(k);
            return p;
        };
        for (const ChildPair& pair : matchChildren(a, b))
            walk(pair.a, pair.b, childPath(pair.key()));
    }

    void planTasks() {
        for (auto& job : jobs_) {
            const std::uint64_t n = elementCount(*job->a);
            const std::uint64_t step = job->streamed ? n : chunkElements(*job->a, *job->b);
            std::size_t count = 0;
            for (std::uint64_t i = 0; i < n; i += step, ++count)
                tasks_.push_back({job.get(), i, std::min(n, i + step)});
            job->remaining = count;
            progress_.bytesTotal += job->a->leaf().nbytes + job->b->leaf().nbytes;
        }
        progress_.keysTotal = result_.keys.size();
        progress_.keysDone = result_.keys.size() - jobs_.size();
    }

    void work() {
        if (tasks_.empty())
            return;
        unsigned threads = options_.numThreads > 0
                               ? static_cast<unsigned>(options_.numThreads)
                               : std::max(1u, std::thread::hardware_concurrency());
        const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
        threads = static_cast<unsigned>(
            std::min<std::size_t>({threads, 4 * std::size_t(cores), tasks_.size()}));
        runOnThreads(static_cast<int>(threads), [this] { workLoop(); });
    }

    // Never lets an exception out of a thread: the first one cancels the
    // comparison and compare() rethrows it.
    void workLoop() {
        while (!cancelled_.load(std::memory_order_relaxed)) {
            if (options_.cancel.isCancelled()) {
                cancelled_ = true;
                return;
            }
            const std::size_t i = next_.fetch_add(1);
            if (i >= tasks_.size())
                return;
            try {
                runTask(tasks_[i]);
            } catch (...) {
                fail(std::current_exception());
            }
        }
    }

    void fail(std::exception_ptr e) {
        std::lock_guard<std::mutex> lock(failureMutex_);
        if (!failure_)
            failure_ = e;
        cancelled_ = true;
    }

    void runTask(const Task& task) {
        LeafJob& job = *task.job;
        Tally tally;
        std::optional<Failure> error;
        std::uint64_t reported = 0;
        bool cutShort = false;
        try {
            if (job.streamed) {
                cutShort = compareStreamed(*job.a, *job.b, 0, options_.tolerance, false, tally,
                                           [this, &reported](std::uint64_t bytes) {
                                               reported += bytes;
                                               return advanceQuietly(bytes);
                                           });
            } else {
                LeafBytes aBytes, bBytes;
                {
                    std::lock_guard<std::mutex> lock(job.mutex);
                    if (!job.mapped && !job.error) {
                        job.aBytes = job.a->bytes();
                        job.bBytes = job.b->bytes();
                        job.mapped = true;
                    }
                    aBytes = job.aBytes;
                    bBytes = job.bBytes;
                }
                if (aBytes.data && bBytes.data)
                    compareMapped(*job.a, aBytes, *job.b, bBytes, task.begin, task.end,
                                  options_.tolerance, false, tally);
            }
        } catch (const Cancelled&) {
            cancelled_ = true;  // a remote read that saw the cancel: the leaf stays pending
            cutShort = true;
        } catch (const std::exception& e) {
            error = failureOf(e);
        }
        const std::uint64_t bytes = (task.end - task.begin) *
                                    (itemSize(job.a->leaf().dtype) + itemSize(job.b->leaf().dtype));
        bool last = false;
        {
            std::lock_guard<std::mutex> lock(job.mutex);
            job.tally.merge(tally);
            job.cutShort = job.cutShort || cutShort;
            if (error && !job.error)
                job.error = error;
            last = job.remaining.fetch_sub(1) == 1;
            if (last) {
                job.aBytes = {};
                job.bBytes = {};
            }
        }
        if (last)
            finish(job);
        // A leaf cut short counts the bytes it read, not those it skipped.
        advance(bytes > reported && !cutShort ? bytes - reported : 0, last);
    }

    // Every task of `job` ran; a cancel may have cut a streamed one short,
    // which then stays pending.
    void finish(LeafJob& job) {
        if (job.cutShort)
            return;
        std::lock_guard<std::mutex> lock(emitMutex_);
        KeyComparison& entry = result_.keys[job.entry];
        entry.pending = false;
        if (job.error) {
            entry.status = KeyStatus::Error;
            entry.error = job.error->text();
            entry.errorKind = job.error->kind;
        } else {
            entry.values = toValueDifference(job.tally);
            if (job.tally.differing) {
                entry.differences = entry.differences | Difference::Values;
                entry.status = KeyStatus::Changed;
                // A nested leaf's elements run through its components: a flat index.
                entry.firstIndex = job.a->leaf().isNested
                                       ? std::vector<std::int64_t>{job.tally.first}
                                       : unflattenIndex(job.tally.first, job.a->leaf().shape);
            }
        }
        if (options_.onKey)
            options_.onKey(entry);
    }

    void emit(const KeyComparison& entry) {
        std::lock_guard<std::mutex> lock(emitMutex_);
        if (options_.onKey)
            options_.onKey(entry);
    }

    // advance() for the middle of a task: a throwing callback cancels.
    bool advanceQuietly(std::uint64_t bytes) {
        try {
            return advance(bytes, false);
        } catch (...) {
            fail(std::current_exception());
            return false;
        }
    }

    // Counts compared bytes; calls the progress callback at most every
    // 50 ms (and for the first and the last piece). False when cancelled.
    bool advance(std::uint64_t bytes, bool keyDone) {
        std::lock_guard<std::mutex> lock(progressMutex_);
        progress_.bytesDone += bytes;
        if (keyDone)
            ++progress_.keysDone;
        if (options_.cancel.isCancelled())
            cancelled_ = true;
        if (!options_.progress || cancelled_.load())
            return !cancelled_.load();
        const auto now = std::chrono::steady_clock::now();
        const bool done = progress_.keysDone == progress_.keysTotal;
        if (!reportedOnce_ || done || now - lastReport_ >= std::chrono::milliseconds(50)) {
            reportedOnce_ = true;
            lastReport_ = now;
            options_.progress(progress_);
            if (options_.cancel.isCancelled())
                cancelled_ = true;
        }
        return !cancelled_.load();
    }

    const CompareOptions& options_;
    CompareResult result_;
    std::vector<std::unique_ptr<LeafJob>> jobs_;
    std::vector<Task> tasks_;
    std::atomic<std::size_t> next_{0};
    std::atomic<bool> cancelled_{false};
    std::mutex emitMutex_;
    std::mutex progressMutex_;
    std::mutex failureMutex_;
    std::exception_ptr failure_;
    CompareProgress progress_;
    bool reportedOnce_ = false;
    std::chrono::steady_clock::time_point lastReport_;
};

}  // namespace

std::vector<ChildPair> matchChildren(const Node* a, const Node* b) {
    // By a hash of keys: Node::child scans, and wide dicts would be quadratic.
    // Keys that print alike (a checkpoint's 1 and "1") pair in order, the
    // second of A's with the second of B's: a file compared with itself is
    // the same.
    const auto nth = [](const Node* n, const std::string& key, std::size_t index) -> const Node* {
        if (index == 0)
            return n->child(key);
        for (const Node* child : n->children())
            if (child->key() == key && index-- == 0)
                return child;
        return nullptr;
    };
    std::vector<ChildPair> pairs;
    std::unordered_map<std::string_view, std::size_t> inA;  // how often A has each key
    if (a)
        for (const Node* child : a->children()) {
            const std::size_t index = inA[child->key()]++;
            pairs.push_back({child, b ? nth(b, child->key(), index) : nullptr});
        }
    if (b) {
        std::unordered_map<std::string_view, std::size_t> inB;
        for (const Node* child : b->children()) {
            const std::size_t index = inB[child->key()]++;
            const auto count = inA.find(child->key());
            if (count == inA.end() || index >= count->second)
                pairs.push_back({nullptr, child});
        }
    }
    return pairs;
}

bool elementsClose(const std::byte* a, DType aType, const std::byte* b, DType bType,
                   const Tolerance& tolerance) {
    Tally tally;
    compareRange(a, aType, b, bType, 1, 0, tolerance, true, tally);
    return tally.differing == 0;
}

bool CompareResult::equal() const {
    if (cancelled)
        return false;
    return std::all_of(keys.begin(), keys.end(), [](const KeyComparison& k) {
        return k.status == KeyStatus::Same && !k.pending;
    });
}

namespace {
std::vector<const KeyComparison*> withStatus(const std::vector<KeyComparison>& keys,
                                             KeyStatus status) {
    std::vector<const KeyComparison*> out;
    for (const auto& k : keys)
        if (k.status == status)
            out.push_back(&k);
    return out;
}
}  // namespace

std::vector<const KeyComparison*> CompareResult::onlyInA() const {
    return withStatus(keys, KeyStatus::OnlyInA);
}
std::vector<const KeyComparison*> CompareResult::onlyInB() const {
    return withStatus(keys, KeyStatus::OnlyInB);
}
std::vector<const KeyComparison*> CompareResult::changed() const {
    return withStatus(keys, KeyStatus::Changed);
}
std::vector<const KeyComparison*> CompareResult::errors() const {
    return withStatus(keys, KeyStatus::Error);
}

CompareResult compare(const Node& a, const Node& b, const CompareOptions& options) {
    return Comparison(options).run(a, b);
}

CompareResult compare(const TensorDict& a, const TensorDict& b, const CompareOptions& options) {
    return compare(a.root(), b.root(), options);
}

ValueDifference compareValues(const Node& a, const Node& b, const Tolerance& tolerance,
                              std::int64_t from, bool firstOnly) {
    if (!a.isTensor() || !b.isTensor())
        throw Error::invalid(formatKeyPath(a.keyPath()), "not a pair of tensor leaves");
    const std::uint64_t n = elementCount(a);
    if (n != elementCount(b))
        throw Error::invalid(formatKeyPath(a.keyPath()),
                             "the two leaves have different element counts");
    Tally tally;
    const std::uint64_t start = static_cast<std::uint64_t>(std::max<std::int64_t>(from, 0));
    if (start >= n)
        return toValueDifference(tally);
    if (isStreamed(a) || isStreamed(b))
        compareStreamed(a, b, start, tolerance, firstOnly, tally, {});
    else
        compareMapped(a, a.bytes(), b, b.bytes(), start, n, tolerance, firstOnly, tally);
    return toValueDifference(tally);
}

}  // namespace tensordict
