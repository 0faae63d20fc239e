// A Hugging Face sharded model (formats/sharded.h): its shards, what the
// index names that is missing, and what it does not name.

#include "check/checker.h"

#include <filesystem>
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
    bool whole = true;
    for (const Node* child : td.root().children())
        if (child->isError() && !(whole = false))
            cannotRead(*child->failure(),
                       child->failure()->reason +
                           ". transformers refuses to load a model with a tensor missing; restore "
                           "the shard from the model's source.",
                       child->keyPath());
    for (const auto& [shard, tensor] : facts.unindexed)
        warning("orphan", store->container().describe(shard),
                "the shard holds \"" + tensor + "\", which " + facts.indexName +
                    " does not give it: loaders never read this copy (a tensor in two shards, "
                    "or one the index forgot)",
                {tensor});
    // Writers count tied weights once (huggingface_hub) or each time.
    if (whole && facts.totalSize && *facts.totalSize != facts.indexedBytes &&
        *facts.totalSize != facts.storageBytes)
        warning("total_size", store->container().describe(facts.indexName),
                "metadata.total_size is " + std::to_string(*facts.totalSize) +
                    " bytes, but the tensors the index names hold " +
                    std::to_string(facts.indexedBytes) +
                    ": loaders do not use it, tools that plan memory by it are misled");
    // Shards in the folder that the index does not name (local folders only:
    // a server is never listed).
    std::error_code ec;
    const std::set<std::string> named(facts.shards.begin(), facts.shards.end());
    const bool binIndex = facts.indexName.rfind("pytorch_model", 0) == 0;
    for (const auto& entry : fs::directory_iterator(store->container().location(), ec)) {
        const std::string name = entry.path().filename().string();
        const std::string ext = binIndex ? ".bin" : ".safetensors";
        if (name.size() > ext.size() && name.find("-of-") != std::string::npos &&
            name.compare(name.size() - ext.size(), ext.size(), ext) == 0 && !named.count(name))
            warning("orphan", store->container().describe(name),
                    "a shard that " + facts.indexName +
                        " does not name: loaders never read it (left over from another save?)");
    }
}

}  // namespace tensordict::checking
