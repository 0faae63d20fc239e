#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "tensor_slice.h"
#include "tensordict/node.h"

// Summary statistics of a leaf or of one slice of it. NaN and ±Inf are
// counted apart; min, max, mean, std (population) and the histogram are over
// the finite values. Complex values count by magnitude, bool as 0/1.
struct Statistics {
    std::int64_t count = 0;  // all elements
    std::int64_t finite = 0;
    std::int64_t nans = 0;
    std::int64_t infs = 0;
    std::int64_t zeros = 0;
    double min = 0, max = 0, mean = 0;
    double std = 0;        // population (numpy's default, ddof=0), of the finite values
    double sampleStd = 0;  // sample (torch.std's default, ddof=1); 0 for fewer than two
    // Equal bins over [histogramLow, histogramHigh]: for floats [min, max] with
    // numpy's edges and rounding; for integers whole numbers (edges at halves).
    std::vector<std::int64_t> histogram;
    double histogramLow = 0, histogramHigh = 0;
    bool cancelled = false;
    bool sourceChanged = false;  // the mapped file shrank or vanished while it was read
};

struct StatisticsRequest {
    tensordict::DType dtype = tensordict::DType::Float32;
    tensordict::LeafBytes bytes;
    std::optional<TensorSlice> slice;  // nullopt: the whole leaf
    std::int64_t numel = 0;            // elements of the whole leaf
    int threads = 1;
    int bins = 64;  // 0: summary only (no histogram pass)
    // The histogram's equal bins over [low, high] whatever this leaf's
    // values, which must lie within it: histograms of several leaves (a
    // key at every step) on one axis.
    std::optional<std::pair<double, double>> range;
    // With `other` (the same shape): the statistics of bytes - other, element
    // by element (complex: the magnitude of the difference).
    tensordict::DType otherDtype = tensordict::DType::Float32;
    tensordict::LeafBytes other;
};

// Computes in chunks (memory stays bounded; the bytes are read in place) on
// `threads` threads. `progress(fraction)` is called from the calling thread
// after each window of 2 x threads chunks and returns false to cancel.
Statistics computeStatistics(const StatisticsRequest& request,
                             const std::function<bool(double)>& progress = {});
