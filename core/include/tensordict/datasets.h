#pragma once

// Datasets made of several tensordicts, opened as one tree: a TorchRL replay
// buffer dump (its storage's valid rows, oldest first, and its sampler's
// priorities) and a stack of chunks. Their stores gather each leaf's rows
// from the files where they are; these are the facts the tree cannot show.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tensordict/store.h"
#include "tensordict/value.h"

namespace tensordict {

// A folder written by TorchRL's ReplayBuffer.dumps(path), read as its
// samplers, writers and storages write it (core/FORMAT.md 18).
struct ReplayBufferFacts {
    std::int64_t capacity = 0;               // rows the storage holds (its first dimension)
    std::optional<std::int64_t> valid;       // storage_metadata.json "len"; nullopt: not written
    std::optional<std::int64_t> cursor;      // writer/metadata.json: the next row written
    std::optional<std::int64_t> writeCount;  // newer writers only: rows ever written
    std::optional<std::int64_t> batchSize;   // buffer_metadata.json (null: none)
    // Told by the files each leaves (class names are not on disk):
    // "PrioritizedSampler", "SamplerWithoutReplacement", "RandomSampler" (no
    // sampler/ folder), ...; "RoundRobinWriter", "TensorDictRoundRobinWriter",
    // "TensorDictMaxValueWriter", "ImmutableDatasetWriter" (no writer/).
    std::string sampler, writer;
    // As their files give them, with torchrl's names: alpha, beta, eps,
    // max_priority, max_capacity, schema_version; rank_key.
    Value::Object samplerParameters, writerParameters;
    // "torchrl after 0.13 (write_count)" when a file has a field only
    // newer versions write (write_count, _schema_version,
    // consume_after_n_samples, prefetch.pkl), "torchrl 0.3 to 0.13" otherwise.
    std::string layout;
    // The storage row of the oldest valid row: the cursor once the buffer
    // wrapped, 0 before. The valid rows are storage rows oldest, oldest + 1,
    // ... modulo capacity.
    std::int64_t oldestRow = 0;
    // Where the storage and the sum tree's priorities are, relative to the dump.
    std::string storageFolder = "storage";
    std::string priorityFile;           // "sampler/sumtree.memmap", "" without one
    std::int64_t priorityCapacity = 0;  // its leaves
    // What len counts: rows (1), or for an ndim=2 storage the elements of
    // each row's second dimension (len = rows x this).
    std::int64_t lenUnit = 1;
    // Pickled parts beside the data (transform.t, prefetch.pkl, ...), never
    // run, and what each holds as tdstudio's own unpickler reads it
    // ("{"version": 1, "capacity": 0, "queue": []}", "a checkpoint of 2
    // tensors: loc float32 [3], ..."), or why it cannot say.
    std::vector<std::string> pickledFiles;
    std::vector<std::string> pickledContents;

    // What shows: rows from `firstShownRow` on, `shownRows` of them
    // (StoreOptions::replayAllRows, replayStorageOrder).
    std::int64_t firstShownRow = 0, shownRows = 0;
    // Files that disagree (a len past the capacity, a cursor that is not
    // where len says the writer stopped, a sum tree of another capacity),
    // for --check: {file, what}, the file relative to the dump.
    struct Disagreement {
        bool error = true;  // false: worth a look, but torchrl may write it so
        // "replay_len", "replay_cursor", "replay_write_count", "replay_tree",
        // "replay_file" (a side file that cannot be read)
        std::string kind;
        std::string file;
        std::string what;
    };
    std::vector<Disagreement> disagreements;

    bool wrapped() const { return valid && *valid == capacity && oldestRow != 0; }
    // The storage row of the r-th row shown.
    std::int64_t storageRowOf(std::int64_t shown) const {
        return capacity ? (firstShownRow + shown) % capacity : shown;
    }
    // How many valid rows were written before a storage row's (0: the
    // oldest); past the valid ones for a row that is not valid.
    std::int64_t ageOf(std::int64_t storageRow) const {
        return capacity ? ((storageRow - oldestRow) % capacity + capacity) % capacity : storageRow;
    }
    bool isValid(std::int64_t storageRow) const { return !valid || ageOf(storageRow) < *valid; }
};

// The facts of a replay buffer's store once its tree was built; nullopt
// for any other store.
std::optional<ReplayBufferFacts> replayBufferFacts(const Store& store);

// One episode of a buffer in TorchRL's TED layout: a run of rows of one
// collector/traj_ids value, in the rows' order.
struct Episode {
    std::int64_t trajId = 0;
    std::int64_t firstRow = 0, length = 0;  // rows of the tree as shown
    double reward = 0;                      // the sum of next/reward (float64)
    // Not whole: it began before the buffer's oldest row (overwritten), or
    // it is the newest and its last row is not done.
    bool partial = false;
};
// The episodes of a tree with collector/traj_ids and next/reward (one value
// per row), in the rows' order, over a replay buffer's valid rows only;
// empty for any other tree. Reads the leaves. Throws Error.
std::vector<Episode> episodesOf(const Node& root);

// The replay buffer's and stack's facts as plain data, for --info --json:
// {"replay_buffer": {...}} or {"stack": {...}}; an empty object otherwise.
Value::Object datasetFactsValue(const Node& root);

// A folder of memmap tensordicts stacked along their first dimension.
struct StackChunk {
    std::string name;       // the chunk's folder, in the stack's folder
    std::int64_t rows = 0;  // its first batch dimension
};
struct StackFacts {
    std::vector<StackChunk> chunks;  // in natural order: the order of the rows

    // The chunk a row of the stack is in, and its row there; nullopt past the end.
    std::optional<std::pair<std::size_t, std::int64_t>> chunkOf(std::int64_t row) const {
        for (std::size_t i = 0; i < chunks.size() && row >= 0; ++i) {
            if (row < chunks[i].rows)
                return std::make_pair(i, row);
            row -= chunks[i].rows;
        }
        return std::nullopt;
    }
};
std::optional<StackFacts> stackFacts(const Store& store);

}  // namespace tensordict
