#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tensordict/error.h"
#include "tensordict/node.h"

namespace tensordict {

enum class SourceFormat { Directory, Archive };

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
};

// One loaded tensordict: its tree and the storage it maps.
class TensorDict {
public:
    const Node& root() const { return *root_; }
    const std::string& path() const { return path_; }
    SourceFormat format() const { return format_; }
    // Every error node, in tree order.
    std::vector<const Node*> errors() const;

private:
    friend TensorDict load(const std::string&, const LoadOptions&);
    std::shared_ptr<Node> root_;
    std::string path_;
    SourceFormat format_ = SourceFormat::Directory;
};

// Reads a memmap directory or a .tdz archive (told apart by content).
// Builds the tree from metadata only; leaf data is mapped lazily.
TensorDict load(const std::string& path, const LoadOptions& options = {});

}  // namespace tensordict
