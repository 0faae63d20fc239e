#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "tensordict/bytes.h"
#include "tensordict/dtype.h"
#include "tensordict/error.h"
#include "tensordict/value.h"

namespace tensordict {

class Store;
class SharedValue;
class NodeBuilder;

// What a node of a loaded tensordict is.
enum class NodeKind {
    TensorDict,      // plain TensorDict (also PersistentTensorDict and friends)
    TensorClass,     // a user @tensorclass; its fields are the children
    LazyStack,       // LazyStackedTensorDict: children "0", "1", ...
    View,            // _SubTensorDict or a lazy custom-op view over child "_source"
    Tensor,          // a tensor leaf
    NonTensorData,   // one non-tensor value
    NonTensorStack,  // a stack of non-tensor values
    Container,       // a Python dict, list or tuple of a checkpoint; className() says which
    Object,          // a Python object that is never rebuilt (no code runs): className()
                     // names its class; the children are what was found inside it
    Error,           // a part that could not be read; error() says why
};

std::string_view kindName(NodeKind kind);

// Where a leaf's bytes live.
enum class StorageKind {
    None,             // zero-element leaf with no file
    File,             // a .memmap file in a directory
    StoredEntry,      // an uncompressed zip entry, mapped in place
    CompressedEntry,  // a compressed zip entry, inflated on first access
    Memory,           // process memory: a tensor added in C++, or anonymous shared memory
    Chunks,           // gathered from parts of several files (a DCP tensor: Container::leafParts)
};

std::string_view storageKindName(StorageKind kind);

// (Fields are ordered so that the small ones share their words: tens of
// thousands of leaves each carry one.)
struct StorageInfo {
    StorageKind kind = StorageKind::None;
    int zipMethod = -1;                  // zip compression method of an entry
    std::optional<std::uint32_t> crc32;  // an archive entry's CRC-32, as its directory says
    std::string path;                    // relative to the container's root: "b/c.memmap"
    std::uint64_t size = 0;              // bytes of the file or uncompressed entry
    std::uint64_t storedSize = 0;        // bytes on disk: file size, or compressed entry size
    // Where the leaf's elements sit when they are not simply the first
    // nbytes of the file or entry (checkpoints, safetensors, numpy files): a
    // byte offset, element strides (empty: C order), and big-endian
    // elements. Readers see the leaf's elements as C-ordered little-endian
    // bytes either way: copied into that order when the file keeps another.
    std::uint64_t offset = 0;
    std::vector<std::int64_t> strides;
    bool bigEndian = false;
    // The leaf is the file's (or entry's) first bytes, in C order and little-endian.
    bool isPlain() const { return offset == 0 && strides.empty() && !bigEndian; }

    // A file reached through a symbolic link that leads out of the dataset's
    // root: where it really is ("" otherwise). Saving refuses to copy it
    // unless allowed.
    const std::string& outsideTarget() const { return facts().outsideTarget; }
    void setOutsideTarget(std::string target) { changeFacts().outsideTarget = std::move(target); }
    // The file's version when the tree was read (ByteSource::version()), for
    // a container that opens a leaf's file when the leaf is read: a file
    // that became another version is refused, not mixed in. (A container of
    // one file holds it open from its opening on and sets none.)
    const std::string& version() const { return facts().version; }
    void setVersion(std::string version) { changeFacts().version = std::move(version); }

private:
    // What only a file of a directory has, kept apart: the leaves of one
    // file (a model's tensors) carry a pointer, not two strings. Shared by
    // copies, and copied before a change.
    struct FileFacts {
        std::string outsideTarget;
        std::string version;
    };
    const FileFacts& facts() const {
        static const FileFacts none;
        return fileFacts_ ? *fileFacts_ : none;
    }
    FileFacts& changeFacts() {
        auto changed =
            fileFacts_ ? std::make_shared<FileFacts>(*fileFacts_) : std::make_shared<FileFacts>();
        FileFacts& facts = *changed;
        fileFacts_ = std::move(changed);
        return facts;
    }
    std::shared_ptr<FileFacts> fileFacts_;
};

std::string zipMethodName(int method);

// What each kind of node carries beyond the tree: small records of plain
// data, filled in by the builder (the loader, or Node's add*() functions).

// A tensor leaf.
struct TensorLeaf {
    DType dtype = DType::Float32;
    bool isNested = false;
    std::vector<std::int64_t> shape;
    std::int64_t numel = 0;
    std::uint64_t nbytes = 0;  // numel x element size: what the leaf's bytes hold
    std::vector<std::vector<std::int64_t>> nestedShapes;  // component shapes of a nested leaf
    StorageInfo storage;

    // The tensor's bytes as its file counts them: nbytes, but numel x bits /
    // 8 for a packed sub-byte dtype, whose leaf bytes are its codes one a byte.
    std::uint64_t dataBytes() const {
        return dtypeInfo(dtype).packedBits ? storedBytes(dtype, std::uint64_t(numel)) : nbytes;
    }
};

// A TensorDict, tensorclass, lazy stack or view.
struct Collection {
    int stackDim = 0;           // lazy stacks: the dimension stacked along
    Value::Object attributes;   // tensorclass fields kept in its own meta.json; view parameters
    std::string pickleFile;     // a tensorclass's sidecar of non-JSON fields, if any
    bool pickleOpaque = false;  // it holds more than plain data; never unpickled
    // A group made for display by groupKeysByDots(): the dotted prefix its
    // keys share ("layer1.0."), which is also its key. "" for real nodes.
    std::string keyGroup;
};

// A NonTensorData or NonTensorStack; its value is read through Node::value().
struct NonTensor {
    int stackDim = 0;           // stacks: the dimension stacked along
    std::string pickleFile;     // sidecar the value came from, if any
    bool pickleOpaque = false;  // the sidecar holds more than plain data; never unpickled
};

// A part that could not be read: what kind of failure, where and why.
struct ErrorInfo {
    Failure failure;
    std::string message;  // failure.text(), kept for error()
};

// A node of a loaded tensordict: a tree core (kind, key, parent, children
// found by key in constant time), what most kinds share (class, batch size,
// device) and one per-kind record. Built from metadata only; a tensor leaf
// reads its bytes the first time bytes() is called. Read-only but for the
// builders below, which refuse a locked tree.
class Node {
public:
    // The children in order, as const nodes.
    class Children {
    public:
        using Vector = std::vector<std::unique_ptr<Node>>;
        class iterator {
        public:
            using iterator_category = std::random_access_iterator_tag;
            using value_type = const Node*;
            using difference_type = std::ptrdiff_t;
            using pointer = const Node* const*;
            using reference = const Node*;
            explicit iterator(Vector::const_iterator it) : it_(it) {}
            const Node* operator*() const { return it_->get(); }
            iterator& operator++() { return ++it_, *this; }
            iterator operator+(difference_type n) const { return iterator(it_ + n); }
            difference_type operator-(const iterator& o) const { return it_ - o.it_; }
            bool operator==(const iterator& o) const { return it_ == o.it_; }
            bool operator!=(const iterator& o) const { return it_ != o.it_; }

        private:
            Vector::const_iterator it_;
        };
        explicit Children(const Vector& v) : v_(&v) {}
        iterator begin() const { return iterator(v_->begin()); }
        iterator end() const { return iterator(v_->end()); }
        std::size_t size() const { return v_->size(); }
        bool empty() const { return v_->empty(); }
        const Node* operator[](std::size_t i) const { return (*v_)[i].get(); }
        const Node* front() const { return v_->front().get(); }
        const Node* back() const { return v_->back().get(); }

    private:
        const Vector* v_;
    };

    Node();
    Node(const Node&) = delete;
    Node& operator=(const Node&) = delete;
    ~Node();

    // The tree.
    NodeKind kind() const { return kind_; }
    const std::string& key() const { return key_; }  // raw key in the parent ("" for the root)
    // The key as its source spells it, for messages that must tell keys
    // apart: a checkpoint's dict keys as Python's repr() writes them (0 and
    // '0' are both the key "0"); other keys quoted ('obs').
    std::string keyRepr() const;
    const Node* parent() const { return parent_; }
    Children children() const;
    // The keys from the root, as the file has them (key groups left out; a
    // group's own path ends with its prefix).
    std::vector<std::string> keyPath() const;
    const Node* child(std::string_view key) const;  // nullptr when absent
    const Node* find(const std::vector<std::string>& path) const;
    bool isCollection() const;
    bool isTensor() const { return kind_ == NodeKind::Tensor; }
    bool isNonTensor() const {
        return kind_ == NodeKind::NonTensorData || kind_ == NodeKind::NonTensorStack;
    }
    bool isError() const { return kind_ == NodeKind::Error; }
    // An error node for a part tdstudio leaves unread that need not be
    // damaged: of a kind it does not decode (ErrorKind::NotReadHere: a
    // quantized tensor, a string array), or held outside every part it
    // shows (ErrorKind::Unplaced). A save may leave it out.
    bool isUnread() const;
    // This node or one above it is locked (trees returned by save()).
    bool isLocked() const;
    // A group of dotted keys made for display (groupKeysByDots()): not part of
    // the file. Key paths pass over groups, and child() finds a key inside them.
    bool isKeyGroup() const;

    // What collections and non-tensors carry (empty for tensors and errors).
    // The Python class, for display: "TensorDict", "fixture_classes.MyTC", "NonTensorData".
    const std::string& className() const;
    const std::string& typeString() const;  // the raw "_type" of meta.json
    const std::vector<std::int64_t>& batchSize() const;
    // Tensors and collections: the device meta.json names, if any.
    std::optional<std::string> device() const {
        return device_ ? std::optional<std::string>(*device_) : std::nullopt;
    }
    // The node's directory relative to the root ("" for the root); a
    // tensor's is its parent's (key groups passed over).
    const std::string& directory() const;

    // The per-kind records. The reference forms throw Error naming the key
    // when the node is of another kind; the pointer forms return nullptr.
    const TensorLeaf& leaf() const;
    const TensorLeaf* asLeaf() const { return std::get_if<TensorLeaf>(&payload_); }
    const Collection& collection() const;
    const NonTensor& nonTensor() const;
    // Error nodes: why the part could not be read, "where: reason"; "" for other kinds.
    const std::string& error() const;
    // Error nodes: the failure as data (its kind decides); nullptr for other kinds.
    const Failure* failure() const;

    // The leaf's raw bytes (exactly nbytes), from its store's container:
    // large files mapped, small ones read, compressed entries inflated (the
    // container keeps recent ones in bounded caches). Callers share the bytes while any of
    // them holds them; the node itself keeps none, so a tree of any number
    // of leaves holds a bounded number of mappings. Read them through
    // guarded_read.h: the file may change underneath. Throws Error.
    LeafBytes bytes() const;
    // The same bytes, kept by the node from now on: writes into them (a
    // tensor changed in place) are seen by every later reader, as with
    // Python's memory-mapped tensors. The torch part's tensors use these.
    LeafBytes pinnedBytes() const;
    // Bytes [offset, offset + length) of the leaf (within nbytes), read as
    // little as the container allows: a part of a compressed entry with access
    // points inflates only the segments around it. Throws Error.
    LeafBytes bytesRange(std::uint64_t offset, std::uint64_t length) const;
    // The same bytes copied into `out`, read (not mapped) where the
    // container can: a pass over a large leaf (a conversion) then leaves none of it
    // resident in this process. Throws Error.
    void readInto(std::uint64_t offset, std::byte* out, std::size_t length) const;
    // The same bytes copied into the file open as `fd`, at `at`, inside the
    // kernel where the container can (Container::copyLeafRangeTo); false, with
    // nothing written, otherwise (the caller uses readInto). Throws Error.
    bool copyInto(std::uint64_t offset, std::size_t length, int fd, std::uint64_t at) const;
    // Whether bytesRange() reads only around the part asked for where
    // bytes() would inflate or fetch the whole leaf (a compressed entry with
    // access points, a leaf on a web server): such a leaf is best shown
    // page by page (LeafPages).
    bool hasRandomAccess() const;
    // Whether readInto() reads any range on its own, without mapping or
    // inflating what comes before (files, a tensor at an offset of one,
    // stored entries, chunks, deflate entries with access points): what
    // streaming readers split into pieces on every core.
    bool readsAnyRange() const;
    // True while the leaf's bytes are mapped or inflated (compressed entries
    // live in the container's cache of inflated entries, which has a size cap).
    bool isMaterialized() const;
    // A problem found when the leaf's data was read in full (a CRC-32 that
    // does not match); "" when none. The data is still shown.
    std::string integrityWarning() const;
    // Where an archive entry's payload starts in the archive: read from the
    // entry's local header the first time (one small read). nullopt for
    // files of a directory and leaves in memory. Throws Error.
    std::optional<std::uint64_t> payloadOffset() const;
    // How messages name where a leaf's bytes live: "/data/ds/b/c.memmap",
    // "/data/ds.tdz:b/c.memmap", or the key path for a leaf in memory.
    std::string fileName() const;
    // The storage backend the node was read from (nullptr for trees built in memory).
    const std::shared_ptr<const Store>& store() const { return store_; }

    // Non-tensors: the current value. With save(shareNonTensor) it lives in
    // shared memory, and setSharedValue() changes it for every process that
    // shares it, as an in-place write to a mapped tensor would.
    Value value() const;
    bool hasSharedValue() const { return described_ && described_->sharedValue; }
    // Throws Error naming the key when the value is not shared.
    void setSharedValue(Value value) const;

    // Building trees in memory (to save them). Each adds or replaces child
    // `key` and returns it. Throws Error on a locked tree or invalid input.
    // (Tensors: tensordict::torch::addTensor in the torch part.)
    Node& addTensorDict(const std::string& key);  // inherits this batch size
    Node& addNonTensor(const std::string& key, Value value);
    Node& addNonTensorStack(const std::string& key, Value::List values);
    // A leaf over bytes already in memory (C order, exactly nbytes).
    Node& addBytes(const std::string& key, DType dtype, std::vector<std::int64_t> shape,
                   LeafBytes bytes);
    // A non-tensor's new value; throws Error on a locked tree.
    void setValue(Value value);
    // A child of this unlocked node, to build on; throws Error when locked
    // or when there is no such child.
    Node& mutableChild(std::string_view key);

    // A deep copy of this subtree (unlocked). Leaves share their source:
    // they map the same files, or share bytes already in memory.
    std::unique_ptr<Node> clone() const;

private:
    friend class NodeBuilder;

    Node& insertChild(std::unique_ptr<Node> child);
    void checkUnlocked() const;
    void checkCollection() const;
    std::string where() const;

    // What collections and non-tensors carry, and a key's own spelling:
    // kept apart and made by the first builder that sets one, so that a
    // tensor leaf (nearly every node of a large model) stays small.
    struct Described {
        std::string keyRepr;  // the source's own spelling, when the key is not a str
        std::string directory;
        std::string className;
        std::string typeString;
        std::vector<std::int64_t> batchSize;
        Value value;                               // non-tensors
        std::shared_ptr<SharedValue> sharedValue;  // non-tensors saved with shareNonTensor
    };
    const Described& described() const;  // an empty record when none was made
    Described& describe();               // made on first use

    NodeKind kind_ = NodeKind::TensorDict;
    bool locked_ = false;
    std::string key_;
    Node* parent_ = nullptr;
    // A node's children, made with its first one (leaves have none), found
    // by key through one table per parent (node.cpp).
    struct Branch;
    static const Children::Vector& noChildren();
    Branch& branch();  // made on first use
    std::unique_ptr<Branch> branch_;

    std::unique_ptr<Described> described_;
    std::unique_ptr<const std::string> device_;  // none when null
    std::variant<Collection, TensorLeaf, NonTensor, ErrorInfo> payload_;
    std::shared_ptr<const Store> store_;

    // The bytes a leaf holds: made by the first read or pin (most leaves of
    // a large model are never read, and the record is 104 bytes), never
    // replaced, deleted with the node.
    struct Held {
        std::mutex mutex;
        std::optional<LeafBytes> pinned;  // leaves built in memory, and pinned bytes
        std::weak_ptr<std::byte> inUse;   // bytes some reader holds now
    };
    Held& held() const;       // made on first use
    bool holdsBytes() const;  // pinned, or held by a reader now
    mutable std::atomic<Held*> held_{nullptr};
};

}  // namespace tensordict
