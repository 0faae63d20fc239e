#pragma once

#include <QString>
#include <QStringList>
#include <cstdint>
#include <vector>

#include "tensordict/cancel.h"
#include "tensordict/datasets.h"
#include "tensordict/node.h"

// What takes the space under a collection (the root, a TensorDict, a
// tensorclass, a lazy stack), from metadata only: no leaf byte is read.
struct CollectionSummary {
    struct Entry {  // a key and the tensor bytes under it
        QStringList keyPath;
        QString label;  // as shown: the key, or the path below the collection
        QString kind;   // tensor, TensorDict, lazy stack, ...
        std::uint64_t bytes = 0;
    };
    struct DTypeBytes {
        QString dtype;  // "float32"
        std::uint64_t bytes = 0;
        std::int64_t leaves = 0;
    };
    struct StorageBytes {
        tensordict::StorageKind kind = tensordict::StorageKind::None;
        QString name;                   // "file", "stored entry", "compressed entry"
        std::uint64_t bytes = 0;        // as tensors (uncompressed)
        std::uint64_t storedBytes = 0;  // on disk
        std::int64_t leaves = 0;
        double compressionRatio() const {  // uncompressed / on disk; 0 when nothing is stored
            return storedBytes > 0 ? double(bytes) / double(storedBytes) : 0.0;
        }
    };
    // A file the leaves' bytes are in, where they span several (the shards
    // of a model, a distributed checkpoint's .distcp files).
    struct FileBytes {
        QString location;         // as the store names it
        QString name;             // its base name
        std::uint64_t bytes = 0;  // of tensors (a DCP chunk: its part of the tensor)
        std::int64_t leaves = 0;  // leaves with bytes in it
    };
    struct Problem {
        QStringList keyPath;
        QString text;
    };

    QStringList keyPath;  // of the collection ({} for the root)
    QString className;
    std::vector<std::int64_t> batchSize;
    std::uint64_t totalBytes = 0;
    std::int64_t keys = 0;     // every node below, at any depth
    std::int64_t ownKeys = 0;  // the collection's own keys (a key group's children are its own)
    // A TensorDict, tensorclass, stack or view has a batch size; a
    // checkpoint's dict, list or object has none: its kind is said instead.
    bool hasBatchSize = true;
    QString kind;                         // "container", "object"
    std::int64_t leaves = 0;              // tensor leaves
    std::int64_t nonTensors = 0;          // NonTensorData and NonTensorStack
    std::int64_t collections = 0;         // nested TensorDicts, tensorclasses, stacks, views
    std::vector<Entry> largestChildren;   // direct children, largest first
    std::vector<Entry> largestLeaves;     // tensor leaves at any depth, largest first
    std::vector<DTypeBytes> byDType;      // largest first
    std::vector<StorageBytes> byStorage;  // largest first
    std::vector<FileBytes> byFile;        // largest first; empty when all are in one file
    std::vector<Problem> problems;        // the first kMaxProblems, in tree order
    std::int64_t problemCount = 0;        // all of them
    bool cancelled = false;
    // The root of a dataset made of several tensordicts (datasets.h): what
    // it is, one fact a line ("capacity 1000 rows, 640 valid"), and a TED
    // replay buffer's episodes (read from two leaves).
    QStringList datasetFacts;
    std::vector<tensordict::Episode> episodes;
    QString episodeError;  // why the episodes could not be read

    static constexpr int kMaxProblems = 200;
};

// Walks `collection`'s subtree (metadata only, but for a replay buffer's
// episodes; safe on a worker thread while
// the tree is shown). `top`: how many children and leaves to keep. Stops
// early, marked cancelled, once `cancel` becomes true.
CollectionSummary summarizeCollection(const tensordict::Node& collection, int top = 10,
                                      const tensordict::CancelToken& cancel = {});
