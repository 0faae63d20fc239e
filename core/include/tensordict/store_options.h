#pragma once

#include <cstdint>

#include "tensordict/transport_options.h"

namespace tensordict {

// How a store reads its container (LoadOptions::store).
struct StoreOptions {
    // Memory for compressed archive entries kept inflated (least recently
    // used dropped first). A larger entry is inflated into a temporary file
    // that is mapped instead of memory.
    std::uint64_t inflateCacheBytes = 512ull << 20;
    // Leaf files of a directory this large or larger are mapped; smaller
    // ones are read into memory (cheaper for small files, and no mapping).
    std::uint64_t mapLeavesFrom = 256u << 10;
    // A shard of a sharded model ("model-00001-of-00004.safetensors" beside
    // its index) opens the whole model; false opens the shard alone (as the
    // sharded model opens its shards).
    bool shardOpensModel = true;
    // A replay buffer dump shows its valid rows, oldest first: these show
    // every row of its storage, or the rows in storage order (datasets.h).
    bool replayAllRows = false;
    bool replayStorageOrder = false;
    // How remote locations are reached (certificates, credentials, cache).
    TransportOptions transport{};
};

}  // namespace tensordict
