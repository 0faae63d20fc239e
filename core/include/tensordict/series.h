#pragma once

// A series of checkpoints compared along training steps: for every tensor
// key and every step, its figures and how it moved since the step before.
// Values are decoded to float64 (every dtype, float8 included); figures are
// over the finite values, NaN and Inf counted apart, as --stats counts them.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tensordict/cancel.h"
#include "tensordict/tensordict.h"

namespace tensordict {

struct StepFigures {
    std::int64_t count = 0, nans = 0, infs = 0;
    // Over the finite values: L2 norm, mean, population std, min, max
    // (nullopt when no value is finite).
    std::optional<double> norm, mean, std, min, max;
    // Against the step before, when both have the key with as many
    // elements: the largest |b - a| and the cosine similarity over the
    // positions finite in both (cosine: nullopt if either side is all
    // zero there), and the fraction of elements that changed (a NaN that
    // stays NaN did not).
    std::optional<double> maxAbsDelta, changedFraction, cosine;
};

struct SeriesKey {
    std::vector<std::string> key;
    std::vector<std::optional<StepFigures>> steps;  // nullopt: the step has no such tensor
};

struct SeriesReport {
    std::vector<std::string> steps;  // the locations, in order
    std::vector<SeriesKey> keys;     // every tensor key of any step, in order of first appearance
};

struct SeriesOptions {
    std::vector<std::vector<std::string>>
        keys;         // only these keys and what is under them; empty: all
    int threads = 0;  // 0: every core
    const CancelToken* cancel = nullptr;
    LoadOptions load;  // how each step is opened
    // Called from the reading threads as elements are read: how many of
    // them, at every step, are done of all.
    std::function<void(std::uint64_t done, std::uint64_t total)> progress;
};

// Opens every step and computes the figures of every tensor key. Each
// file is read once: a key's leaves are read piece by piece at every step
// in turn, a piece summed and compared with the step before's while both
// are in memory, on every core, in bounded memory. Throws Error naming the
// step that cannot be opened or read, or Cancelled.
SeriesReport compareAlongSteps(const std::vector<std::string>& locations,
                               const SeriesOptions& options = {});

// The members of a series given as a folder, in natural order ("step-9"
// before "step-10"), hidden ones left out: the largest group of its files
// and subfolders whose names are alike but for their numbers
// ("checkpoint-500", "checkpoint-1000"), so that what a run keeps beside
// its steps (a config.json, a log, the final model) is no step; text,
// TensorBoard event files and a model's shards are never steps. Every
// member when no two are alike so. Throws Error when two groups are the
// largest (ema_#.pt and model_#.pt), or nothing is left.
std::vector<std::string> seriesInFolder(const std::string& folder);

}  // namespace tensordict
