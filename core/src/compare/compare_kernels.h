#pragma once

// The element kernels of compare() (tensordict/compare.h): two ranges of
// elements of any two dtypes compared as torch.testing.assert_close does,
// after promotion (integers exactly, floating point in float64, complex as
// pairs), the differing elements tallied. compare.cpp walks the trees and
// reads the leaves; this is what it runs on their bytes.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "tensordict/compare.h"
#include "tensordict/dtype.h"

namespace tensordict {

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

// Compares n elements of a and b (flat indices base, base + 1, ...),
// tallying the differing ones; with firstOnly, stops at the first. True
// when it stopped there.
bool compareRange(const std::byte* a, DType aType, const std::byte* b, DType bType, std::size_t n,
                  std::int64_t base, const Tolerance& t, bool firstOnly, Tally& tally);

}  // namespace tensordict
