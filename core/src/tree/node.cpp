#include "tensordict/node.h"

#include <algorithm>

#include "tensordict/error.h"
#include "tensordict/guarded_read.h"
#include "tensordict/keys.h"
#include "tensordict/store.h"
#include "tree/key_table.h"
#include "tree/node_builder.h"
#include "tree/shared_value.h"

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
        case NodeKind::Container:
            return "container";
        case NodeKind::Object:
            return "object";
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
        case StorageKind::Chunks:
            return "chunks";
    }
    return "?";
}

Node::Node() = default;

Node::~Node() {
    delete held_.load(std::memory_order_acquire);
}

Node::Held& Node::held() const {
    Held* h = held_.load(std::memory_order_acquire);
    if (h)
        return *h;
    auto made = std::make_unique<Held>();
    if (held_.compare_exchange_strong(h, made.get(), std::memory_order_acq_rel))
        return *made.release();
    return *h;  // another thread made it first
}

const Node::Described& Node::described() const {
    static const Described none;
    return described_ ? *described_ : none;
}

Node::Described& Node::describe() {
    if (!described_)
        described_ = std::make_unique<Described>();
    return *described_;
}

struct Node::Branch {
    Children::Vector children;
    bool hasKeyGroups = false;  // some child is a key group: child() looks inside them

    // A child's key, as the key table asks for it.
    auto keyAt() const {
        return [this](std::size_t at) { return &children[at]->key_; };
    }

    // The children's keys are hashed by the first lookup, and kept up to
    // date by add() from then on: a tree that is only walked (a listing of
    // a model's 72,000 tensors) never hashes them. Lookups may come from
    // several threads at once; children are added by one builder.
    std::size_t find(std::string_view key) const { return table().find(key, keyAt()); }
    // Appends `child`; a repeated key keeps the first as the one find() finds.
    Node& add(std::unique_ptr<Node> child) {
        hasKeyGroups = hasKeyGroups || child->isKeyGroup();
        children.push_back(std::move(child));
        if (indexed_.load(std::memory_order_relaxed))
            index_.added(children.size() - 1, keyAt());
        return *children.back();
    }
    void reserve(std::size_t count) { children.reserve(count); }

private:
    const KeyTable& table() const {
        if (!indexed_.load(std::memory_order_acquire)) {
            const std::lock_guard<std::mutex> lock(indexing_);
            if (!indexed_.load(std::memory_order_relaxed)) {
                index_.reserve(children.size(), children.size(), keyAt());
                indexed_.store(true, std::memory_order_release);
            }
        }
        return index_;
    }

    mutable KeyTable index_;
    mutable std::atomic<bool> indexed_{false};
    mutable std::mutex indexing_;
};

Node::Children Node::children() const {
    return Children(branch_ ? branch_->children : noChildren());
}

const Node::Children::Vector& Node::noChildren() {
    static const Children::Vector none;
    return none;
}

Node::Branch& Node::branch() {
    if (!branch_)
        branch_ = std::make_unique<Branch>();
    return *branch_;
}

const std::string& Node::directory() const {
    if (kind_ != NodeKind::Tensor)
        return described().directory;
    // Tens of thousands of leaves keep no directory of their own.
    const Node* parent = parent_;
    while (parent && parent->isKeyGroup())
        parent = parent->parent_;
    return parent ? parent->directory() : described().directory;
}

const std::string& Node::className() const {
    return described().className;
}

const std::string& Node::typeString() const {
    return described().typeString;
}

const std::vector<std::int64_t>& Node::batchSize() const {
    return described().batchSize;
}

bool Node::isCollection() const {
    return kind_ == NodeKind::TensorDict || kind_ == NodeKind::TensorClass ||
           kind_ == NodeKind::LazyStack || kind_ == NodeKind::View ||
           kind_ == NodeKind::Container || kind_ == NodeKind::Object;
}

bool Node::isLocked() const {
    for (const Node* n = this; n; n = n->parent_)
        if (n->locked_)
            return true;
    return false;
}

std::string Node::keyRepr() const {
    if (const std::string& repr = described().keyRepr; !repr.empty())
        return repr;
    return key_.find('\'') == std::string::npos ? "'" + key_ + "'" : "\"" + key_ + "\"";
}

std::vector<std::string> Node::keyPath() const {
    std::vector<std::string> path;
    for (const Node* n = this; n && n->parent_; n = n->parent_)
        if (n == this || !n->isKeyGroup())
            path.push_back(n->key_);
    return {path.rbegin(), path.rend()};
}

bool Node::isKeyGroup() const {
    const auto* c = std::get_if<Collection>(&payload_);
    return c && !c->keyGroup.empty();
}

std::string Node::where() const {
    return formatKeyPath(keyPath());
}

const Node* Node::child(std::string_view k) const {
    if (!branch_)
        return nullptr;
    const Branch& b = *branch_;
    const std::size_t at = b.find(k);
    if (at != KeyTable::npos)
        return b.children[at].get();
    if (b.hasKeyGroups)  // a dotted key, grouped for display
        for (const auto& c : b.children)
            if (c->isKeyGroup() && k.substr(0, c->key_.size()) == c->key_)
                if (const Node* found = c->child(k))
                    return found;
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

const TensorLeaf& Node::leaf() const {
    if (const auto* l = std::get_if<TensorLeaf>(&payload_))
        return *l;
    throw Error::invalid(where(), "not a tensor leaf");
}

const Collection& Node::collection() const {
    if (const auto* c = std::get_if<Collection>(&payload_))
        return *c;
    throw Error::invalid(where(), "not a collection");
}

const NonTensor& Node::nonTensor() const {
    if (const auto* v = std::get_if<NonTensor>(&payload_))
        return *v;
    throw Error::invalid(where(), "not a non-tensor value");
}

const std::string& Node::error() const {
    static const std::string none;
    const auto* e = std::get_if<ErrorInfo>(&payload_);
    return e ? e->message : none;
}

bool Node::isUnread() const {
    return isError() &&
           (failure()->kind == ErrorKind::NotReadHere || failure()->kind == ErrorKind::Unplaced);
}

const Failure* Node::failure() const {
    const auto* e = std::get_if<ErrorInfo>(&payload_);
    return e ? &e->failure : nullptr;
}

bool Node::isMaterialized() const {
    const TensorLeaf* l = asLeaf();
    if (!l)
        return false;
    if (l->storage.kind == StorageKind::CompressedEntry && l->storage.isPlain() && store_)
        return store_->container().isResident(l->storage);
    return holdsBytes();
}

bool Node::holdsBytes() const {
    Held* h = held_.load(std::memory_order_acquire);
    if (!h)
        return false;
    std::lock_guard<std::mutex> lock(h->mutex);
    return h->pinned.has_value() || !h->inUse.expired();
}

std::string Node::integrityWarning() const {
    const TensorLeaf* l = asLeaf();
    return store_ && l ? store_->container().integrityProblem(l->storage) : std::string();
}

std::optional<std::uint64_t> Node::payloadOffset() const {
    const TensorLeaf* l = asLeaf();
    if (!l || !store_ || l->storage.kind == StorageKind::None)
        return std::nullopt;
    return store_->container().payloadOffset(l->storage);
}

namespace {

// What a held record has now: the pinned bytes, else the `nbytes` a reader
// still holds. Called under the record's lock.
template <class Held>
std::optional<LeafBytes> heldNow(const Held& h, std::uint64_t nbytes) {
    if (h.pinned)
        return h.pinned;
    if (auto data = h.inUse.lock())
        return LeafBytes{std::move(data), static_cast<std::size_t>(nbytes)};
    return std::nullopt;
}

}  // namespace

LeafBytes Node::bytes() const {
    const TensorLeaf& l = leaf();
    if (Held* h = held_.load(std::memory_order_acquire)) {
        std::lock_guard<std::mutex> lock(h->mutex);
        if (auto b = heldNow(*h, l.nbytes))
            return *b;
    }
    if (l.storage.kind == StorageKind::None || l.nbytes == 0)
        return {};
    if (!store_)
        throw Error::invalid(where(), "leaf has no storage");
    // Read without holding the lock (it may take long); if two threads race,
    // the first result is shared.
    LeafBytes fresh =
        l.storage.isPlain()
            ? store_->container().leafBytes(l.storage, l.nbytes, itemSize(l.dtype))
            : viewBytes(store_->container(), l, fileName() + " (key " + where() + ")");
    Held& h = held();
    std::lock_guard<std::mutex> lock(h.mutex);
    if (auto b = heldNow(h, l.nbytes))
        return *b;
    h.inUse = fresh.data;
    return fresh;
}

namespace {

// The leaf's elements are its file's (or entry's) bytes from
// storage.offset on, in order and little-endian: no view to gather.
bool isOneRun(const StorageInfo& s) {
    return s.strides.empty() && !s.bigEndian;
}

void requireWithinLeaf(const std::string& where, std::uint64_t nbytes, std::uint64_t offset,
                       std::uint64_t length) {
    if (offset > nbytes || length > nbytes - offset)
        throw Error::invalid(where, "bytes " + std::to_string(offset) + " to " +
                                        std::to_string(offset + length) + " are past the leaf's " +
                                        std::to_string(nbytes));
}

}  // namespace

LeafBytes Node::bytesRange(std::uint64_t offset, std::uint64_t length) const {
    const TensorLeaf& l = leaf();
    requireWithinLeaf(where(), l.nbytes, offset, length);
    if (length == 0)
        return {};
    const auto part = [&](const LeafBytes& whole) {
        return LeafBytes{std::shared_ptr<std::byte>(whole.data, whole.data.get() + offset),
                         static_cast<std::size_t>(length)};
    };
    if (Held* h = held_.load(std::memory_order_acquire)) {
        std::lock_guard<std::mutex> lock(h->mutex);
        if (auto b = heldNow(*h, l.nbytes))
            return part(*b);
    }
    if (store_ && l.storage.isPlain() &&
        (l.storage.kind == StorageKind::CompressedEntry ||
         !store_->container().readsInPlace(l.storage)))
        return store_->container().leafBytesRange(l.storage, offset, length, 1);
    return part(bytes());
}

void Node::readInto(std::uint64_t offset, std::byte* out, std::size_t length) const {
    const TensorLeaf& l = leaf();
    requireWithinLeaf(where(), l.nbytes, offset, length);
    if (length == 0)
        return;
    const bool held = holdsBytes();
    // Bytes changed in place live in memory only; compressed entries
    // inflate. A leaf that is one run of its file (at an offset: a tensor
    // of a safetensors file or checkpoint) is read from the file itself.
    if (!held && store_ && isOneRun(l.storage) && l.storage.kind != StorageKind::CompressedEntry &&
        l.storage.kind != StorageKind::None)
        return store_->container().readLeafRange(l.storage, l.storage.offset + offset, out, length);
    const LeafBytes part = bytesRange(offset, length);
    guardedCopy(out, part.data.get(), length, *this);
}

bool Node::copyInto(std::uint64_t offset, std::size_t length, int fd, std::uint64_t at) const {
    const TensorLeaf& l = leaf();
    requireWithinLeaf(where(), l.nbytes, offset, length);
    if (holdsBytes())
        return false;  // what this process wrote into them is not in the file
    return length > 0 && store_ && isOneRun(l.storage) &&
           l.storage.kind != StorageKind::CompressedEntry && l.storage.kind != StorageKind::None &&
           store_->container().copyLeafRangeTo(l.storage, l.storage.offset + offset, length, fd,
                                               at);
}

bool Node::hasRandomAccess() const {
    const TensorLeaf* l = asLeaf();
    if (!l || !store_ || !l->storage.isPlain() || l->storage.kind == StorageKind::None)
        return false;
    if (l->storage.kind != StorageKind::CompressedEntry)
        return !store_->container().readsInPlace(l->storage);
    const CompressedRecords* records = store_->container().compressedRecords();
    return records && records->hasRandomAccess(l->storage);
}

bool Node::readsAnyRange() const {
    const TensorLeaf* l = asLeaf();
    if (!l)
        return false;
    const StorageInfo& s = l->storage;
    if (s.kind == StorageKind::CompressedEntry)
        return s.isPlain() && hasRandomAccess();
    return s.kind == StorageKind::None || isOneRun(s);
}

LeafBytes Node::pinnedBytes() const {
    LeafBytes b = bytes();
    Held& h = held();
    std::lock_guard<std::mutex> lock(h.mutex);
    if (!h.pinned)
        h.pinned = b;
    return *h.pinned;
}

std::string Node::fileName() const {
    if (store_ && asLeaf() && asLeaf()->storage.kind != StorageKind::None)
        return store_->container().describe(asLeaf()->storage.path);
    return where();
}

std::unique_ptr<Node> Node::clone() const {
    auto n = NodeBuilder::shallowCopy(*this);
    for (const Node* c : children())
        n->insertChild(c->clone());
    return n;
}

void Node::checkUnlocked() const {
    if (isLocked())
        throw Error::invalid(where(), "the tensordict is locked");
}

void Node::checkCollection() const {
    checkUnlocked();
    if (!isCollection())
        throw Error::invalid(where(), "only collections can hold keys");
}

Node& Node::insertChild(std::unique_ptr<Node> child) {
    child->parent_ = this;
    Branch& b = branch();
    const std::size_t at = b.find(child->key_);
    if (at != KeyTable::npos) {
        b.hasKeyGroups = b.hasKeyGroups || child->isKeyGroup();
        b.children[at] = std::move(child);  // same key, same position: the index holds
        return *b.children[at];
    }
    return b.add(std::move(child));
}

Node& Node::mutableChild(std::string_view k) {
    checkUnlocked();
    const std::size_t at = branch_ ? branch_->find(k) : KeyTable::npos;
    if (at == KeyTable::npos)
        throw Error::notFound(where() + (parent_ ? "/" : "") + std::string(k), "no such key");
    return *branch_->children[at];
}

Node& Node::addBytes(const std::string& key, DType dtype, std::vector<std::int64_t> shape,
                     LeafBytes bytes) {
    checkCollection();
    const std::string at = where() + (parent_ ? "/" : "") + key;
    const std::vector<std::int64_t>& batch = batchSize();
    if (shape.size() < batch.size() || !std::equal(batch.begin(), batch.end(), shape.begin()))
        throw Error::invalid(at, "tensor shape does not start with the batch size");
    auto node = std::make_unique<Node>();
    node->kind_ = NodeKind::Tensor;
    node->key_ = key;
    node->device_ = std::make_unique<const std::string>("cpu");
    TensorLeaf l;
    l.dtype = dtype;
    l.shape = std::move(shape);
    l.numel = 1;
    for (auto d : l.shape) {
        if (d < 0)
            throw Error::invalid(at, "negative dimension");
        if (d != 0 && l.numel > INT64_MAX / d)
            throw Error::invalid(at, "too many elements");
        l.numel *= d;
    }
    l.nbytes = static_cast<std::uint64_t>(l.numel) * itemSize(dtype);
    if (bytes.size != l.nbytes)
        throw Error::invalid(at, "got " + std::to_string(bytes.size) + " bytes for a leaf of " +
                                     std::to_string(l.nbytes));
    l.storage.kind = l.nbytes ? StorageKind::Memory : StorageKind::None;
    l.storage.size = l.nbytes;
    node->payload_ = std::move(l);
    node->held().pinned = std::move(bytes);
    return insertChild(std::move(node));
}

Node& Node::addTensorDict(const std::string& key) {
    checkCollection();
    auto child = std::make_unique<Node>();
    child->key_ = key;
    Described& d = child->describe();
    d.className = "TensorDict";
    d.typeString = "<class 'tensordict._td.TensorDict'>";
    d.batchSize = batchSize();
    NodeBuilder(*child).setDevice(device());
    return insertChild(std::move(child));
}

Node& Node::addNonTensor(const std::string& key, Value value) {
    checkCollection();
    auto child = std::make_unique<Node>();
    child->kind_ = NodeKind::NonTensorData;
    child->payload_ = NonTensor{};
    child->key_ = key;
    Described& d = child->describe();
    d.className = "NonTensorData";
    d.typeString = "<class 'tensordict.tensorclass.NonTensorData'>";
    d.batchSize = batchSize();
    d.value = std::move(value);
    return insertChild(std::move(child));
}

Node& Node::addNonTensorStack(const std::string& key, Value::List values) {
    checkCollection();
    auto child = std::make_unique<Node>();
    child->kind_ = NodeKind::NonTensorStack;
    child->payload_ = NonTensor{};
    child->key_ = key;
    Described& d = child->describe();
    d.className = "NonTensorStack";
    d.typeString = "<class 'tensordict.tensorclass.NonTensorStack'>";
    d.batchSize = {static_cast<std::int64_t>(values.size())};
    d.value = Value(std::move(values));
    return insertChild(std::move(child));
}

// NodeBuilder

std::unique_ptr<Node> NodeBuilder::create(NodeKind kind, std::string key) {
    auto node = std::make_unique<Node>();
    node->key_ = std::move(key);
    NodeBuilder(*node).setKind(kind);
    return node;
}

std::unique_ptr<Node> NodeBuilder::error(std::string key, Failure failure) {
    auto node = create(NodeKind::Error, std::move(key));
    ErrorInfo& info = std::get<ErrorInfo>(node->payload_);
    info.message = failure.text();
    info.failure = std::move(failure);
    return node;
}

std::unique_ptr<Node> NodeBuilder::shallowCopy(const Node& from) {
    auto n = std::make_unique<Node>();
    n->kind_ = from.kind_;
    n->key_ = from.key_;
    if (from.described_) {
        Node::Described& d = n->describe();
        d.keyRepr = from.described_->keyRepr;
        d.directory = from.described_->directory;
        d.className = from.described_->className;
        d.typeString = from.described_->typeString;
        d.batchSize = from.described_->batchSize;
        d.value = from.value();  // a shared value's current one, as a plain value
    }
    NodeBuilder(*n).setDevice(from.device());
    n->payload_ = from.payload_;
    n->store_ = from.store_;
    if (Node::Held* h = from.held_.load(std::memory_order_acquire)) {
        std::lock_guard<std::mutex> lock(h->mutex);
        if (h->pinned)
            n->held().pinned = h->pinned;
    }
    return n;
}

void NodeBuilder::setKey(std::string key) {
    if (node_.parent_)
        throw Error::invalid(node_.where(), "a node's key is fixed once it has a parent");
    node_.key_ = std::move(key);
}

void NodeBuilder::setKeyRepr(std::string repr) {
    node_.describe().keyRepr = std::move(repr);
}

void NodeBuilder::setKind(NodeKind kind) {
    node_.kind_ = kind;
    // A new record only when the kind needs another one: the loader names
    // a collection's kind once it has read its meta.json.
    switch (kind) {
        case NodeKind::Tensor:
            if (!std::holds_alternative<TensorLeaf>(node_.payload_))
                node_.payload_.emplace<TensorLeaf>();
            break;
        case NodeKind::NonTensorData:
        case NodeKind::NonTensorStack:
            if (!std::holds_alternative<NonTensor>(node_.payload_))
                node_.payload_.emplace<NonTensor>();
            break;
        case NodeKind::Error:
            if (!std::holds_alternative<ErrorInfo>(node_.payload_))
                node_.payload_.emplace<ErrorInfo>();
            break;
        default:
            if (!std::holds_alternative<Collection>(node_.payload_))
                node_.payload_.emplace<Collection>();
    }
}

void NodeBuilder::setClass(std::string className, std::string typeString) {
    Node::Described& d = node_.describe();
    d.className = std::move(className);
    d.typeString = std::move(typeString);
}

void NodeBuilder::setBatchSize(std::vector<std::int64_t> batchSize) {
    node_.describe().batchSize = std::move(batchSize);
}

void NodeBuilder::setDevice(std::optional<std::string> device) {
    node_.device_ = device ? std::make_unique<const std::string>(std::move(*device)) : nullptr;
}

void NodeBuilder::setDirectory(std::string directory) {
    if (node_.kind_ == NodeKind::Tensor)
        throw Error::invalid(node_.where(), "a tensor's directory is its parent's");
    node_.describe().directory = std::move(directory);
}

void NodeBuilder::setStore(std::shared_ptr<const Store> store) {
    node_.store_ = std::move(store);
}

TensorLeaf& NodeBuilder::leaf() {
    return std::get<TensorLeaf>(node_.payload_);
}

Collection& NodeBuilder::collection() {
    return std::get<Collection>(node_.payload_);
}

NonTensor& NodeBuilder::nonTensor() {
    return std::get<NonTensor>(node_.payload_);
}

void NodeBuilder::setValue(Value value) {
    node_.describe().value = std::move(value);
}

const Value& NodeBuilder::rawValue() const {
    return node_.described().value;
}

Node& NodeBuilder::append(std::unique_ptr<Node> child) {
    child->parent_ = &node_;
    // A repeated key keeps the first as the one child() finds, as Python's loader does.
    return node_.branch().add(std::move(child));
}

void NodeBuilder::reserveChildren(std::size_t count) {
    node_.branch().reserve(count);
}

Node& NodeBuilder::put(std::unique_ptr<Node> child) {
    return node_.insertChild(std::move(child));
}

Node* NodeBuilder::child(std::string_view key) {
    if (!node_.branch_)
        return nullptr;
    const std::size_t at = node_.branch_->find(key);
    return at == KeyTable::npos ? nullptr : node_.branch_->children[at].get();
}

Node& NodeBuilder::childAt(std::size_t i) {
    return *node_.branch().children.at(i);
}

void NodeBuilder::clearChildren() {
    node_.branch_.reset();
}

std::vector<std::unique_ptr<Node>> NodeBuilder::takeChildren() {
    if (!node_.branch_)
        return {};
    Node::Children::Vector taken = std::move(node_.branch_->children);
    node_.branch_.reset();
    return taken;
}

void NodeBuilder::lockAndShare(bool shareNonTensor) {
    node_.locked_ = true;
    if (shareNonTensor && node_.isNonTensor())
        node_.describe().sharedValue = std::make_shared<SharedValue>(node_.described().value);
    if (node_.branch_)
        for (auto& c : node_.branch_->children)
            NodeBuilder(*c).lockAndShare(shareNonTensor);
}

void NodeBuilder::adoptBytes(LeafBytes bytes) {
    Node::Held& h = node_.held();
    std::lock_guard<std::mutex> lock(h.mutex);
    h.pinned = std::move(bytes);
}

}  // namespace tensordict
