#include "key_index.h"

#include <algorithm>

#include "node_text.h"

using tensordict::Node;
using tensordict::NodeKind;

std::shared_ptr<const KeyIndex> KeyIndex::build(std::shared_ptr<const tensordict::TensorDict> td) {
    auto index = std::make_shared<KeyIndex>();
    index->td_ = std::move(td);
    if (index->td_)
        index->add(index->td_->root());
    return index;
}

std::uint64_t KeyIndex::add(const Node& node) {
    if (node.parent()) {  // the root is labelled with the file name: never matched
        nodes_.push_back(&node);
        starts_.push_back(foldedKeys_.size());
        foldedKeys_ += nodetext::displayKey(node.key()).toCaseFolded();
        foldedKeys_ += QLatin1Char('\n');
    }
    if (node.isTensor())
        return node.leaf().dataBytes();
    std::uint64_t total = 0;
    for (const auto& child : node.children())
        total += add(*child);
    collectionBytes_.emplace(&node, total);
    return total;
}

std::size_t KeyIndex::entryAt(qsizetype at) const {
    const auto next = std::upper_bound(starts_.begin(), starts_.end(), at);
    return static_cast<std::size_t>(next - starts_.begin()) - 1;
}

std::optional<std::uint64_t> KeyIndex::collectionBytes(const Node* node) const {
    const auto it = collectionBytes_.find(node);
    if (it == collectionBytes_.end())
        return std::nullopt;
    return it->second;
}
