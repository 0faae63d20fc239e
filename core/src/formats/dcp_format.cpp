// torch.distributed.checkpoint directories (core/FORMAT.md 17), as torch
// 2.x writes them (torch/distributed/checkpoint/: metadata.py,
// filesystem.py, default_planner.py, _nested_dict.py): a `.metadata` pickle
// of Metadata, and `__<rank>_<n>.distcp` files of torch.save streams, one
// per chunk of a tensor and one per byte item.
//
// `.metadata` is read as data (dcp_metadata.h). Each tensor is one leaf of its
// global shape: its bytes are gathered from its chunks when a view needs them,
// range by range, each chunk's stream read as the torch.save file it is (its
// storage mapped in place where the directory maps). Byte items are decoded by
// the same unpickler as values.

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
#include "formats/dcp_metadata.h"
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

namespace tensordict {
namespace {

constexpr const char* kMetadataName = ".metadata";
constexpr std::uint64_t kMaxMetadataBytes = 1ull << 30;
constexpr int kOpenThreads = 8;  // byte items decoded at once (over a network)

using Chunk = DcpChunk;
using Tensor = DcpTensor;

// The container of its own leaves, each gathered from its chunks.
class DcpStore final : public FolderContainer, public Store {
public:
    DcpStore(std::shared_ptr<const Transport> transport, std::string folder, StoreOptions options)
        : FolderContainer(std::move(transport), std::move(folder)),
          Store(static_cast<const Container&>(*this)),
          options_(options) {}

    std::string_view format() const override { return "dcp"; }
    WholeCheck wholeCheck() const override { return WholeCheck::DistributedCheckpoint; }
    // A tensor is named by its key in the folder: "/ckpt:model.layers.0.weight".
    std::string describe(const std::string& rel) const override {
        return tensorIndex_.count(rel) ? location() + ":" + rel : FolderContainer::describe(rel);
    }
    std::optional<StorageInfo> stat(const std::string& rel) const override {
        if (const auto t = tensorIndex_.find(rel); t != tensorIndex_.end())
            return leafInfo(tensors_[t->second]);
        return FolderContainer::stat(rel);
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
        return "a distributed checkpoint: .metadata read by tdstudio's own "
               "unpickler (its classes "
               "rebuilt as data, nothing run); each tensor gathered from its "
               "chunks' torch.save "
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
    // one written through transforms is first decoded, into at most `limit`
    // bytes.
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
                             std::uint64_t(c.numel) * itemSize(t.dtype) + kDcpStreamRecordsBytes);
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
        return e.kind() == ErrorKind::Corrupt || e.kind() == ErrorKind::Unsupported ||
               e.kind() == ErrorKind::NotReadHere;
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
        if (c.inSafetensors) {  // plain bytes at their offset in the data, which
                                // starts at c.offset
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

// An entry of state_dict_metadata, at its place in the tree.
struct DcpItem {
    std::string fqn;
    std::vector<std::string> path;
    std::unique_ptr<Node> node;
    std::optional<DcpStream> bytes;  // a byte item's stream, still to decode
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
            if (!next->isCollection()) {  // a value where the planner nests more:
                                          // keyed flat
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
    DcpMetadata metadata =
        readDcpMetadata(read(kMetadataName, kMaxMetadataBytes), where, location());
    files_ = metadata.facts.files;
    sources_.assign(files_.size(), nullptr);

    std::vector<DcpItem> items;
    items.reserve(metadata.entries.size());
    for (DcpEntry& entry : metadata.entries) {
        DcpItem item;
        item.fqn = std::move(entry.fqn);
        item.path = std::move(entry.path);
        const std::string& key = item.path.back();
        if (Failure* failure = std::get_if<Failure>(&entry.content)) {
            item.node = NodeBuilder::error(key, std::move(*failure));
        } else if (DcpStream* stream = std::get_if<DcpStream>(&entry.content)) {
            item.bytes = std::move(*stream);
        } else {
            Tensor& t = std::get<Tensor>(entry.content);
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
        items.push_back(std::move(item));
    }

    // Byte items: each stream decoded (several at once: over a network,
    // requests).
    parallelFor(items.size(), kOpenThreads, [&](std::size_t i) {
        DcpItem& item = items[i];
        if (!item.bytes)
            return;
        try {
            item.node = openStream(item.bytes->file, item.bytes->offset, item.bytes->length,
                                   item.bytes->transforms, kDcpMaxByteItemBytes);
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
    facts_ = std::move(metadata.facts);
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
