// torch.distributed.checkpoint directories (core/FORMAT.md 17), as torch
// 2.x writes them (torch/distributed/checkpoint/: metadata.py,
// filesystem.py, default_planner.py, _nested_dict.py): a `.metadata` pickle
// of Metadata, and `__<rank>_<n>.distcp` files of torch.save streams, one
// per chunk of a tensor and one per byte item.
//
// `.metadata` is decoded by the safe unpickler, its classes rebuilt as data
// and nothing called; any class DCP does not write refuses the file. Each
// tensor is one leaf of its global shape: its bytes are gathered from its
// chunks when a view needs them, range by range, each chunk's stream read
// as the torch.save file it is (its storage mapped in place where the
// directory maps). Byte items are decoded by the same unpickler as values.

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <list>
#include <map>
#include <mutex>
#include <set>
#include <tuple>
#include <unordered_map>
#include <variant>

#include "containers/builtin_stores.h"
#include "formats/chunk_boxes.h"
#include "formats/dcp.h"
#include "formats/dcp_transforms.h"
#include "formats/file_stores.h"
#include "formats/safetensors.h"
#include "sources/copy_steps.h"
#include "sources/mapping.h"
#include "tensordict/cancel.h"
#include "tensordict/error.h"
#include "tensordict/guarded_read.h"
#include "tensordict/keys.h"
#include "tensordict/worker_threads.h"
#include "tree/node_builder.h"
#include "values/python_objects.h"

namespace tensordict {
namespace {

using python::Object;
using Type = Object::Type;

constexpr const char* kMetadataName = ".metadata";
constexpr std::uint64_t kMaxMetadataBytes = 1ull << 30;
constexpr int kOpenThreads = 8;  // byte items decoded at once (over a network)
// What a transformed (compressed) stream may decode to: a chunk's bytes and
// the torch.save records around them; a byte item at most this.
constexpr std::uint64_t kStreamRecordsBytes = 1ull << 20;
constexpr std::uint64_t kMaxByteItemBytes = 256ull << 20;

constexpr std::string_view kMetadataModule = "torch.distributed.checkpoint.metadata.";
// The classes a .metadata holds; anything else is refused, never rebuilt.
constexpr std::string_view kKnownClasses[] = {
    "torch.distributed.checkpoint.metadata.Metadata",
    "torch.distributed.checkpoint.metadata.TensorStorageMetadata",
    "torch.distributed.checkpoint.metadata.BytesStorageMetadata",
    "torch.distributed.checkpoint.metadata.ChunkStorageMetadata",
    "torch.distributed.checkpoint.metadata.TensorProperties",
    "torch.distributed.checkpoint.metadata.MetadataIndex",
    "torch.distributed.checkpoint.metadata.StorageMeta",
    "torch.distributed.checkpoint.metadata._MEM_FORMAT_ENCODING",
    "torch.distributed.checkpoint.filesystem._StorageInfo",
    // torch 2.3 and earlier: TensorProperties and its enum where ShardedTensor keeps them.
    "torch.distributed._shard.sharded_tensor.metadata.TensorProperties",
    "torch.distributed._shard.sharded_tensor.metadata.MEM_FORMAT_ENCODING",
    // StorageMeta's checkpoint_id, a path (3.13 moved the class to pathlib._local).
    "pathlib.PosixPath",
    "pathlib.WindowsPath",
    "pathlib._local.PosixPath",
    "pathlib._local.WindowsPath",
};

bool isKnownClass(const std::string& name) {
    return std::find(std::begin(kKnownClasses), std::end(kKnownClasses), name) !=
           std::end(kKnownClasses);
}

// ---- The metadata, as data ----

// A dataclass's fields: BUILD's state dict, or the slots dict of (None, slots).
const Object* fieldsOf(const Object* o) {
    if (!o || o->type != Type::Instance || !o->state)
        return nullptr;
    const Object* s = o->state;
    if (s->type == Type::Tuple && s->items.size() == 2 && s->items[1]->type == Type::Dict)
        return s->items[1];
    return s->type == Type::Dict ? s : nullptr;
}

const Object* field(const Object* o, std::string_view name) {
    const Object* fields = fieldsOf(o);
    if (!fields)
        return nullptr;
    for (const auto& [k, v] : fields->entries)
        if (k->type == Type::Str && k->text == name)
            return v;
    return nullptr;
}

bool isA(const Object* o, std::string_view cls) {
    return o && o->type == Type::Instance &&
           o->text.size() == kMetadataModule.size() + cls.size() &&
           o->text.compare(0, kMetadataModule.size(), kMetadataModule) == 0 &&
           o->text.compare(kMetadataModule.size(), cls.size(), cls) == 0;
}

class Reader {
public:
    explicit Reader(std::string where) : where_(std::move(where)) {}

    [[noreturn]] void fail(const std::string& reason) const {
        throw Error::corrupt(where_, reason);
    }

    std::vector<std::int64_t> ints(const Object* o, const std::string& what) const {
        if (!o || (o->type != Type::Tuple && o->type != Type::List))
            fail(what + " is not a tuple of integers");
        std::vector<std::int64_t> v;
        v.reserve(o->items.size());
        for (const Object* e : o->items) {
            if (e->type != Type::Int || e->integer < 0)
                fail(what + " holds something other than a non-negative integer");
            v.push_back(e->integer);
        }
        return v;
    }

    std::int64_t integer(const Object* o, const std::string& what) const {
        if (!o || o->type != Type::Int || o->integer < 0)
            fail(what + " is not a non-negative integer");
        return o->integer;
    }

    const std::string& text(const Object* o, const std::string& what) const {
        if (!o || o->type != Type::Str)
            fail(what + " is not a string");
        return o->text;
    }

private:
    std::string where_;
};

// ---- The tree ----

// A chunk: its box of the tensor, and where its stream is.
struct Chunk : ChunkBox {
    std::size_t file = 0;  // index into the store's files
    std::uint64_t offset = 0, length = 0;
    std::vector<std::string> transforms;  // DCP stream transforms to undo (dcp_transforms.h)
    // In its file's safetensors data, not a torch.save stream of its own
    // (FileSystemWriter's serialization_format=SAFETENSORS).
    bool inSafetensors = false;
};

struct Tensor {
    std::string fqn;
    DType dtype = DType::Float32;
    std::vector<std::int64_t> shape;
    std::int64_t numel = 1;
    std::vector<Chunk> chunks;

    BoxedShape whole() const { return {shape, numel, itemSize(dtype)}; }
    std::vector<const ChunkBox*> boxes() const {
        std::vector<const ChunkBox*> out;
        for (const Chunk& c : chunks)
            out.push_back(&c);
        return out;
    }
};

class DcpStore final : public FolderStore {
public:
    DcpStore(std::shared_ptr<const Transport> transport, std::string folder, StoreOptions options)
        : FolderStore(std::move(transport), std::move(folder)), options_(options) {}

    std::string_view format() const override { return "dcp"; }
    WholeCheck wholeCheck() const override { return WholeCheck::DistributedCheckpoint; }
    // A tensor is named by its key in the folder: "/ckpt:model.layers.0.weight".
    std::string describe(const std::string& rel) const override {
        return tensorIndex_.count(rel) ? location() + ":" + rel : FolderStore::describe(rel);
    }
    std::optional<StorageInfo> stat(const std::string& rel) const override {
        if (const auto t = tensorIndex_.find(rel); t != tensorIndex_.end())
            return leafInfo(tensors_[t->second]);
        return FolderStore::stat(rel);
    }

    LeafBytes leafBytes(const StorageInfo& info, std::uint64_t nbytes,
                        std::size_t alignment) const override {
        const Tensor& t = tensorOf(info);
        const auto leaves = chunkLeaves(t);
        // One chunk that is the whole tensor: its bytes as its stream keeps them.
        if (t.chunks.size() == 1 && t.chunks[0].numel == t.numel) {
            LeafBytes whole = leaves[0]->bytes();
            if (reinterpret_cast<std::uintptr_t>(whole.data.get()) % alignment == 0)
                return whole;
        }
        LeafBytes out = allocateOwnedBuffer(nbytes);
        gather(t, leaves, 0, nbytes, out.data.get());
        return out;
    }
    bool readsInPlace(const StorageInfo& info) const override {
        const Tensor& t = tensorOf(info);
        if (t.chunks.size() != 1 || t.chunks[0].numel != t.numel)
            return false;
        // Held while asked: another thread may drop the tensor from the cache.
        const std::vector<std::shared_ptr<const Node>> leaves = chunkLeaves(t);
        return !leaves[0]->hasRandomAccess();
    }
    // A tensor whose decoded streams are held: its bytes need no decoding.
    bool isResident(const StorageInfo& info) const override {
        std::lock_guard<std::mutex> lock(mutex_);
        return decoded_.count(info.path) != 0;
    }
    LeafBytes leafBytesRange(const StorageInfo& info, std::uint64_t offset, std::uint64_t length,
                             std::size_t) const override {
        const Tensor& t = tensorOf(info);
        LeafBytes out = allocateOwnedBuffer(length);
        gather(t, chunkLeaves(t), offset, length, out.data.get());
        return out;
    }
    void readLeafRange(const StorageInfo& info, std::uint64_t offset, std::byte* out,
                       std::size_t n) const override {
        const Tensor& t = tensorOf(info);
        gather(t, chunkLeaves(t), offset, n, out);
    }

    // Row-wise chunks stored in their streams: each part copied from its
    // .distcp file in the kernel.
    bool copyLeafRangeTo(const StorageInfo& info, std::uint64_t offset, std::size_t n, int fd,
                         std::uint64_t at) const override {
        const Tensor& t = tensorOf(info);
        const std::uint64_t item = itemSize(t.dtype);
        if (n == 0 || offset % item != 0 || n % item != 0)
            return false;
        const auto leaves = chunkLeaves(t);
        const BoxedShape whole = t.whole();
        const std::int64_t e0 = static_cast<std::int64_t>(offset / item);
        const std::int64_t e1 = static_cast<std::int64_t>((offset + n) / item);
        struct Part {
            std::size_t chunk;
            std::uint64_t from, bytes, place, to;
        };
        std::vector<Part> parts;
        for (std::size_t i = 0; i < t.chunks.size(); ++i) {
            const Chunk& c = t.chunks[i];
            const std::int64_t l0 = elementsBefore(c, whole, e0);
            const std::int64_t l1 = elementsBefore(c, whole, e1);
            if (l0 >= l1)
                continue;
            const std::uint64_t from = std::uint64_t(l0) * item,
                                bytes = std::uint64_t(l1 - l0) * item;
            const std::optional<std::uint64_t> place = placeInFile(c, *leaves[i], from, bytes);
            if (!isRowWise(c, whole) || !place)
                return false;
            const std::int64_t g = rowWiseStart(c, whole) + l0;
            parts.push_back({i, from, bytes, *place, std::uint64_t(g - e0) * item});
        }
        for (std::size_t k = 0; k < parts.size(); ++k) {
            const Part& p = parts[k];
            const Chunk& c = t.chunks[p.chunk];
            if (file(c.file)->copyTo(p.place, p.bytes, fd, at + p.to))
                continue;
            if (k == 0)
                return false;  // nothing written: the caller copies
            // The files of one folder copy alike; should one not, its part
            // is read and written here, the ones before it being written.
            const ByteSource& source = *file(c.file);
            std::vector<std::byte> buffer;
            copyInSteps([&source](std::uint64_t from, std::byte* out,
                                  std::size_t n) { source.readOnce(from, out, n); },
                        p.place, p.bytes, fd, at + p.to, buffer, pathOf(files_[c.file]),
                        kAnySourceCopyStep);
        }
        return true;
    }

    Value::List leafParts(const StorageInfo& info) const override {
        const Tensor& t = tensorOf(info);
        Value::List parts;
        for (const Chunk& c : t.chunks) {
            Value::List offsets, sizes;
            for (std::size_t d = 0; d < c.offsets.size(); ++d) {
                offsets.push_back(Value(c.offsets[d]));
                sizes.push_back(Value(c.sizes[d]));
            }
            Value::Object part{
                {"file", Value(files_[c.file])},
                {"offset", Value(static_cast<std::int64_t>(c.offset))},
                {"length", Value(static_cast<std::int64_t>(c.length))},
                {"offsets", Value(std::move(offsets))},
                {"sizes", Value(std::move(sizes))},
            };
            if (!c.transforms.empty()) {  // what its stream was written through
                Value::List transforms;
                for (const std::string& d : c.transforms)
                    transforms.push_back(Value(d));
                part.emplace_back("transform_descriptors", Value(std::move(transforms)));
            }
            if (c.inSafetensors)  // offset: where its file's safetensors data starts
                part.emplace_back("serialization", Value("safetensors"));
            parts.push_back(Value(std::move(part)));
        }
        return parts;
    }

    std::unique_ptr<Node> buildTree(const std::shared_ptr<const Store>& self) const override;

    std::string readingNote() const override {
        return "a distributed checkpoint: .metadata read by tdstudio's own unpickler (its classes "
               "rebuilt as data, nothing run); each tensor gathered from its chunks' torch.save "
               "streams when a view needs its bytes";
    }

    std::optional<DcpFacts> facts() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return facts_;
    }

private:
    StorageInfo leafInfo(const Tensor& t) const {
        StorageInfo s;
        s.kind = StorageKind::Chunks;
        s.path = t.fqn;
        s.size = static_cast<std::uint64_t>(t.numel) * itemSize(t.dtype);
        for (const Chunk& c : t.chunks)
            s.storedSize += c.length;
        return s;
    }

    const Tensor& tensorOf(const StorageInfo& info) const {
        const auto it = tensorIndex_.find(info.path);
        if (it == tensorIndex_.end())
            throw Error::notFound(describe(info.path), "not a tensor of this checkpoint");
        return tensors_[it->second];
    }

    std::shared_ptr<const ByteSource> file(std::size_t i) const {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (sources_[i])
                return sources_[i];
        }
        auto source = transport().open(pathOf(files_[i]));
        std::lock_guard<std::mutex> lock(mutex_);
        if (!sources_[i])
            sources_[i] = std::move(source);
        return sources_[i];
    }

    // The stream at a chunk's place, opened as the torch.save file it is;
    // one written through transforms is first decoded, into at most `limit` bytes.
    std::unique_ptr<Node> openStream(std::size_t fileIndex, std::uint64_t offset,
                                     std::uint64_t length,
                                     const std::vector<std::string>& transforms,
                                     std::uint64_t limit) const {
        StoreOptions alone = options_;
        alone.shardOpensModel = false;
        std::shared_ptr<const ByteSource> stream = sliceOf(file(fileIndex), offset, length);
        if (!transforms.empty())
            stream = untransformedStream(std::move(stream), transforms, limit);
        const auto store = openTorchStream(std::move(stream), alone);
        return store->buildTree(store);
    }

    // Each chunk's tensor, read from its stream once and kept. A tensor
    // whose streams were decoded holds them in memory: those are kept
    // within the inflate cache's budget, the least recently used dropped
    // first (and decoded again when next read).
    std::vector<std::shared_ptr<const Node>> chunkLeaves(const Tensor& t) const {
        {
            std::unique_lock<std::mutex> lock(mutex_);
            // One thread reads a tensor's chunks; the others wait for its
            // leaves, each hearing its own cancel while it waits.
            while (openingNow_.count(t.fqn)) {
                opening_.wait_for(lock, std::chrono::milliseconds(50));
                if (const CancelToken* cancel = CancelScope::current())
                    cancel->throwIfCancelled(describe(t.fqn));
            }
            if (const auto it = chunkLeaves_.find(t.fqn); it != chunkLeaves_.end()) {
                if (const auto d = decoded_.find(t.fqn); d != decoded_.end())
                    decodedOrder_.splice(decodedOrder_.begin(), decodedOrder_, d->second.position);
                return it->second;
            }
            if (const auto it = chunkFailures_.find(t.fqn); it != chunkFailures_.end())
                throw Error(it->second);
            openingNow_.insert(t.fqn);
        }
        struct Opened {
            const DcpStore& store;
            const std::string& fqn;
            ~Opened() {
                {
                    std::lock_guard<std::mutex> lock(store.mutex_);
                    store.openingNow_.erase(fqn);
                }
                store.opening_.notify_all();
            }
        } opened{*this, t.fqn};
        std::vector<std::shared_ptr<const Node>> leaves;
        try {
            for (const Chunk& c : t.chunks)
                leaves.push_back(chunkLeaf(t, c));
        } catch (const Error& e) {
            // Before the waiters wake (opened's destructor): they, and later
            // readers, get the failure without decoding the chunks again.
            if (saidByTheFile(e)) {
                std::lock_guard<std::mutex> lock(mutex_);
                chunkFailures_.emplace(t.fqn, e.failure());
            }
            throw;
        }
        std::lock_guard<std::mutex> lock(mutex_);
        const auto [kept, added] = chunkLeaves_.emplace(t.fqn, std::move(leaves));
        std::vector<std::shared_ptr<const Node>> out = kept->second;
        if (added)
            keepDecoded(t);
        return out;
    }

    // One chunk's tensor, from its stream or its file's safetensors data,
    // checked against what the metadata says of it.
    std::shared_ptr<const Node> chunkLeaf(const Tensor& t, const Chunk& c) const {
        std::shared_ptr<const Node> leaf =
            c.inSafetensors
                ? safetensorsChunk(t, c)
                : openStream(c.file, c.offset, c.length, c.transforms,
                             std::uint64_t(c.numel) * itemSize(t.dtype) + kStreamRecordsBytes);
        const std::string where = pathOf(files_[c.file]) + "@" + std::to_string(c.offset);
        if (!leaf || !leaf->isTensor())
            throw Error::corrupt(
                where, "the chunk of \"" + t.fqn + "\" at this place is not a tensor's stream");
        if (leaf->leaf().dtype != t.dtype || leaf->leaf().shape != c.sizes)
            throw Error::corrupt(
                where, "the chunk of \"" + t.fqn + "\" holds a " +
                           std::string(dtypeName(leaf->leaf().dtype)) + " tensor of shape " +
                           formatShape(leaf->leaf().shape) + "; the metadata says " +
                           std::string(dtypeName(t.dtype)) + " " + formatShape(c.sizes));
        return leaf;
    }

    // Whether a failure is what the file says, kept for the store's life,
    // rather than a read that failed (a network, a file cut short), which
    // is tried again next time. A local file rewritten while it is read can
    // read as corrupt: it reads afresh once opened again.
    static bool saidByTheFile(const Error& e) {
        return e.kind() == ErrorKind::Corrupt || e.kind() == ErrorKind::Unsupported;
    }

    // What a tensor's decoded streams hold in memory: its transformed
    // chunks' elements (their torch.save records are small beside them).
    static std::uint64_t decodedBytes(const Tensor& t) {
        std::uint64_t n = 0;
        for (const Chunk& c : t.chunks)
            if (!c.transforms.empty())
                n += std::uint64_t(c.numel) * itemSize(t.dtype);
        return n;
    }

    // Counts a tensor just kept against the budget, dropping the least
    // recently used decoded tensors over it (never the newest). Under mutex_.
    void keepDecoded(const Tensor& t) const {
        const std::uint64_t cost = decodedBytes(t);
        if (cost == 0)
            return;
        decodedOrder_.push_front(t.fqn);
        decoded_[t.fqn] = {cost, decodedOrder_.begin()};
        decodedHeld_ += cost;
        while (decodedHeld_ > options_.inflateCacheBytes && decodedOrder_.size() > 1) {
            const std::string oldest = decodedOrder_.back();
            decodedHeld_ -= decoded_.at(oldest).cost;
            decoded_.erase(oldest);
            decodedOrder_.pop_back();
            chunkLeaves_.erase(oldest);  // readers holding its leaves keep them
        }
    }

    // A file's safetensors data: every tensor a rank wrote to it, and its
    // DCP_SHARDING_INFO (null when it has none).
    struct SafetensorsData {
        std::shared_ptr<const Node> root;
        std::optional<Value> sharding;  // none when the data has no DCP_SHARDING_INFO
    };

    // The file's safetensors data from `offset`, read once: the header and
    // its sharding info are parsed once for all its chunks.
    std::shared_ptr<const SafetensorsData> safetensorsData(std::size_t fileIndex,
                                                           std::uint64_t offset) const {
        const auto key = std::make_pair(fileIndex, offset);
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (const auto it = safetensorsData_.find(key); it != safetensorsData_.end())
                return it->second;
            if (const auto it = safetensorsFailures_.find(key); it != safetensorsFailures_.end())
                throw Error(it->second);
        }
        const std::string where = pathOf(files_[fileIndex]) + "@" + std::to_string(offset);
        try {
            const std::shared_ptr<const ByteSource> whole = file(fileIndex);
            if (offset > whole->size())
                throw Error::corrupt(pathOf(files_[fileIndex]),
                                     "the metadata puts safetensors data at byte " +
                                         std::to_string(offset) + ", past the end of the file at " +
                                         std::to_string(whole->size()));
            const auto store = openSafetensorsStore(sliceOf(whole, offset, whole->size() - offset));
            auto data = std::make_shared<SafetensorsData>();
            data->root = store->buildTree(store);
            if (const Value* info = findAttribute(*data->root, "DCP_SHARDING_INFO");
                info && info->isString())
                data->sharding = parseJson(info->asString(), where + ": DCP_SHARDING_INFO");
            std::lock_guard<std::mutex> lock(mutex_);
            return safetensorsData_.emplace(key, std::move(data)).first->second;
        } catch (const Error& e) {
            if (saidByTheFile(e)) {
                std::lock_guard<std::mutex> lock(mutex_);
                safetensorsFailures_.emplace(key, e.failure());
            }
            throw;
        }
    }

    // A chunk written into its file's safetensors data: the tensor keyed by
    // its fqn there, whose DCP_SHARDING_INFO must place it where the
    // metadata does.
    std::shared_ptr<const Node> safetensorsChunk(const Tensor& t, const Chunk& c) const {
        const std::shared_ptr<const SafetensorsData> data = safetensorsData(c.file, c.offset);
        const std::string where = pathOf(files_[c.file]) + "@" + std::to_string(c.offset);
        const Node* leaf = data->root->child(t.fqn);
        if (!leaf)
            throw Error::corrupt(where, "the safetensors data at this place holds no tensor \"" +
                                            t.fqn + "\", which the metadata puts there");
        if (data->sharding) {
            const Value* entry = data->sharding->isObject() ? data->sharding->find(t.fqn) : nullptr;
            const Value* saved =
                entry && entry->isObject() ? entry->find("saved_offsets") : nullptr;
            std::vector<std::int64_t> offsets;
            if (saved && saved->isList())
                for (const Value& o : saved->asList())
                    offsets.push_back(o.isInt() ? o.asInt() : -1);
            if (!saved || offsets != c.offsets)
                throw Error::corrupt(
                    where, "the safetensors data's DCP_SHARDING_INFO places \"" + t.fqn + "\" at " +
                               (saved ? formatShape(offsets) : std::string("no offsets")) +
                               "; the metadata at " + formatShape(c.offsets));
        }
        return std::shared_ptr<const Node>(data, leaf);  // kept alive by its tree
    }

    static const Value* findAttribute(const Node& root, std::string_view name) {
        if (!root.isCollection())
            return nullptr;
        for (const auto& [key, value] : root.collection().attributes)
            if (key == name)
                return &value;
        return nullptr;
    }

    // Bytes of a chunk's tensor into `out`: a stored entry of its stream is
    // read from the .distcp file itself (nothing mapped, nothing left
    // resident); other streams (legacy ones) through the chunk's leaf.
    void readChunk(const Chunk& c, const Node& leaf, std::uint64_t from, std::byte* out,
                   std::size_t n) const {
        if (const std::optional<std::uint64_t> place = placeInFile(c, leaf, from, n))
            return file(c.file)->readOnce(*place, out, n);
        leaf.readInto(from, out, n);
    }

    // Where bytes [from, from + n) of a chunk's tensor are in its .distcp
    // file: a stored entry of its stream, within the stream; nullopt otherwise.
    static std::optional<std::uint64_t> placeInFile(const Chunk& c, const Node& leaf,
                                                    std::uint64_t from, std::uint64_t n) {
        const StorageInfo& s = leaf.leaf().storage;
        if (c.inSafetensors) {  // plain bytes at their offset in the data, which starts at c.offset
            if (s.kind != StorageKind::File || dtypeInfo(leaf.leaf().dtype).packedBits ||
                from > leaf.leaf().nbytes || n > leaf.leaf().nbytes - from)
                return std::nullopt;
            return c.offset + s.offset + from;
        }
        if (!c.transforms.empty() || s.kind != StorageKind::StoredEntry || !s.isPlain())
            return std::nullopt;  // a decoded stream's bytes are not in the file
        const std::optional<std::uint64_t> payload = leaf.payloadOffset();
        if (!payload || *payload > c.length || from > c.length - *payload ||
            n > c.length - *payload - from)
            return std::nullopt;
        return c.offset + *payload + from;
    }

    // Bytes [offset, offset + n) of the tensor into `out`, each chunk's part
    // read where its stream keeps it.
    void gather(const Tensor& t, const std::vector<std::shared_ptr<const Node>>& leaves,
                std::uint64_t offset, std::uint64_t n, std::byte* out) const {
        gatherBoxes(t.whole(), t.boxes(), offset, n, out,
                    [&](std::size_t i, std::uint64_t from, std::byte* to, std::size_t bytes) {
                        readChunk(t.chunks[i], *leaves[i], from, to, bytes);
                    });
    }

    StoreOptions options_;
    // Set by buildTree() (once, before any leaf is read).
    mutable std::vector<std::string> files_;
    mutable std::vector<Tensor> tensors_;
    mutable std::map<std::string, std::size_t> tensorIndex_;

    mutable std::mutex mutex_;
    mutable std::vector<std::shared_ptr<const ByteSource>> sources_;
    mutable std::map<std::string, std::vector<std::shared_ptr<const Node>>> chunkLeaves_;
    mutable std::set<std::string> openingNow_;  // tensors whose chunks a thread is reading
    mutable std::condition_variable opening_;
    mutable std::map<std::pair<std::size_t, std::uint64_t>, std::shared_ptr<const SafetensorsData>>
        safetensorsData_;
    mutable std::map<std::pair<std::size_t, std::uint64_t>, Failure> safetensorsFailures_;
    mutable std::map<std::string, Failure> chunkFailures_;  // tensors whose chunks the file spoils
    // Tensors of chunkLeaves_ that hold decoded streams, newest first.
    struct Decoded {
        std::uint64_t cost = 0;
        std::list<std::string>::iterator position;
    };
    mutable std::list<std::string> decodedOrder_;
    mutable std::map<std::string, Decoded> decoded_;
    mutable std::uint64_t decodedHeld_ = 0;
    mutable std::optional<DcpFacts> facts_;
};

// Where a chunk or byte item's stream is: MetadataIndex(fqn, offset) -> _StorageInfo,
// keyed by the fqn, a NUL and the offsets' bytes (none for a byte item).
std::string storageKey(const std::string& fqn, const std::vector<std::int64_t>& offsets) {
    std::string key = fqn;
    key.push_back('\0');
    key.append(reinterpret_cast<const char*>(offsets.data()), offsets.size() * sizeof(offsets[0]));
    return key;
}
struct StreamPlace {
    std::string file;
    std::uint64_t offset = 0, length = 0;
    // What the stream was written through ("stream.zstd/1"), to undo in this order.
    std::vector<std::string> transforms;
};

// FileSystemWriter(serialization_format=SAFETENSORS) records a chunk as
// exactly its tensor's bytes, at the start of its file's safetensors data;
// a torch.save stream is always longer than the data it holds.
bool isSafetensorsChunk(const StreamPlace& place, std::uint64_t tensorBytes) {
    return place.transforms.empty() && place.length == tensorBytes;
}

// Every stream's place (storage_data: MetadataIndex -> _StorageInfo), by
// storageKey(), and the files that hold them, in the order first named.
struct StreamPlaces {
    std::unordered_map<std::string, StreamPlace> byKey;
    std::vector<std::string> files;
    std::map<std::string, std::size_t> fileIndex;
};

StreamPlaces readStreamPlaces(const Object* storageData, const Reader& r) {
    StreamPlaces places;
    if (!storageData || storageData->type != Type::Dict)
        return places;
    places.byKey.reserve(storageData->entries.size());
    for (const auto& [k, v] : storageData->entries) {
        if (!isA(k, "MetadataIndex"))
            r.fail("a storage_data key that is not a MetadataIndex");
        const std::string& fqn = r.text(field(k, "fqn"), "a MetadataIndex's fqn");
        std::vector<std::int64_t> offsets;
        if (const Object* o = field(k, "offset"); o && o->type != Type::None)
            offsets = r.ints(o, "a MetadataIndex's offset");
        if (!v || v->type != Type::Instance ||
            v->text != "torch.distributed.checkpoint.filesystem._StorageInfo")
            r.fail("the storage of \"" + fqn + "\" is not a _StorageInfo");
        StreamPlace place;
        place.file = r.text(field(v, "relative_path"), "a _StorageInfo's relative_path");
        place.offset = std::uint64_t(r.integer(field(v, "offset"), "a _StorageInfo's offset"));
        place.length = std::uint64_t(r.integer(field(v, "length"), "a _StorageInfo's length"));
        if (const Object* d = field(v, "transform_descriptors");
            d && (d->type == Type::List || d->type == Type::Tuple))
            for (const Object* t : d->items)
                place.transforms.push_back(r.text(t, "a transform descriptor of \"" + fqn + "\""));
        if (place.file.empty() || place.file.find('/') != std::string::npos || place.file == "." ||
            place.file == "..")
            r.fail("the stream of \"" + fqn + "\" is in \"" + place.file +
                   "\", not a file of the checkpoint's directory");
        if (places.fileIndex.emplace(place.file, places.files.size()).second)
            places.files.push_back(place.file);
        places.byKey[storageKey(fqn, offsets)] = std::move(place);
    }
    return places;
}

// Keys as the planner flattened them (planner_data): fqn -> path elements.
std::map<std::string, std::vector<std::string>> plannerPaths(const Object* plannerData) {
    std::map<std::string, std::vector<std::string>> paths;
    if (!plannerData || plannerData->type != Type::Dict)
        return paths;
    for (const auto& [k, v] : plannerData->entries) {
        if (k->type != Type::Str || (v->type != Type::Tuple && v->type != Type::List))
            continue;
        std::vector<std::string> path;
        for (const Object* e : v->items)
            path.push_back(python::keyText(*e));
        if (!path.empty())
            paths[k->text] = std::move(path);
    }
    return paths;
}

// The elements of a box of `sizes`, or -1 when they would pass 2^62.
std::int64_t elementsOf(const std::vector<std::int64_t>& sizes) {
    std::int64_t numel = 1;
    for (std::int64_t s : sizes)
        numel = numel < 0 || (s && numel > (std::int64_t(1) << 62) / s) ? -1 : numel * s;
    return numel;
}

// Reads state_dict_metadata's entries, each with its streams, recording
// every stream it finds in the facts (one item after another).
class ItemReader {
public:
    ItemReader(const Reader& r, const StreamPlaces& places, DcpFacts& facts, std::string location)
        : r_(r), places_(places), facts_(facts), location_(std::move(location)) {}

    // The stream of the last item's chunk at `offsets` (a byte item: none),
    // if storage_data has one. `limit`: what it may decode to, if it was
    // written through transforms; `tensorBytes`: a chunk's numel x element size.
    std::optional<StreamPlace> place(const std::string& fqn,
                                     const std::vector<std::int64_t>& offsets, std::uint64_t limit,
                                     std::optional<std::uint64_t> tensorBytes) {
        const auto it = places_.byKey.find(storageKey(fqn, offsets));
        if (it == places_.byKey.end())
            return std::nullopt;
        const StreamPlace& place = it->second;
        facts_.streams.push_back({facts_.items.size() - 1, places_.fileIndex.at(place.file),
                                  place.offset, place.length, place.transforms, limit,
                                  tensorBytes && isSafetensorsChunk(place, *tensorBytes)});
        return place;
    }

    // A transform no reader here knows: why the item cannot be read.
    std::optional<Failure> unknownTransform(const StreamPlace& place,
                                            const std::string& fqn) const {
        try {
            checkStreamTransforms(place.transforms, location_ + ":" + fqn);
        } catch (const Error& e) {
            return e.failure();
        }
        return std::nullopt;
    }

    // A TensorStorageMetadata: the tensor and where each chunk's stream is,
    // or why it cannot be read (the metadata is read on past it).
    std::variant<Tensor, Failure> tensor(const std::string& fqn, const Object* v) {
        Tensor t;
        t.fqn = fqn;
        const Object* properties = field(v, "properties");
        // TensorProperties pickles its state as a tuple (dtype, layout,
        // requires_grad, memory format, pin_memory).
        const Object* state =
            properties && properties->type == Type::Instance ? properties->state : nullptr;
        const Object* dtype = state && state->type == Type::Tuple && !state->items.empty()
                                  ? state->items[0]
                                  : field(properties, "dtype");
        const std::optional<DType> type =
            dtype && dtype->type == Type::Global ? dtypeFromString(dtype->text) : std::nullopt;
        t.shape = r_.ints(field(v, "size"), "the size of \"" + fqn + "\"");
        t.numel = elementsOf(t.shape);
        const Object* chunks = field(v, "chunks");
        if (!chunks || chunks->type != Type::List)
            r_.fail("\"" + fqn + "\" has no list of chunks");
        std::string problem =
            !type
                ? "a dtype tdstudio does not know (" +
                      (dtype && dtype->type == Type::Global ? dtype->text : std::string("?")) + ")"
            : t.numel < 0 ? std::string("an impossible size")
                          : std::string();
        ErrorKind problemKind = ErrorKind::Corrupt;
        if (type)
            t.dtype = *type;
        if (std::uint64_t tensorBytes = 0;
            problem.empty() &&
            __builtin_mul_overflow(std::uint64_t(t.numel), itemSize(t.dtype), &tensorBytes))
            problem = "an impossible size";
        for (const Object* c : chunks->items) {
            if (!isA(c, "ChunkStorageMetadata"))
                r_.fail("a chunk of \"" + fqn + "\" is not a ChunkStorageMetadata");
            Chunk chunk;
            chunk.offsets = r_.ints(field(c, "offsets"), "a chunk's offsets");
            chunk.sizes = r_.ints(field(c, "sizes"), "a chunk's sizes");
            chunk.numel = elementsOf(chunk.sizes);
            // Its bytes, unless its size is impossible (before any rule compares them).
            std::uint64_t bytes = 0;
            if (chunk.numel >= 0 &&
                __builtin_mul_overflow(std::uint64_t(chunk.numel), itemSize(t.dtype), &bytes)) {
                chunk.numel = -1;
                bytes = 0;
            }
            const std::optional<StreamPlace> at =
                place(fqn, chunk.offsets,
                      std::max(bytes, bytes + kStreamRecordsBytes),  // never below its bytes
                      chunk.numel < 0 ? std::nullopt : std::optional(bytes));
            if (!at) {
                if (problem.empty())
                    problem = "no file holds its chunk at " + formatShape(chunk.offsets) +
                              " (no storage_data)";
                continue;
            }
            if (const auto unknown = unknownTransform(*at, fqn); unknown && problem.empty()) {
                problem = unknown->reason;
                problemKind = unknown->kind;
            }
            chunk.transforms = at->transforms;
            chunk.file = places_.fileIndex.at(at->file);
            chunk.offset = at->offset;
            chunk.length = at->length;
            chunk.inSafetensors = chunk.numel >= 0 && isSafetensorsChunk(*at, bytes);
            if (chunk.numel < 0 && problem.empty())
                problem = "a chunk of an impossible size";
            t.chunks.push_back(std::move(chunk));
        }
        if (problem.empty())
            problem = tilingProblem(t.whole(), t.boxes());
        if (!problem.empty())
            return Failure{problemKind, location_ + ":" + fqn, problem};
        return t;
    }

private:
    const Reader& r_;
    const StreamPlaces& places_;
    DcpFacts& facts_;
    const std::string location_;
};

// An entry of state_dict_metadata, at its place in the tree.
struct DcpItem {
    std::string fqn;
    std::vector<std::string> path;
    std::unique_ptr<Node> node;
    std::optional<StreamPlace> bytesPlace;  // a byte item's stream, still to decode
};

// Puts each item at its path under `root`, making the dicts on the way; an
// item whose path passes through a value, or whose key is taken, is keyed
// by its flat fqn at the root (two items of one fqn: the first only).
void nestItems(Node& root, std::vector<DcpItem>& items) {
    for (DcpItem& item : items) {
        Node* parent = &root;
        for (std::size_t i = 0; i + 1 < item.path.size(); ++i) {
            NodeBuilder b(*parent);
            Node* next = b.child(item.path[i]);
            if (!next) {
                auto folder = NodeBuilder::create(NodeKind::Container, item.path[i]);
                NodeBuilder(*folder).setClass("dict", {});
                next = &b.append(std::move(folder));
            }
            if (!next->isCollection()) {  // a value where the planner nests more: keyed flat
                parent = nullptr;
                break;
            }
            parent = next;
        }
        if (!parent || NodeBuilder(*parent).child(item.node->key())) {
            parent = &root;
            NodeBuilder(*item.node).setKey(item.fqn);
            if (NodeBuilder(*parent).child(item.fqn))
                continue;  // two items of one fqn: the metadata's dict cannot hold them
        }
        NodeBuilder(*parent).append(std::move(item.node));
    }
}

std::unique_ptr<Node> DcpStore::buildTree(const std::shared_ptr<const Store>& self) const {
    const std::string where = pathOf(kMetadataName);
    const std::string bytes = read(kMetadataName, kMaxMetadataBytes);
    std::size_t pos = 0;
    const python::Pickle pickle = python::decode(bytes, &pos, where, {});
    // Only the classes DCP writes, rebuilt as data; anything else is refused.
    for (const Object& o : pickle.objects)
        if (o.type == Type::Instance && !isKnownClass(o.text))
            throw Error::unsupported(where, "the metadata names " + o.text +
                                                ", which torch.distributed.checkpoint never "
                                                "writes; it is refused (nothing was run)");
    const Reader r(where);
    const Object* metadata = pickle.root;
    if (!isA(metadata, "Metadata"))
        r.fail("not a torch.distributed.checkpoint Metadata");
    const Object* stateDict = field(metadata, "state_dict_metadata");
    if (!stateDict || stateDict->type != Type::Dict)
        r.fail("the metadata has no state_dict_metadata");
    const StreamPlaces places = readStreamPlaces(field(metadata, "storage_data"), r);
    files_ = places.files;
    sources_.assign(files_.size(), nullptr);
    const auto paths = plannerPaths(field(metadata, "planner_data"));

    DcpFacts facts;
    facts.files = files_;
    ItemReader reader(r, places, facts, location());
    std::vector<DcpItem> items;
    for (const auto& [k, v] : stateDict->entries) {
        DcpItem item;
        item.fqn = r.text(k, "a state_dict_metadata key");
        const auto path = paths.find(item.fqn);
        item.path = path != paths.end() ? path->second : std::vector<std::string>{item.fqn};
        const std::string& key = item.path.back();
        facts.items.push_back({item.fqn, item.path});
        if (isA(v, "BytesStorageMetadata")) {
            item.bytesPlace = reader.place(item.fqn, {}, kMaxByteItemBytes, std::nullopt);
            if (!item.bytesPlace) {
                item.node = NodeBuilder::error(
                    key, {ErrorKind::Corrupt, where,
                          "no file holds the byte item \"" + item.fqn + "\" (no storage_data)"});
            } else if (const auto unknown = reader.unknownTransform(*item.bytesPlace, item.fqn)) {
                item.node = NodeBuilder::error(key, *unknown);
                item.bytesPlace.reset();
            }
        } else if (isA(v, "TensorStorageMetadata")) {
            std::variant<Tensor, Failure> read = reader.tensor(item.fqn, v);
            if (const Failure* failure = std::get_if<Failure>(&read)) {
                item.node = NodeBuilder::error(key, *failure);
            } else {
                Tensor& t = std::get<Tensor>(read);
                auto leaf = NodeBuilder::create(NodeKind::Tensor, key);
                NodeBuilder lb(*leaf);
                lb.setStore(self);
                TensorLeaf& l = lb.leaf();
                l.dtype = t.dtype;
                l.shape = t.shape;
                l.numel = t.numel;
                l.nbytes = std::uint64_t(t.numel) * itemSize(t.dtype);
                l.storage = leafInfo(t);
                item.node = std::move(leaf);
                tensorIndex_.emplace(t.fqn, tensors_.size());
                tensors_.push_back(std::move(t));
            }
        } else {
            r.fail("\"" + item.fqn + "\" is neither a tensor nor a byte item");
        }
        items.push_back(std::move(item));
    }

    // Byte items: each stream decoded (several at once: over a network, requests).
    parallelFor(items.size(), kOpenThreads, [&](std::size_t i) {
        DcpItem& item = items[i];
        if (!item.bytesPlace)
            return;
        const std::size_t f = places.fileIndex.at(item.bytesPlace->file);
        try {
            item.node = openStream(f, item.bytesPlace->offset, item.bytesPlace->length,
                                   item.bytesPlace->transforms, kMaxByteItemBytes);
            if (!item.node)
                throw Error::corrupt(where, "the byte item \"" + item.fqn + "\" is empty");
            NodeBuilder(*item.node).setKey(item.path.back());
        } catch (const Error& e) {
            item.node = NodeBuilder::error(item.path.back(), e.failure());
        }
    });

    auto root = NodeBuilder::create(NodeKind::Container, "");
    NodeBuilder(*root).setClass("dict", {});
    NodeBuilder(*root).setStore(self);
    nestItems(*root, items);
    std::lock_guard<std::mutex> lock(mutex_);
    facts_ = std::move(facts);
    return root;
}

class DcpFormat final : public StoreFormat {
public:
    std::string_view name() const override { return "dcp"; }

    // Above a folder's memmap reading (100): a DCP directory has no meta.json.
    int score(const StoreProbe& probe) const override { return folderOf(probe) ? 110 : 0; }

    std::shared_ptr<const Store> open(const StoreProbe& probe,
                                      const StoreOptions& options) const override {
        auto folder = folderOf(probe);
        if (!folder)
            throw Error::unsupported(probe.location, "not a distributed checkpoint");
        return std::make_shared<DcpStore>(probe.transport, std::move(*folder), options);
    }

private:
    // The checkpoint's folder: the folder itself, or the folder of its .metadata.
    static std::optional<std::string> folderOf(const StoreProbe& probe) {
        if (!probe.transport)
            return std::nullopt;
        std::string location = probe.location;
        while (location.size() > 1 && location.back() == '/')
            location.pop_back();
        if (probe.info.kind == SourceInfo::Kind::Directory) {
            try {
                if (probe.transport->stat(probe.transport->join(location, kMetadataName)).kind ==
                    SourceInfo::Kind::File)
                    return location;
            } catch (const Error&) {
            }
            return std::nullopt;
        }
        const std::string name = location.substr(location.find_last_of('/') + 1);
        if (probe.info.kind != SourceInfo::Kind::File || name != kMetadataName ||
            probe.head.empty() || static_cast<unsigned char>(probe.head[0]) != 0x80)
            return std::nullopt;
        return folderOfLocation(location);
    }
};

}  // namespace

std::optional<DcpFacts> dcpFacts(const Store& store) {
    const auto* dcp = dynamic_cast<const DcpStore*>(&store);
    return dcp ? dcp->facts() : std::nullopt;
}

std::shared_ptr<const StoreFormat> dcpFormat() {
    return std::make_shared<DcpFormat>();
}

}  // namespace tensordict
