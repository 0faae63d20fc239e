#pragma once

// What a sharded model's tree does not show, for --check (check/sharded_check.cpp): the
// shards the index names, the tensors a shard holds that the index does not
// give it, and the index's total_size against the bytes it names.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tensordict/store.h"

namespace tensordict {

struct ShardedModelFacts {
    std::string indexName;            // "model.safetensors.index.json"
    std::vector<std::string> shards;  // as the index names them, in order
    // (shard, tensor) pairs the index does not put there: never loaded.
    std::vector<std::pair<std::string, std::string>> unindexed;
    std::optional<std::uint64_t> totalSize;  // the index's metadata.total_size
    std::uint64_t indexedBytes = 0;          // the bytes of the tensors it names, as read
    // The same with the tensors that share a storage in their shard (tied
    // weights in a .bin shard) counted once, as huggingface_hub counts them.
    std::uint64_t storageBytes = 0;
};

// The facts of a sharded model's store once its tree was built; nullopt for
// any other store.
std::optional<ShardedModelFacts> shardedModelFacts(const Store& store);

}  // namespace tensordict
