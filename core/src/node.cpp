#include "tensordict/node.h"

#include <algorithm>

#include "tensordict/error.h"
#include "tensordict/keys.h"
#include "tensordict/store.h"

namespace tensordict {

std::string_view kindName(NodeKind kind) {
    switch (kind) {
        case NodeKind::TensorDict:
            return "TensorDict";
        case NodeKind::TensorClass:
            return "tensorclass";
        case NodeKind::LazyStack:
            return "lazy stack";
        case NodeKind::View:
            return "view";
        case NodeKind::Tensor:
            return "tensor";
        case NodeKind::NonTensorData:
            return "non-tensor";
        case NodeKind::NonTensorStack:
            return "non-tensor stack";
        case NodeKind::Error:
            return "error";
    }
    return "?";
}

std::string_view storageKindName(StorageKind kind) {
    switch (kind) {
        case StorageKind::None:
            return "none";
        case StorageKind::File:
            return "file";
        case StorageKind::StoredEntry:
            return "stored entry";
        case StorageKind::CompressedEntry:
            return "compressed entry";
        case StorageKind::Memory:
            return "memory";
    }
    return "?";
}

bool Node::isCollection() const {
    return kind == NodeKind::TensorDict || kind == NodeKind::TensorClass ||
           kind == NodeKind::LazyStack || kind == NodeKind::View;
}

std::vector<std::string> Node::keyPath() const {
    std::vector<std::string> path;
    for (const Node* n = this; n && n->parent; n = n->parent)
        path.push_back(n->key);
    return {path.rbegin(), path.rend()};
}

const Node* Node::child(std::string_view k) const {
    for (const auto& c : children)
        if (c->key == k)
            return c.get();
    return nullptr;
}

const Node* Node::find(const std::vector<std::string>& path) const {
    const Node* n = this;
    for (const auto& k : path) {
        n = n->child(k);
        if (!n)
            return nullptr;
    }
    return n;
}

bool Node::isMaterialized() const {
    if (storage.kind == StorageKind::CompressedEntry && store)
        return store->isResident(storage);
    std::lock_guard<std::mutex> lock(mutex_);
    return bytes_.has_value() || !inUse_.expired();
}

std::string Node::integrityWarning() const {
    return store && kind == NodeKind::Tensor ? store->integrityProblem(storage) : std::string();
}

std::optional<std::uint64_t> Node::payloadOffset() const {
    if (kind != NodeKind::Tensor || !store || storage.kind == StorageKind::None)
        return std::nullopt;
    return store->payloadOffset(storage);
}

LeafBytes Node::bytes() const {
    if (kind != NodeKind::Tensor)
        throw Error(formatKeyPath(keyPath()), "not a tensor leaf");
    const auto held = [this]() -> std::optional<LeafBytes> {
        if (bytes_)
            return *bytes_;
        if (auto data = inUse_.lock())
            return LeafBytes{std::move(data), static_cast<std::size_t>(nbytes)};
        return std::nullopt;
    };
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (auto b = held())
            return *b;
    }
    if (storage.kind == StorageKind::None || nbytes == 0)
        return {};
    if (!store)
        throw Error(formatKeyPath(keyPath()), "leaf has no storage");
    // Read without holding the lock (it may take long); if two threads race,
    // the first result is shared.
    LeafBytes fresh = store->leafBytes(storage, nbytes, itemSize(dtype));
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto b = held())
        return *b;
    inUse_ = fresh.data;
    return fresh;
}

LeafBytes Node::pinnedBytes() const {
    LeafBytes b = bytes();
    std::lock_guard<std::mutex> lock(mutex_);
    if (!bytes_)
        bytes_ = b;
    return *bytes_;
}

std::unique_ptr<Node> Node::clone(Node* newParent) const {
    auto n = std::make_unique<Node>();
    n->kind = kind;
    n->key = key;
    n->parent = newParent;
    n->className = className;
    n->typeString = typeString;
    n->batchSize = batchSize;
    n->device = device;
    n->stackDim = stackDim;
    n->attributes = attributes;
    n->directory = directory;
    n->dtype = dtype;
    n->shape = shape;
    n->numel = numel;
    n->nbytes = nbytes;
    n->isNested = isNested;
    n->nestedShapes = nestedShapes;
    n->storage = storage;
    n->data = value();
    n->pickleFile = pickleFile;
    n->pickleOpaque = pickleOpaque;
    n->error = error;
    n->store = store;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        n->bytes_ = bytes_;
    }
    for (const auto& c : children)
        n->children.push_back(c->clone(n.get()));
    return n;
}

void Node::adoptBytes(LeafBytes b) {
    std::lock_guard<std::mutex> lock(mutex_);
    bytes_ = std::move(b);
}

void Node::checkUnlocked() const {
    for (const Node* n = this; n; n = n->parent)
        if (n->locked)
            throw Error(formatKeyPath(keyPath()), "the tensordict is locked");
    if (!isCollection())
        throw Error(formatKeyPath(keyPath()), "only collections can hold keys");
}

Node& Node::insertChild(std::unique_ptr<Node> child) {
    child->parent = this;
    for (auto& c : children) {
        if (c->key == child->key) {
            c = std::move(child);
            return *c;
        }
    }
    children.push_back(std::move(child));
    return *children.back();
}

Node& Node::addBytes(const std::string& key, DType dtype, std::vector<std::int64_t> shape,
                     LeafBytes bytes) {
    checkUnlocked();
    const std::string where = formatKeyPath(keyPath()) + (keyPath().empty() ? "" : "/") + key;
    if (shape.size() < batchSize.size() ||
        !std::equal(batchSize.begin(), batchSize.end(), shape.begin()))
        throw Error(where, "tensor shape does not start with the batch size");
    auto leaf = std::make_unique<Node>();
    leaf->kind = NodeKind::Tensor;
    leaf->key = key;
    leaf->dtype = dtype;
    leaf->className = std::string(dtypeName(dtype));
    leaf->device = "cpu";
    leaf->shape = std::move(shape);
    leaf->numel = 1;
    for (auto d : leaf->shape) {
        if (d < 0)
            throw Error(where, "negative dimension");
        if (d != 0 && leaf->numel > INT64_MAX / d)
            throw Error(where, "too many elements");
        leaf->numel *= d;
    }
    leaf->nbytes = static_cast<std::uint64_t>(leaf->numel) * itemSize(dtype);
    if (bytes.size != leaf->nbytes)
        throw Error(where, "got " + std::to_string(bytes.size) + " bytes for a leaf of " +
                               std::to_string(leaf->nbytes));
    leaf->storage.kind = leaf->nbytes ? StorageKind::Memory : StorageKind::None;
    leaf->storage.size = leaf->nbytes;
    leaf->adoptBytes(std::move(bytes));
    return insertChild(std::move(leaf));
}

Node& Node::addTensorDict(const std::string& key) {
    checkUnlocked();
    auto child = std::make_unique<Node>();
    child->key = key;
    child->className = "TensorDict";
    child->typeString = "<class 'tensordict._td.TensorDict'>";
    child->batchSize = batchSize;
    child->device = device;
    return insertChild(std::move(child));
}

Node& Node::addNonTensor(const std::string& key, Value value) {
    checkUnlocked();
    auto child = std::make_unique<Node>();
    child->kind = NodeKind::NonTensorData;
    child->key = key;
    child->className = "NonTensorData";
    child->typeString = "<class 'tensordict.tensorclass.NonTensorData'>";
    child->batchSize = batchSize;
    child->data = std::move(value);
    return insertChild(std::move(child));
}

Node& Node::addNonTensorStack(const std::string& key, Value::List values) {
    checkUnlocked();
    auto child = std::make_unique<Node>();
    child->kind = NodeKind::NonTensorStack;
    child->key = key;
    child->className = "NonTensorStack";
    child->typeString = "<class 'tensordict.tensorclass.NonTensorStack'>";
    child->batchSize = {static_cast<std::int64_t>(values.size())};
    child->data = Value(std::move(values));
    return insertChild(std::move(child));
}

}  // namespace tensordict
