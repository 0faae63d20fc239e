#include "tensordict/compare.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <mutex>
#include <system_error>
#include <thread>
#include <unordered_map>

#include "tensordict/element.h"
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
// Element kernels

// The differing elements of a range, merged across chunks and threads.
struct Tally {
    std::uint64_t differing = 0;
    double maxAbs = 0;
    double maxRel = 0;
    std::int64_t first = -1;
    std::uint64_t nans = 0;

    // `nan`: a NaN on one side or both; such elements count, but not in the maxima.
    void add(std::int64_t index, double absDiff, double relDiff, bool nan) {
        ++differing;
        if (first < 0 || index < first)
            first = index;
        if (nan) {
            ++nans;
            return;
        }
        maxAbs = std::max(maxAbs, absDiff);
        if (!std::isnan(relDiff))
            maxRel = std::max(maxRel, relDiff);
    }
    void merge(const Tally& o) {
        differing += o.differing;
        nans += o.nans;
        maxAbs = std::max(maxAbs, o.maxAbs);
        maxRel = std::max(maxRel, o.maxRel);
        if (o.first >= 0 && (first < 0 || o.first < first))
            first = o.first;
    }
};

// How a pair of dtypes is compared after promotion.
enum class Domain {
    Integer,  // both bool or integer: exact in 64 bits
    Double,   // as assert_close, which compares floating point in float64
    Complex,
};

bool isIntegral(DType d) {
    const DTypeCategory c = dtypeInfo(d).category;
    return c == DTypeCategory::Bool || c == DTypeCategory::Signed || c == DTypeCategory::Unsigned;
}

Domain domainOf(DType a, DType b) {
    if (dtypeInfo(a).category == DTypeCategory::Complex ||
        dtypeInfo(b).category == DTypeCategory::Complex)
        return Domain::Complex;
    if (isIntegral(a) && isIntegral(b))
        return Domain::Integer;
    return Domain::Double;
}

template <typename T>
T loadRaw(const std::byte* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// Integers compare exactly in 128 bits: every int64 and uint64 value, and
// their differences, fit.
__extension__ typedef __int128 Wide;

Wide loadInteger(const std::byte* p, DType d) {
    switch (d) {
        case DType::Bool:
            return loadRaw<std::uint8_t>(p) != 0;
        case DType::UInt8:
            return loadRaw<std::uint8_t>(p);
        case DType::Int8:
            return loadRaw<std::int8_t>(p);
        case DType::Int16:
            return loadRaw<std::int16_t>(p);
        case DType::Int32:
            return loadRaw<std::int32_t>(p);
        case DType::Int64:
            return loadRaw<std::int64_t>(p);
        case DType::UInt16:
            return loadRaw<std::uint16_t>(p);
        case DType::UInt32:
            return loadRaw<std::uint32_t>(p);
        case DType::UInt64:
            return loadRaw<std::uint64_t>(p);
        default:
            return static_cast<Wide>(elementAsDouble(p, d));
    }
}

double loadReal(const std::byte* p, DType d) {
    switch (d) {
        case DType::Float32:
            return loadRaw<float>(p);
        case DType::Float64:
            return loadRaw<double>(p);
        case DType::Float16:
            return halfToFloat(loadRaw<std::uint16_t>(p));
        case DType::BFloat16:
            return bfloat16ToFloat(loadRaw<std::uint16_t>(p));
        default:
            return elementAsDouble(p, d);
    }
}

std::complex<double> loadComplex(const std::byte* p, DType d) {
    const ComplexValue v = elementAsComplex(p, d);
    return {v.re, v.im};
}

// torch.isclose for a pair already known to be unequal (x == y is close).
bool closeUnequal(double x, double y, const Tolerance& t) {
    if (std::isnan(x) || std::isnan(y))
        return t.equalNan && std::isnan(x) && std::isnan(y);
    if (t.rtol == 0 && t.atol == 0)
        return false;
    const double diff = std::abs(x - y);
    return std::isfinite(diff) && diff <= t.atol + std::abs(t.rtol * y);
}

// |x - y| without overflow or the rounding of large values through double.
double exactAbsDiff(Wide x, Wide y) {
    return static_cast<double>(x > y ? x - y : y - x);
}

bool closeUnequal(Wide x, Wide y, const Tolerance& t) {
    if (t.rtol == 0 && t.atol == 0)
        return false;
    return exactAbsDiff(x, y) <= t.atol + std::abs(t.rtol * static_cast<double>(y));
}

bool isNan(const std::complex<double>& z) {
    return std::isnan(z.real()) || std::isnan(z.imag());
}

bool closeUnequal(std::complex<double> x, std::complex<double> y, const Tolerance& t) {
    if (isNan(x) || isNan(y))
        return t.equalNan && isNan(x) && isNan(y);
    if (t.rtol == 0 && t.atol == 0)
        return false;
    const double diff = std::abs(x - y);
    return std::isfinite(diff) && diff <= t.atol + std::abs(t.rtol) * std::abs(y);
}

void record(Tally& tally, std::int64_t index, double x, double y) {
    const double absDiff = std::abs(x - y);
    tally.add(index, absDiff, absDiff / std::abs(y), std::isnan(x) || std::isnan(y));
}

void record(Tally& tally, std::int64_t index, Wide x, Wide y) {
    const double absDiff = exactAbsDiff(x, y);
    tally.add(index, absDiff, absDiff / std::abs(static_cast<double>(y)), false);
}

void record(Tally& tally, std::int64_t index, std::complex<double> x, std::complex<double> y) {
    const double absDiff = std::abs(x - y);
    tally.add(index, absDiff, absDiff / std::abs(y), isNan(x) || isNan(y));
}

// Compares n elements; `base` is the flat index of the first. Returns true
// when it stopped at a difference because `firstOnly`.
template <typename V, typename LoadA, typename LoadB>
bool scan(const std::byte* a, std::size_t aStep, const std::byte* b, std::size_t bStep,
          std::size_t n, std::int64_t base, const Tolerance& t, bool firstOnly, Tally& tally,
          LoadA loadA, LoadB loadB) {
    for (std::size_t i = 0; i < n; ++i) {
        const V x = loadA(a + i * aStep);
        const V y = loadB(b + i * bStep);
        if (x == y || closeUnequal(x, y, t))
            continue;
        record(tally, base + static_cast<std::int64_t>(i), x, y);
        if (firstOnly)
            return true;
    }
    return false;
}

// Raw bits identical and no NaN among them, in one pass that vectorizes:
// the fast path for the equal parts of two floating-point leaves.
template <typename Bits>
bool identicalWithoutNan(const std::byte* a, const std::byte* b, std::size_t n, Bits absMask,
                         Bits infBits) {
    Bits diff = 0, largest = 0;  // integer OR and max reductions: both vectorize
    for (std::size_t i = 0; i < n; ++i) {
        const Bits x = loadRaw<Bits>(a + i * sizeof(Bits));
        const Bits y = loadRaw<Bits>(b + i * sizeof(Bits));
        diff |= x ^ y;
        largest = std::max<Bits>(largest, x & absMask);
    }
    return diff == 0 && largest <= infBits;
}

// True when the chunk needs no element-wise look: its bytes are identical
// and identical bytes mean equal values (no NaN, or NaN equal to NaN).
bool identicalChunk(const std::byte* a, const std::byte* b, std::size_t n, DType d,
                    const Tolerance& t) {
    const std::size_t bytes = n * itemSize(d);
    const DTypeCategory category = dtypeInfo(d).category;
    const bool nanMatters =
        !t.equalNan && (category == DTypeCategory::Float || category == DTypeCategory::Complex);
    if (!nanMatters)
        return std::memcmp(a, b, bytes) == 0;
    switch (d) {
        case DType::Float32:
        case DType::Complex64:
            return identicalWithoutNan<std::uint32_t>(a, b, bytes / 4, 0x7fffffffu, 0x7f800000u);
        case DType::Float64:
        case DType::Complex128:
            return identicalWithoutNan<std::uint64_t>(a, b, bytes / 8, 0x7fffffffffffffffull,
                                                      0x7ff0000000000000ull);
        case DType::Float16:
        case DType::Complex32:
            return identicalWithoutNan<std::uint16_t>(a, b, bytes / 2, std::uint16_t(0x7fff),
                                                      std::uint16_t(0x7c00));
        case DType::BFloat16:
            return identicalWithoutNan<std::uint16_t>(a, b, bytes / 2, std::uint16_t(0x7fff),
                                                      std::uint16_t(0x7f80));
        default:
            return false;  // float8: compared element by element
    }
}

// Compares n elements of a and b (flat indices base, base + 1, ...).
bool compareRange(const std::byte* a, DType aType, const std::byte* b, DType bType, std::size_t n,
                  std::int64_t base, const Tolerance& t, bool firstOnly, Tally& tally) {
    if (aType == bType && identicalChunk(a, b, n, aType, t))
        return false;
    const std::size_t aStep = itemSize(aType), bStep = itemSize(bType);
    if (aType == bType) {
        // The common dtypes with the loads inlined.
        switch (aType) {
            case DType::Float32: {
                auto load = [](const std::byte* p) -> double { return loadRaw<float>(p); };
                return scan<double>(a, 4, b, 4, n, base, t, firstOnly, tally, load, load);
            }
            case DType::Float64:
                return scan<double>(a, 8, b, 8, n, base, t, firstOnly, tally, loadRaw<double>,
                                    loadRaw<double>);
            case DType::Int64: {
                auto load = [](const std::byte* p) -> Wide { return loadRaw<std::int64_t>(p); };
                return scan<Wide>(a, 8, b, 8, n, base, t, firstOnly, tally, load, load);
            }
            case DType::Int32: {
                auto load = [](const std::byte* p) -> Wide { return loadRaw<std::int32_t>(p); };
                return scan<Wide>(a, 4, b, 4, n, base, t, firstOnly, tally, load, load);
            }
            case DType::UInt8: {
                auto load = [](const std::byte* p) -> Wide { return loadRaw<std::uint8_t>(p); };
                return scan<Wide>(a, 1, b, 1, n, base, t, firstOnly, tally, load, load);
            }
            default:
                break;
        }
    }
    switch (domainOf(aType, bType)) {
        case Domain::Integer:
            return scan<Wide>(
                a, aStep, b, bStep, n, base, t, firstOnly, tally,
                [aType](const std::byte* p) { return loadInteger(p, aType); },
                [bType](const std::byte* p) { return loadInteger(p, bType); });
        case Domain::Double:
            return scan<double>(
                a, aStep, b, bStep, n, base, t, firstOnly, tally,
                [aType](const std::byte* p) { return loadReal(p, aType); },
                [bType](const std::byte* p) { return loadReal(p, bType); });
        case Domain::Complex:
            return scan<std::complex<double>>(
                a, aStep, b, bStep, n, base, t, firstOnly, tally,
                [aType](const std::byte* p) { return loadComplex(p, aType); },
                [bType](const std::byte* p) { return loadComplex(p, bType); });
    }
    return false;
}

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
        return a.store()->read(a.nonTensor().pickleFile, cap) ==
               b.store()->read(b.nonTensor().pickleFile, cap);
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
    std::vector<ChildPair> pairs;
    if (a)
        for (const Node* child : a->children())
            pairs.push_back({child, b ? b->child(child->key()) : nullptr});
    if (b)
        for (const Node* child : b->children())
            if (!a || !a->child(child->key()))
                pairs.push_back({nullptr, child});
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
