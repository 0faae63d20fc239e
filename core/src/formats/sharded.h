#pragma once

// What a sharded model's tree does not show, for --check (check/sharded_check.cpp): the
// shards the index names, the tensors a shard holds that the index does not
// give it, and the index's total_size against the bytes it names.

#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tensordict/store.h"

namespace tensordict {

struct ShardedModelFacts {
    std::string indexName;            // "model.safetensors.index.json"
    std::vector<std::string> shards;  // as the index names them, in order
    // Shards the index names only in entries that later ones replace (a name
    // given twice): no loader reads them.
    std::vector<std::string> replacedShards;
    // How the index's shards are named: "{stem}-0000K-of-0000N{extension}"
    // ("model", ".safetensors"); empty for an index named otherwise.
    std::string shardStem, shardExtension;
    // Tensors a shard holds that the index does not give it: no leaf of
    // the model. `indexShard` is the shard the index gives that name to
    // (a tensor in two shards), empty when it names no such tensor.
    struct Unindexed {
        std::string shard, tensor, indexShard;
        bool indexShardLacksIt = false;  // the index's shard does not hold it
        bool operator<(const Unindexed& o) const {
            return std::tie(shard, tensor) < std::tie(o.shard, o.tensor);
        }
    };
    std::vector<Unindexed> unindexed;
    bool hasMetadata = false;                // the index's "metadata" is an object
    std::optional<std::uint64_t> totalSize;  // the index's metadata.total_size
    // The bytes of the tensors the index names, as each writer counts them
    // for total_size: every tensor (save_pretrained's safetensors shards);
    // each storage they use once and whole (huggingface_hub: tied weights
    // and views of one fused storage in a .bin shard count once); each
    // storage once as its first tensor in the shard's order (transformers
    // 4.2x-4.43's shard_checkpoint: the storage's first tensor, numel x
    // size).
    std::uint64_t indexedBytes = 0;
    std::uint64_t storageBytes = 0;
    std::uint64_t firstViewBytes = 0;
};

// The facts of a sharded model's store once its tree was built; nullopt for
// any other store.
std::optional<ShardedModelFacts> shardedModelFacts(const Store& store);

}  // namespace tensordict
