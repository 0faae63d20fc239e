// A Hugging Face sharded model (formats/sharded.h): its shards, what the
// index names that is missing, and what it does not name.

#include "check/checker.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "formats/sharded.h"
#include "tree/loader.h"
#include "writing/atomic_file.h"

namespace tensordict::checking {

namespace fs = std::filesystem;

void Checker::checkShardedModel(const std::shared_ptr<const Store>& store) {
    report_.format = "sharded";
    const TensorDict td = loadStore(store, {});
    const ShardedModelFacts facts = *shardedModelFacts(*store);
    // Every shard that is there is read once, whole, by range.
    std::vector<std::string> present;
    for (const std::string& shard : facts.shards)
        if (store->container().stat(shard))
            present.push_back(shard);
    checkDirectoryFiles(store->container().location(), present);
    report_.files = facts.shards.size() + 1;
    readData();
    if (report_.cancelled)
        return;
    // Where the index's shard lacks a tensor another shard holds, which
    // transformers (every shard whole) loads, and a loader by the index misses.
    std::map<std::string, std::string> heldElsewhere;
    for (const ShardedModelFacts::Unindexed& u : facts.unindexed)
        if (u.indexShardLacksIt)
            heldElsewhere.emplace(u.tensor, u.shard);
    bool whole = true;
    for (const Node* child : td.root().children()) {
        if (!child->isError())
            continue;
        whole = false;
        const auto elsewhere = heldElsewhere.find(child->key());
        cannotRead(*child->failure(),
                   child->failure()->reason +
                       (elsewhere == heldElsewhere.end()
                            ? ". transformers refuses to load a model with a tensor missing; "
                              "restore the shard from the model's source."
                            : ". " + elsewhere->second +
                                  " holds it: transformers, which loads every shard whole, "
                                  "gives a model that copy, and loaders that go by the index "
                                  "fail; fix the index."),
                   child->keyPath());
    }
    for (const ShardedModelFacts::Unindexed& u : facts.unindexed) {
        if (u.indexShardLacksIt)
            continue;  // said with the tensor's error
        if (u.indexShard.empty()) {
            warning("orphan", store->container().describe(u.shard),
                    "the shard holds \"" + u.tensor + "\", which " + facts.indexName +
                        " does not name: it is no tensor of the model here, nor for loaders "
                        "that go by the index; transformers, which loads every shard whole, "
                        "loads it too (a tensor the index forgot, or one left over)",
                    {u.tensor});
            continue;
        }
        // transformers loads the shards in the order of their names, each
        // whole: of the copies, the model gets the last one.
        std::string loaded = u.indexShard;
        for (const ShardedModelFacts::Unindexed& other : facts.unindexed)
            if (other.tensor == u.tensor)
                loaded = std::max(loaded, other.shard);
        warning("two_copies", store->container().describe(u.shard),
                "the shard holds \"" + u.tensor + "\" too, which " + facts.indexName +
                    " gives to " + u.indexShard +
                    " (shown here): transformers, which loads every "
                    "shard whole in the order of their names, gives a model " +
                    (loaded == u.indexShard ? std::string("that copy")
                                            : "the copy in " + loaded + ", not the one shown"),
                {u.tensor});
    }
    // transformers' get_checkpoint_shard_files reads index["metadata"] as a dict.
    if (!facts.hasMetadata)
        warning("index", store->container().describe(facts.indexName),
                "the index has no \"metadata\" object: transformers' from_pretrained fails on "
                "it, where other loaders read the model");
    // Writers count tied weights once or each time, a storage whole or as
    // its first tensor (ShardedModelFacts).
    if (whole && facts.totalSize && *facts.totalSize != facts.indexedBytes &&
        *facts.totalSize != facts.storageBytes && *facts.totalSize != facts.firstViewBytes)
        warning("total_size", store->container().describe(facts.indexName),
                "metadata.total_size is " + std::to_string(*facts.totalSize) +
                    " bytes, but the tensors the index names hold " +
                    std::to_string(facts.indexedBytes) +
                    ": loaders do not use it, tools that plan memory by it are misled");
    // Shards in the folder that the index does not name (local folders only:
    // a server is never listed).
    std::error_code ec;
    const std::set<std::string> named(facts.shards.begin(), facts.shards.end());
    const std::string prefix = facts.shardStem + "-";
    for (const auto& entry : fs::directory_iterator(store->container().location(), ec)) {
        const std::string name = entry.path().filename().string();
        const std::string& ext = facts.shardExtension;
        if (!facts.shardStem.empty() && name.size() > prefix.size() + ext.size() &&
            name.compare(0, prefix.size(), prefix) == 0 &&
            name.find("-of-", prefix.size()) != std::string::npos &&
            name.compare(name.size() - ext.size(), ext.size(), ext) == 0 && !named.count(name))
            warning("orphan", store->container().describe(name),
                    std::find(facts.replacedShards.begin(), facts.replacedShards.end(), name) !=
                            facts.replacedShards.end()
                        ? "a shard that " + facts.indexName +
                              " names only in entries that later ones replace (a name given "
                              "twice): loaders never read it"
                        : "a shard that " + facts.indexName +
                              " does not name: loaders never read it (left over from another "
                              "save?)");
    }
}

}  // namespace tensordict::checking
