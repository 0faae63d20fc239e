#include "tensordict/node.h"

#include "store.h"
#include "tensordict/error.h"
#include "tensordict/keys.h"

namespace tensordict {

std::string_view kindName(NodeKind kind) {
    switch (kind) {
        case NodeKind::TensorDict: return "TensorDict";
        case NodeKind::TensorClass: return "tensorclass";
        case NodeKind::LazyStack: return "lazy stack";
        case NodeKind::View: return "view";
        case NodeKind::Tensor: return "tensor";
        case NodeKind::NonTensorData: return "non-tensor";
        case NodeKind::NonTensorStack: return "non-tensor stack";
        case NodeKind::Error: return "error";
    }
    return "?";
}

std::string_view storageKindName(StorageKind kind) {
    switch (kind) {
        case StorageKind::None: return "none";
        case StorageKind::File: return "file";
        case StorageKind::StoredEntry: return "stored entry";
        case StorageKind::CompressedEntry: return "compressed entry";
    }
    return "?";
}

bool Node::isCollection() const {
    return kind == NodeKind::TensorDict || kind == NodeKind::TensorClass ||
           kind == NodeKind::LazyStack || kind == NodeKind::View;
}

std::vector<std::string> Node::keyPath() const {
    std::vector<std::string> path;
    for (const Node* n = this; n && n->parent; n = n->parent) path.push_back(n->key);
    return {path.rbegin(), path.rend()};
}

const Node* Node::child(std::string_view k) const {
    for (const auto& c : children)
        if (c->key == k) return c.get();
    return nullptr;
}

const Node* Node::find(const std::vector<std::string>& path) const {
    const Node* n = this;
    for (const auto& k : path) {
        n = n->child(k);
        if (!n) return nullptr;
    }
    return n;
}

bool Node::isMaterialized() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return bytes_.has_value();
}

LeafBytes Node::bytes() const {
    if (kind != NodeKind::Tensor)
        throw Error(formatKeyPath(keyPath()), "not a tensor leaf");
    std::lock_guard<std::mutex> lock(mutex_);
    if (!bytes_) {
        if (storage.kind == StorageKind::None || nbytes == 0)
            bytes_ = LeafBytes{};
        else
            bytes_ = store->map(storage, nbytes, itemSize(dtype));
    }
    return *bytes_;
}

}  // namespace tensordict
