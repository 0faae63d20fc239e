#pragma once

// The one way to fill in a Node's fields: the loader builds trees with it
// from a store's metadata (and save() locks the trees it returns). Nodes
// are otherwise read-only, but for their own add*() builders.

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tensordict/node.h"

namespace tensordict {

class NodeBuilder {
public:
    explicit NodeBuilder(Node& node) : node_(node) {}

    static std::unique_ptr<Node> create(NodeKind kind, std::string key);
    static std::unique_ptr<Node> error(std::string key, Failure failure);
    // The node without its children (unlocked; a shared value becomes plain).
    static std::unique_ptr<Node> shallowCopy(const Node& from);

    Node& node() { return node_; }
    // Before the node joins a parent (its key indexes the parent's children).
    void setKey(std::string key);
    // How the source spells a key that is not a str (a dict's int 0): Node::keyRepr().
    void setKeyRepr(std::string repr);
    void setKind(NodeKind kind);  // keeps the per-kind record when the kind needs the same
    void setClass(std::string className, std::string typeString);
    void setBatchSize(std::vector<std::int64_t> batchSize);
    void setDevice(std::optional<std::string> device);
    void setDirectory(std::string directory);
    void setStore(std::shared_ptr<const Store> store);
    // The per-kind record, as setKind() chose it.
    TensorLeaf& leaf();
    Collection& collection();
    NonTensor& nonTensor();
    void setValue(Value value);
    const Value& rawValue() const;
    void adoptBytes(LeafBytes bytes);

    // Room for `count` children in all, when a builder knows how many come.
    void reserveChildren(std::size_t count);
    // Adds a child at the end (a repeated key: child() finds the first).
    Node& append(std::unique_ptr<Node> child);
    // Adds or replaces the child with the same key.
    Node& put(std::unique_ptr<Node> child);
    Node* child(std::string_view key);
    Node& childAt(std::size_t i);
    void clearChildren();
    std::vector<std::unique_ptr<Node>> takeChildren();

    // Locks the subtree (save()'s result); with shareNonTensor every
    // non-tensor value moves to shared memory.
    void lockAndShare(bool shareNonTensor);

private:
    Node& node_;
};

}  // namespace tensordict
