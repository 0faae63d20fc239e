#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensordict/node.h"

namespace tensordict {

// One file of a save, in the order it is written.
struct PlannedFile {
    std::string path;            // relative: "b/c.memmap"
    std::string keyText;         // the key path it belongs to, for messages
    std::string content;         // meta.json, pickle sidecars, nested shape tables
    const Node* leaf = nullptr;  // tensor data comes from this leaf instead
    std::uint64_t size = 0;
    bool isTensorData = false;  // a .memmap entry: compressible, 64-byte aligned in archives
    std::string outsideTarget;  // copied from a file out of the source's root (a symlink)

    // The bytes to write (the leaf's mapping, or `content`). Throws Error.
    LeafBytes bytes() const;
};

// Everything a save writes, computed once from the tree: the writers for
// directories, archives and memory all consume the same plan.
struct WritePlan {
    std::vector<std::string> directories;  // parents before children, "" excluded
    std::vector<PlannedFile> files;
    std::uint64_t totalBytes = 0;
    std::vector<std::string> skipped;  // key paths of objects left out (skipObjects)
};

enum class PlanOrder {
    Directory,  // Python's sequential order: a TensorDict's meta.json after its children
    // core/FORMAT.md 8.1: per directory meta.json, other files by name, then sub-directories
    Archive,
};

// Throws Error naming the key for what Python's format cannot carry; Python
// objects of a checkpoint are left out instead when `skipObjects`.
WritePlan makeWritePlan(const Node& root, bool robustKey, PlanOrder order,
                        bool skipObjects = false);

}  // namespace tensordict
