#pragma once

#include <QString>
#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "tensordict/tensordict.h"

// Every key of a tensordict in one flat list, built once per document off
// the GUI thread (Document's loader): what the key filter searches, and the
// bytes of tensors under every collection, so that the tree never walks a
// subtree to show a size. Immutable once built; shared with workers.
class KeyIndex {
public:
    // Walks the whole tree: call it on a worker thread.
    static std::shared_ptr<const KeyIndex> build(std::shared_ptr<const tensordict::TensorDict> td);

    const std::shared_ptr<const tensordict::TensorDict>& tensorDict() const { return td_; }
    // Every node but the root, in the tree's (depth-first) order.
    std::size_t size() const { return nodes_.size(); }
    const tensordict::Node* node(std::size_t entry) const { return nodes_[entry]; }
    // The display keys, case-folded, each followed by '\n' (never part of a
    // display key, so no match spans two keys); entry i starts at starts()[i].
    const QString& foldedKeys() const { return foldedKeys_; }
    const std::vector<qsizetype>& starts() const { return starts_; }
    // The entry whose key holds position `at` of foldedKeys().
    std::size_t entryAt(qsizetype at) const;

    // Bytes of all tensors under a collection (nullopt: not a collection of this tree).
    std::optional<std::uint64_t> collectionBytes(const tensordict::Node* node) const;

private:
    std::uint64_t add(const tensordict::Node& node);

    std::shared_ptr<const tensordict::TensorDict> td_;  // keeps the nodes alive
    std::vector<const tensordict::Node*> nodes_;
    std::vector<qsizetype> starts_;
    QString foldedKeys_;
    std::unordered_map<const tensordict::Node*, std::uint64_t> collectionBytes_;
};
