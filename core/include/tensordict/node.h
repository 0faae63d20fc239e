#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tensordict/bytes.h"
#include "tensordict/dtype.h"
#include "tensordict/value.h"

namespace at {
class Tensor;
}

namespace tensordict {

class Store;
class SharedValue;

// What a node of a loaded tensordict is.
enum class NodeKind {
    TensorDict,      // plain TensorDict (also PersistentTensorDict and friends)
    TensorClass,     // a user @tensorclass; its fields are the children
    LazyStack,       // LazyStackedTensorDict: children "0", "1", ...
    View,            // _SubTensorDict or a lazy custom-op view over child "_source"
    Tensor,          // a tensor leaf
    NonTensorData,   // one non-tensor value
    NonTensorStack,  // a stack of non-tensor values
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
};

std::string_view storageKindName(StorageKind kind);

struct StorageInfo {
    StorageKind kind = StorageKind::None;
    std::string path;                    // relative to the root: "b/c.memmap"
    std::string container;               // the directory or archive on disk
    std::uint64_t size = 0;              // bytes of the file or uncompressed entry
    std::uint64_t storedSize = 0;        // bytes on disk: file size, or compressed entry size
    int zipMethod = -1;                  // zip compression method of an entry
    std::optional<std::uint32_t> crc32;  // an archive entry's CRC-32, as its directory says
    // A file reached through a symbolic link that leads out of the dataset's
    // root: where it really is. Saving refuses to copy it unless allowed.
    std::string outsideTarget;
};

std::string zipMethodName(int method);

// A node of a loaded tensordict: plain data built from metadata only. A
// tensor leaf maps its file the first time bytes() or tensor() is called.
class Node {
public:
    NodeKind kind = NodeKind::TensorDict;
    std::string key;  // raw key in the parent ("" for the root)
    Node* parent = nullptr;
    std::vector<std::unique_ptr<Node>> children;

    // Collections (TensorDict, TensorClass, LazyStack, View) and non-tensors.
    std::string className;   // "TensorDict", "fixture_classes.MyTC", "NonTensorData"
    std::string typeString;  // the raw "_type" of meta.json
    std::vector<std::int64_t> batchSize;
    std::optional<std::string> device;
    int stackDim = 0;
    Value::Object attributes;  // tensorclass fields kept in its own meta.json; view parameters
    std::string directory;     // the node's directory relative to the root ("" for the root)

    // Tensor leaves.
    DType dtype = DType::Float32;
    std::vector<std::int64_t> shape;
    std::int64_t numel = 0;
    std::uint64_t nbytes = 0;
    bool isNested = false;
    std::vector<std::vector<std::int64_t>> nestedShapes;  // component shapes of a nested leaf
    StorageInfo storage;

    // Non-tensor values.
    Value data;
    std::string pickleFile;     // sidecar the value came from, if any
    bool pickleOpaque = false;  // the sidecar holds more than plain data; never unpickled

    // Error nodes.
    std::string error;

    bool isCollection() const;
    std::vector<std::string> keyPath() const;
    const Node* child(std::string_view key) const;
    const Node* find(const std::vector<std::string>& path) const;

    // The leaf's raw bytes (exactly nbytes), from its store: large files
    // mapped, small ones read, compressed entries inflated (the store keeps
    // recent ones in bounded caches). Callers share the bytes while any of
    // them holds them; the node itself keeps none, so a tree of any number
    // of leaves holds a bounded number of mappings. Read them through
    // guarded_read.h: the file may change underneath. Throws Error.
    LeafBytes bytes() const;
    // The same bytes, kept by the node from now on: writes into them (a
    // tensor changed in place) are seen by every later reader, as with
    // Python's memory-mapped tensors. The torch part's tensors use these.
    LeafBytes pinnedBytes() const;
    // The leaf as an at::Tensor over those bytes, without a copy. Throws
    // Error for dtypes libtorch cannot represent and for nested leaves.
    // Part of the torch part: include <tensordict/torch.h>, link tensordict::torch.
    at::Tensor tensor() const;
    // True while the leaf's bytes are mapped or inflated (compressed entries
    // live in the store's cache of inflated entries, which has a size cap).
    bool isMaterialized() const;
    // A problem found when the leaf's data was read in full (a CRC-32 that
    // does not match); "" when none. The data is still shown.
    std::string integrityWarning() const;
    // Where an archive entry's payload starts in the archive: read from the
    // entry's local header the first time (one small read). nullopt for
    // files of a directory and leaves in memory. Throws Error.
    std::optional<std::uint64_t> payloadOffset() const;

    // Building trees in memory (to save them). Each adds or replaces child
    // `key` and returns it. Throws Error on a locked tree or invalid input.
    // A tensor, copied to C order if needed (torch part, as tensor()).
    Node& addTensor(const std::string& key, const at::Tensor& tensor);
    Node& addTensorDict(const std::string& key);  // inherits this batch size
    Node& addNonTensor(const std::string& key, Value value);
    Node& addNonTensorStack(const std::string& key, Value::List values);
    // A leaf over bytes already in memory (C order, exactly nbytes).
    Node& addBytes(const std::string& key, DType dtype, std::vector<std::int64_t> shape,
                   LeafBytes bytes);

    // A deep copy of this subtree (unlocked). Leaves share their source:
    // they map the same files, or share bytes already in memory.
    std::unique_ptr<Node> clone(Node* newParent = nullptr) const;

    // Gives a tensor leaf its bytes (exactly nbytes) directly, for trees built in memory.
    void adoptBytes(LeafBytes bytes);

    // Non-tensor values: the current value. With save(shareNonTensor) the
    // value lives in shared memory; setValue() is then seen by forked processes.
    Value value() const;
    void setValue(Value value);
    std::shared_ptr<SharedValue> sharedValue;
    bool locked = false;  // set on trees returned by save(): the builders refuse them

    std::shared_ptr<const Store> store;  // the storage backend the leaf reads from

private:
    Node& insertChild(std::unique_ptr<Node> child);
    void checkUnlocked() const;

    mutable std::mutex mutex_;
    mutable std::optional<LeafBytes> bytes_;  // leaves built in memory, and pinned bytes
    mutable std::weak_ptr<std::byte> inUse_;  // bytes some reader holds now
};

}  // namespace tensordict
