#include "statistics.h"

#include "tensordict/guarded_read.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "tensordict/element.h"
#include "tensordict/statistics.h"
#include "tensordict/worker_threads.h"

using tensordict::DType;

namespace {

constexpr std::int64_t kChunk = 1 << 22;  // elements per task

// Typed access to element i of the leaf or the slice, as a double.
class Reader {
public:
    explicit Reader(const StatisticsRequest& r)
        : r_(r),
          item_(tensordict::itemSize(r.dtype)),
          layout_(r.slice ? r.slice->layout() : TensorSlice::Layout{}),
          cols_(r.slice ? std::max<std::int64_t>(1, r.slice->cols()) : 1) {}

    std::int64_t size() const { return r_.slice ? r_.slice->sliceSize() : r_.numel; }

    template <typename F>
    auto dispatch(F&& f) const {
        const std::byte* base = r_.bytes.data.get();
        if (!r_.slice && !r_.other.data) {
            switch (r_.dtype) {
                case DType::Float32:
                    return f([p = reinterpret_cast<const float*>(base)](std::int64_t i) {
                        return double(p[i]);
                    });
                case DType::Float64:
                    return f([p = reinterpret_cast<const double*>(base)](std::int64_t i) {
                        return p[i];
                    });
                case DType::Int64:
                    return f([p = reinterpret_cast<const std::int64_t*>(base)](std::int64_t i) {
                        return double(p[i]);
                    });
                case DType::Int32:
                    return f([p = reinterpret_cast<const std::int32_t*>(base)](std::int64_t i) {
                        return double(p[i]);
                    });
                case DType::UInt8:
                    return f([p = reinterpret_cast<const std::uint8_t*>(base)](std::int64_t i) {
                        return double(p[i]);
                    });
                default:
                    break;
            }
        }
        return f([this, base](std::int64_t i) { return value(base, i); });
    }

private:
    double value(const std::byte* base, std::int64_t i) const {
        const std::int64_t flat = r_.slice ? layout_.at(i / cols_, i % cols_) : i;
        const std::byte* p = base + static_cast<std::size_t>(flat) * item_;
        if (r_.other.data)
            return difference(p, r_.other.data.get() + static_cast<std::size_t>(flat) * otherItem_);
        if (tensordict::dtypeInfo(r_.dtype).category == tensordict::DTypeCategory::Complex) {
            const auto c = tensordict::elementAsComplex(p, r_.dtype);
            return std::hypot(c.re, c.im);
        }
        return tensordict::elementAsDouble(p, r_.dtype);
    }

    double difference(const std::byte* p, const std::byte* q) const {
        using tensordict::DTypeCategory;
        if (tensordict::dtypeInfo(r_.dtype).category == DTypeCategory::Complex ||
            tensordict::dtypeInfo(r_.otherDtype).category == DTypeCategory::Complex) {
            const auto a = tensordict::elementAsComplex(p, r_.dtype);
            const auto b = tensordict::elementAsComplex(q, r_.otherDtype);
            return std::hypot(a.re - b.re, a.im - b.im);
        }
        const double a = tensordict::elementAsDouble(p, r_.dtype);
        const double b = tensordict::elementAsDouble(q, r_.otherDtype);
        return a == b ? 0.0 : a - b;  // equal infinities differ by nothing
    }

    const StatisticsRequest& r_;
    std::size_t item_;
    std::size_t otherItem_ = tensordict::itemSize(r_.otherDtype);
    TensorSlice::Layout layout_;  // of the slice: two multiply-adds per element
    std::int64_t cols_;
};

// Runs `task(begin, end)` over chunks on tensordict's worker threads, a
// window of chunks at a time (bounded memory, progress between windows),
// merging into `acc` on this thread in chunk order, so the sums come out
// the same for any number of threads.
template <typename Result, typename Task, typename Merge>
bool runChunks(std::int64_t total, int threads, const std::function<bool(double)>& progress,
               double base, double span, Task rawTask, Merge merge, std::atomic<bool>& lost) {
    const std::int64_t chunks = (total + kChunk - 1) / kChunk;
    const std::int64_t window = std::max(2, threads * 2);
    std::vector<Result> results;
    for (std::int64_t first = 0; first < chunks; first += window) {
        results.assign(static_cast<std::size_t>(std::min(window, chunks - first)), Result{});
        // Every chunk reads the mapping in place, guarded: a file that
        // shrinks under us stops the computation instead of killing the
        // process with SIGBUS. (A chunk cut short leaks its small histogram buffer.)
        tensordict::parallelFor(results.size(), threads, [&](std::size_t k) {
            const std::int64_t begin = (first + std::int64_t(k)) * kChunk;
            const std::int64_t end = std::min(total, begin + kChunk);
            if (!lost && !tensordict::tryGuardedRun([&] { results[k] = rawTask(begin, end); }))
                lost = true;
        });
        for (const Result& r : results)
            merge(r);
        const double done = double(first + std::int64_t(results.size())) / double(chunks);
        if (lost || (progress && !progress(base + span * done)))
            return false;
    }
    return true;
}

using Histogram = std::vector<std::int64_t>;

// How a pass over the leaf ended.
enum class PassEnd { Done, Cancelled, SourceChanged };

PassEnd passEnd(bool ok, const std::atomic<bool>& lost) {
    return lost ? PassEnd::SourceChanged : ok ? PassEnd::Done : PassEnd::Cancelled;
}

// The summary pass (the first half of the progress): count, min, max,
// mean and the moments, with a fast path for the leaf itself in the types
// tensordict's kernels read directly.
PassEnd momentsPass(const StatisticsRequest& request, const Reader& reader,
                    const std::function<bool(double)>& progress, tensordict::Moments& all) {
    auto merge = [&all](const tensordict::Moments& p) { all.merge(p); };
    std::atomic<bool> lost{false};
    const std::int64_t total = reader.size();
    const bool plain = !request.slice && !request.other.data;  // the leaf itself, contiguous
    const std::size_t item = tensordict::itemSize(request.dtype);
    if (plain &&
        (request.dtype == DType::Float32 || request.dtype == DType::Float64 || item == 1)) {
        const std::byte* base = request.bytes.data.get();
        const bool ok = runChunks<tensordict::Moments>(
            total, request.threads, progress, 0.0, 0.5,
            [base, item, dtype = request.dtype](std::int64_t b, std::int64_t e) {
                return tensordict::momentsOfElements(base + std::size_t(b) * item, dtype, e - b);
            },
            merge, lost);
        return passEnd(ok, lost);
    }
    const bool ok = reader.dispatch([&](auto get) {
        return runChunks<tensordict::Moments>(
            total, request.threads, progress, 0.0, 0.5,
            [&get](std::int64_t b, std::int64_t e) { return tensordict::momentsOf(b, e, get); },
            merge, lost);
    });
    return passEnd(ok, lost);
}

// Equal bins over [first, last] with numpy.histogram's edges: a value's bin
// is computed, then corrected by the edges as numpy corrects it.
class Bins {
public:
    Bins(int count, double first, double last)
        : count_(count),
          first_(first),
          last_(last),
          norm_(count / (last - first)),
          edges_(static_cast<std::size_t>(count) + 1) {
        const double step = (last - first) / count;
        for (int i = 0; i < count; ++i)
            edges_[static_cast<std::size_t>(i)] = double(i) * step + first;
        edges_[static_cast<std::size_t>(count)] = last;
    }

    int count() const { return count_; }
    double first() const { return first_; }
    double last() const { return last_; }

    // numpy's bin of a finite x within [first, last], edge rules included.
    std::size_t of(double x) const {
        auto k = std::clamp<std::int64_t>(static_cast<std::int64_t>((x - first_) * norm_), 0,
                                          count_ - 1);
        if (k > 0 && x < edges_[static_cast<std::size_t>(k)])
            --k;
        if (k < count_ - 1 && x >= edges_[static_cast<std::size_t>(k) + 1])
            ++k;
        return static_cast<std::size_t>(k);
    }

private:
    int count_;
    double first_, last_, norm_;
    std::vector<double> edges_;
};

// Floats: numpy.histogram(x, bins, range=(min, max)) on float64 values.
// Integers: bins of whole numbers, edges halfway between them (one bar per
// value when there are few values), so that no bin holds more values than
// its neighbour and none is empty by construction: equal bins over
// [min, max] would draw a comb. A requested range is taken as it is.
Bins binsFor(const Statistics& s, const StatisticsRequest& request) {
    int bins = std::max(1, request.bins);
    double first = s.min, last = s.max;
    if (request.range) {
        first = request.range->first, last = request.range->second;
        if (first == last)
            first -= 0.5, last += 0.5;
    } else if (tensordict::dtypeInfo(request.dtype).isIntegral() &&
               (!request.other.data || tensordict::dtypeInfo(request.otherDtype).isIntegral())) {
        const double values = s.max - s.min + 1;  // whole numbers from min to max
        const double width = std::ceil(values / bins);
        bins = static_cast<int>(std::ceil(values / width));
        first = s.min - 0.5;
        last = first + bins * width;
    } else if (first == last) {
        first -= 0.5, last += 0.5;
    }
    return Bins(bins, first, last);
}

// Any values: four interleaved sub-histograms, so that runs of equal bins
// do not wait on each other's increments, folded into one.
template <typename Get>
Histogram countValues(const Get& get, const Bins& bins, std::int64_t b, std::int64_t e) {
    Histogram lanes(static_cast<std::size_t>(bins.count()) * 4, 0);
    for (std::int64_t i = b; i < e; ++i) {
        const double x = get(i);
        if (std::isfinite(x))
            ++lanes[bins.of(x) * 4 + static_cast<std::size_t>(i & 3)];
    }
    Histogram folded(static_cast<std::size_t>(bins.count()), 0);
    for (std::size_t j = 0; j < lanes.size(); ++j)
        folded[j / 4] += lanes[j];
    return folded;
}

// float32 leaves into fewer than 255 bins: the top 20 bits of a value
// (sign, exponent, 11 mantissa bits) pick a narrow range of values. Where
// that whole range falls in one bin, a table gives the bin; the few ranges
// that straddle an edge (and NaN/Inf) take the exact path.
class Float32BinTable {
public:
    static constexpr int kPrefixBits = 20;

    explicit Float32BinTable(const Bins& bins)
        : bins_(bins), table_(std::size_t(1) << kPrefixBits) {
        for (std::uint32_t t = 0; t < table_.size(); ++t) {
            float a, b;
            const std::uint32_t lo = t << (32 - kPrefixBits),
                                hi = lo | ((1u << (32 - kPrefixBits)) - 1);
            std::memcpy(&a, &lo, 4);
            std::memcpy(&b, &hi, 4);
            if (!std::isfinite(a) || !std::isfinite(b)) {
                table_[t] = kExact;
                continue;
            }
            const std::size_t ka = bins.of(std::clamp(double(a), bins.first(), bins.last()));
            const std::size_t kb = bins.of(std::clamp(double(b), bins.first(), bins.last()));
            table_[t] = ka == kb ? static_cast<std::uint8_t>(ka) : kExact;
        }
    }

    // Elements [b, e) of `words`, four at a time into four lanes of counters.
    Histogram count(const std::uint32_t* words, std::int64_t b, std::int64_t e) const {
        const std::size_t bins = static_cast<std::size_t>(bins_.count());
        std::vector<std::uint32_t> h(bins * 4, 0);
        Histogram exact(bins, 0);
        std::uint32_t* h0 = h.data();
        std::uint32_t* h1 = h0 + bins;
        std::uint32_t* h2 = h1 + bins;
        std::uint32_t* h3 = h2 + bins;
        auto slow = [&](std::uint32_t w) {
            float x;
            std::memcpy(&x, &w, 4);
            if (std::isfinite(x))
                ++exact[bins_.of(x)];
        };
        std::int64_t i = b;
        for (; i + 4 <= e; i += 4) {
            const std::uint32_t w0 = words[i], w1 = words[i + 1], w2 = words[i + 2],
                                w3 = words[i + 3];
            const std::uint8_t k0 = binOf(w0), k1 = binOf(w1), k2 = binOf(w2), k3 = binOf(w3);
            if (k0 != kExact && k1 != kExact && k2 != kExact && k3 != kExact) {
                ++h0[k0], ++h1[k1], ++h2[k2], ++h3[k3];
                continue;
            }
            for (const auto& [k, w] : {std::pair{k0, w0}, {k1, w1}, {k2, w2}, {k3, w3}}) {
                if (k != kExact)
                    ++h0[k];
                else
                    slow(w);
            }
        }
        for (; i < e; ++i) {
            const std::uint8_t k = binOf(words[i]);
            if (k != kExact)
                ++h0[k];
            else
                slow(words[i]);
        }
        for (std::size_t j = 0; j < h.size(); ++j)
            exact[j % bins] += h[j];  // four lanes of `bins` counters
        return exact;
    }

private:
    static constexpr std::uint8_t kExact = 0xFF;

    std::uint8_t binOf(std::uint32_t word) const { return table_[word >> (32 - kPrefixBits)]; }

    const Bins& bins_;
    std::vector<std::uint8_t> table_;
};

// The histogram pass (the second half of the progress), into `histogram`.
PassEnd histogramPass(const StatisticsRequest& request, const Reader& reader, const Bins& bins,
                      const std::function<bool(double)>& progress, Histogram& histogram) {
    histogram.assign(static_cast<std::size_t>(bins.count()), 0);
    auto merge = [&histogram](const Histogram& h) {
        for (std::size_t i = 0; i < h.size(); ++i)
            histogram[i] += h[i];
    };
    std::atomic<bool> lost{false};
    const std::int64_t total = reader.size();
    const bool plain = !request.slice && !request.other.data;
    if (plain && request.dtype == DType::Float32 && bins.count() < 255) {
        const Float32BinTable table(bins);
        const auto* words = reinterpret_cast<const std::uint32_t*>(request.bytes.data.get());
        const bool ok = runChunks<Histogram>(
            total, request.threads, progress, 0.5, 0.5,
            [&](std::int64_t b, std::int64_t e) { return table.count(words, b, e); }, merge, lost);
        return passEnd(ok, lost);
    }
    const bool ok = reader.dispatch([&](auto get) {
        return runChunks<Histogram>(
            total, request.threads, progress, 0.5, 0.5,
            [&](std::int64_t b, std::int64_t e) { return countValues(get, bins, b, e); }, merge,
            lost);
    });
    return passEnd(ok, lost);
}

// Marks `s` as the pass ended; false when it did not end done.
bool settle(Statistics& s, PassEnd end) {
    s.cancelled = end == PassEnd::Cancelled;
    s.sourceChanged = end == PassEnd::SourceChanged;
    return end == PassEnd::Done;
}

}  // namespace

Statistics computeStatistics(const StatisticsRequest& request,
                             const std::function<bool(double)>& progress) {
    Statistics s;
    const Reader reader(request);
    const std::int64_t total = reader.size();
    if (!request.bytes.data || total == 0) {
        s.count = total;
        return s;
    }
    // A leaf read page by page: its pages filled first, held while read.
    const TensorSlice::Span span =
        request.slice ? request.slice->span() : TensorSlice::Span{0, request.numel};
    const SliceHold held = requireSpan(request.bytes, request.dtype, span),
                    heldOther = requireSpan(request.other, request.otherDtype, span);
    if (held.cancelled || heldOther.cancelled) {
        s.cancelled = true;
        return s;
    }
    if (held.failed() || heldOther.failed()) {
        s.sourceChanged = true;  // the pages say why
        return s;
    }
    tensordict::Moments all;
    if (!settle(s, momentsPass(request, reader, progress, all)))
        return s;
    s.count = all.count, s.finite = all.finite, s.nans = all.nans, s.infs = all.infs,
    s.zeros = all.zeros;
    if (all.finite == 0)
        return s;
    s.min = all.min, s.max = all.max, s.mean = all.mean;
    s.std = all.populationStd();
    s.sampleStd = all.sampleStd();
    if (request.bins <= 0)
        return s;
    const Bins bins = binsFor(s, request);
    s.histogramLow = bins.first(), s.histogramHigh = bins.last();
    settle(s, histogramPass(request, reader, bins, progress, s.histogram));
    return s;
}
