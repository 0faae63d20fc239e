#pragma once

// Summary statistics of tensor values decoded to float64, for every dtype
// (float8 and the other dtypes libtorch 1.13 lacks included). NaN and ±Inf
// are counted apart; min, max, mean and std are over the finite values.
// Complex values count by magnitude, bool as 0/1.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "tensordict/cancel.h"
#include "tensordict/dtype.h"

namespace tensordict {

class Node;

// Running moments of a run of values; runs merge in any grouping with
// Chan's formula for the variance, so chunks can be summed on any thread.
struct Moments {
    std::int64_t count = 0, finite = 0, nans = 0, infs = 0, zeros = 0;
    double min = std::numeric_limits<double>::infinity();
    double max = -std::numeric_limits<double>::infinity();
    double mean = 0, m2 = 0;  // of the finite values; m2: sum of squared deviations

    void merge(const Moments& o);
    // Population (ddof=0, numpy's default) and sample (ddof=1, torch.std's) deviations.
    double populationStd() const { return finite ? std::sqrt(m2 / double(finite)) : 0.0; }
    double sampleStd() const { return finite > 1 ? std::sqrt(m2 / double(finite - 1)) : 0.0; }
};

// The moments of `get(i)` for i in [begin, end): sums taken about the first
// finite value, so that large offsets do not swamp the variance.
template <typename Get>
Moments momentsOf(std::int64_t begin, std::int64_t end, Get get) {
    Moments m;
    m.count = end - begin;
    double shift = 0, sum = 0, sumsq = 0;
    bool haveShift = false;
    for (std::int64_t i = begin; i < end; ++i) {
        const double x = get(i);
        m.zeros += x == 0;
        if (std::isnan(x)) {
            ++m.nans;
            continue;
        }
        if (std::isinf(x)) {
            ++m.infs;
            continue;
        }
        if (!haveShift)
            shift = x, haveShift = true;
        const double d = x - shift;
        sum += d;
        sumsq += d * d;
        m.min = std::min(m.min, x);
        m.max = std::max(m.max, x);
        ++m.finite;
    }
    if (m.finite && std::isfinite(sum) && std::isfinite(sumsq)) {
        const double n = double(m.finite);
        m.mean = shift + sum / n;
        m.m2 = std::max(0.0, sumsq - sum * sum / n);
    } else if (m.finite) {
        // Squares past the largest double (values beyond 1e154): again by
        // Welford's updates, whose mean stays finite and whose spread then
        // overflows to Inf, as numpy's does, instead of inf - inf.
        double mean = 0, m2 = 0;
        std::int64_t n = 0;
        for (std::int64_t i = begin; i < end; ++i) {
            const double x = get(i);
            if (!std::isfinite(x))
                continue;
            const double d = x - mean;
            mean += d / double(++n);
            m2 += d * (x - mean);
        }
        m.mean = mean;
        m.m2 = m2;
    }
    return m;
}

// The moments of `count` contiguous elements of `dtype` at `data` (little
// endian, as stored): fast paths for float32/float64 and a table for the
// one-byte dtypes (float8, int8, uint8, bool).
Moments momentsOfElements(const std::byte* data, DType dtype, std::int64_t count);

// What `--info --stats` reports of a leaf.
struct LeafStatistics {
    std::int64_t count = 0, finite = 0, nans = 0, infs = 0;
    double min = 0, max = 0, mean = 0, std = 0;  // population std; all 0 when no value is finite
};

// The statistics of a whole leaf, streamed in bounded memory (compressed
// entries inflated as they go, chunks gathered piece by piece) on `threads`
// threads (0: every core). Throws Error naming the leaf, or Cancelled.
LeafStatistics leafStatistics(const Node& leaf, int threads = 0,
                              const CancelToken* cancel = nullptr);

}  // namespace tensordict
