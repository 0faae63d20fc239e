#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tensordict/error.h"
#include "tensordict/node.h"
#include "tensordict/store_options.h"

namespace tensordict {

struct LoadOptions {
    // Keys to descend into before loading (Python's `subpath`).
    std::vector<std::string> subpath;
    // Look files up by their robust (percent-encoded) names, falling back to
    // legacy raw names for safe keys, as Python does.
    bool robustKey = true;
    // true: the first problem throws Error. false: unreadable parts become
    // NodeKind::Error nodes and the rest of the tree still loads.
    bool throwOnError = true;
    // Largest meta.json or pickle sidecar read, in bytes.
    std::uint64_t maxMetadataBytes = 64ull << 20;
    // How the store reads its container: caches, mapping, what a shard or
    // a replay buffer opens as.
    StoreOptions store{};
};

// One loaded tensordict: its tree and the storage it maps.
class TensorDict {
public:
    const Node& root() const { return *root_; }
    const std::string& path() const { return path_; }
    // The container format it was read from, for people: "directory", "archive", ...
    const std::string& format() const { return format_; }
    // The store it was read from (null for one built in memory): code asks
    // it what the format is (Store::ownContainer(), datasets.h's facts).
    const std::shared_ptr<const Store>& store() const { return store_; }
    // Every error node, in tree order.
    std::vector<const Node*> errors() const;

    // An empty TensorDict to build in memory, then save().
    static TensorDict create(std::vector<std::int64_t> batchSize = {});
    // The root for building; throws Error if the tree is locked.
    Node& mutableRoot();
    // Trees returned by save() are locked, as in Python.
    bool isLocked() const { return root_ && root_->isLocked(); }
    // Wraps a finished tree (used by the writers).
    static TensorDict adopt(std::shared_ptr<Node> root, std::string path, std::string format,
                            std::shared_ptr<const Store> store = nullptr);

private:
    std::shared_ptr<Node> root_;
    std::string path_;
    std::string format_ = "directory";
    std::shared_ptr<const Store> store_;
};

// Python's td.select(*keys): a new tree with only the subtrees at `keyPaths`
// (and the nodes leading to them). Leaves share their source. Throws Error
// naming a key path that does not exist.
TensorDict select(const TensorDict& td, const std::vector<std::vector<std::string>>& keyPaths);

// `td`'s root as the child `key` of a new, empty TensorDict (batch size []):
// how a file of one tensor (an .npy, a bare .pt) is saved as a tensordict.
// The leaf shares its source. Throws Error for an empty key.
TensorDict underKey(const TensorDict& td, const std::string& key);

// The same tree for display, with flat dotted keys (a state_dict's
// "layer1.0.conv.weight") grouped by their dots: key groups (Node::isKeyGroup)
// "layer1." > "layer1.0." > "layer1.0.conv." hold the leaf, whose key stays
// "layer1.0.conv.weight". Key paths, find() and every leaf's bytes are those
// of `td`; only the nesting shown differs.
TensorDict groupKeysByDots(const TensorDict& td);

// Reads a memmap directory or a .tdz archive (told apart by content), at a
// local path or any location a registered transport serves (source.h).
// Builds the tree from metadata only; leaf data is mapped lazily.
TensorDict load(const std::string& path, const LoadOptions& options = {});

}  // namespace tensordict
