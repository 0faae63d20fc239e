// Hugging Face sharded model folders (core/FORMAT.md 16): an index,
// model.safetensors.index.json or pytorch_model.bin.index.json, whose
// weight_map names the shard of every tensor, and the shards themselves
// (safetensors files, or torch.save checkpoints of a state dict), as
// transformers' save_pretrained writes them (modeling_utils.py,
// huggingface_hub's split_torch_state_dict_into_shards).
//
// The folder, its index or any one shard opens the whole model as one tree,
// one leaf per tensor name. Each shard is opened as the file it is, by its
// own format, which reads only its header (or pickle); its leaves keep that
// store, so a leaf's bytes are read from its shard when a view needs them.

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>
#include <unordered_map>

#include "containers/builtin_stores.h"
#include "formats/file_stores.h"
#include "formats/sharded.h"
#include "tensordict/error.h"
#include "tensordict/worker_threads.h"
#include "tree/key_table.h"
#include "tree/node_builder.h"
#include "values/json_members.h"
#include "values/plain_json.h"

namespace tensordict {
namespace {

// The indexes a model folder is opened by, in this order: transformers'
// (modeling_utils.py SAFE_WEIGHTS_INDEX_NAME, WEIGHTS_INDEX_NAME) and
// diffusers' (constants.py), each naming shards "{stem}-0000K-of-0000N{ext}".
constexpr std::string_view kFolderIndexes[] = {
    "model.safetensors.index.json",
    "pytorch_model.bin.index.json",
    "diffusion_pytorch_model.safetensors.index.json",
    "diffusion_pytorch_model.bin.index.json",
};
constexpr std::string_view kShardExtensions[] = {".safetensors", ".bin"};
// A model folder's one file where save_pretrained writes no index.
constexpr std::string_view kFolderModelFiles[] = {
    "model.safetensors",
    "pytorch_model.bin",
    "diffusion_pytorch_model.safetensors",
    "diffusion_pytorch_model.bin",
};
constexpr std::uint64_t kMaxIndexBytes = 256u << 20;  // 72k tensors take some 6 MB
constexpr int kOpenThreads = 8;                       // remote shards opened at once

bool endsWith(std::string_view s, std::string_view end) {
    return s.size() >= end.size() && s.compare(s.size() - end.size(), end.size(), end) == 0;
}

std::string baseName(const std::string& location) {
    const auto slash = location.find_last_of('/');
    return slash == std::string::npos ? location : location.substr(slash + 1);
}

// An index's shards: "{stem}-0000K-of-0000N{extension}". An index
// "{base}{extension}.index.json" names shards of the stem base; one of a
// variant, "{base}{extension}.index.{variant}.json" (transformers'
// _add_variant: model.safetensors.index.fp16.json), shards of the stem
// "{base}.{variant}" (model.fp16-00001-of-00002.safetensors).
struct ShardNaming {
    std::string stem;
    std::string_view extension;
};

std::optional<ShardNaming> shardNamingOfIndex(std::string_view index) {
    if (!endsWith(index, ".json"))
        return std::nullopt;
    const std::string_view body = index.substr(0, index.size() - 5);
    for (std::string_view extension : kShardExtensions) {
        const std::string marker = std::string(extension) + ".index";
        const auto at = body.find(marker);
        if (at == std::string_view::npos || at == 0)
            continue;
        const std::string_view variant = body.substr(at + marker.size());  // "" or ".fp16"
        if (variant.empty() || (variant.size() > 1 && variant[0] == '.' &&
                                variant.find('.', 1) == std::string_view::npos))
            return ShardNaming{std::string(body.substr(0, at)) + std::string(variant), extension};
    }
    return std::nullopt;
}

// "model.safetensors.index.fp16.json": a variant of an index in
// kFolderIndexes, which a folder opens by when it has no index of its own.
bool isVariantOfAFolderIndex(std::string_view name) {
    for (std::string_view index : kFolderIndexes) {
        const std::string_view stem = index.substr(0, index.size() - 4);  // "...index."
        if (name.size() > stem.size() + 5 && name.compare(0, stem.size(), stem) == 0 &&
            endsWith(name, ".json") && shardNamingOfIndex(name))
            return true;
    }
    return false;
}

// A file opened as an index when it holds a weight_map.
bool isIndexName(std::string_view name) {
    return endsWith(name, ".index.json") || shardNamingOfIndex(name);
}

// "model-00001-of-00003.safetensors": the indexes it may belong to, by
// the naming above.
std::vector<std::string> indexesOfShard(const std::string& name) {
    const auto of = name.rfind("-of-");
    if (of == std::string::npos)
        return {};
    for (std::string_view extension : kShardExtensions) {
        if (!endsWith(name, extension))
            continue;
        const auto dash = name.rfind('-', of - 1);
        if (dash == std::string::npos || dash == 0)
            return {};
        const std::string stem = name.substr(0, dash);
        std::vector<std::string> indexes{stem + std::string(extension) + ".index.json"};
        if (const auto dot = stem.rfind('.'); dot != std::string::npos && dot > 0)
            indexes.push_back(stem.substr(0, dot) + std::string(extension) + ".index." +
                              stem.substr(dot + 1) + ".json");
        return indexes;
    }
    return {};
}

bool isFile(const Transport& transport, const std::string& location) {
    return kindAt(transport, location) == SourceInfo::Kind::File;
}

// A shard's name as the index gives it: a file of the folder, never a path out of it.
bool isPlainName(std::string_view name) {
    return !name.empty() && name.find('/') == std::string::npos &&
           name.find('\\') == std::string::npos && name != "." && name != "..";
}

// What a sharded model's index says: each tensor's shard, in the index's
// order, and its metadata. As json.loads keeps them, a repeated key's last
// value counts.
struct WeightMap {
    // Each tensor's name and its shard's place in `shards`. The names are
    // views into the index's text, which outlives the map, or into
    // `unescapedNames` where the general reader read the index (a text
    // with escapes, or beyond plain JSON).
    std::vector<std::pair<std::string_view, std::size_t>> entries;
    std::deque<std::string> unescapedNames;
    std::vector<std::string> shards;  // in the order the index first names them
    Value metadata;
};

// The weight_map read entry by entry as it is parsed: an index of 72,000
// tensors is never held whole.
class WeightMapReader {
public:
    // `shardNamed` is told each shard the first time the index names it.
    explicit WeightMapReader(std::function<void(const std::string&)> shardNamed)
        : shardNamed_(std::move(shardNamed)) {}

    // Each occurrence of "weight_map" whose value is an object starts over.
    void start(std::size_t expectedEntries) {
        map_.entries.clear(), map_.unescapedNames.clear();
        map_.shards.clear(), placeOf_.clear(), refused_.reset();
        map_.entries.reserve(expectedEntries);
        isObject_ = true;
        lastShard_ = 0;
    }
    // `shard` is nullopt when the entry's value is no string. `name` lives
    // as long as the index's text.
    void entry(std::string_view name, std::optional<std::string_view> shard) {
        if (refused_)
            return;
        if (!shard || !isPlainName(*shard)) {
            refused_ = std::string(name);
            return;
        }
        map_.entries.emplace_back(name, shardPlace(*shard));
    }
    // The same for a name the reader unescaped.
    void entry(std::string name, std::optional<std::string_view> shard) {
        entry(std::string_view(map_.unescapedNames.emplace_back(std::move(name))), shard);
    }
    void member(const std::string& key, Value value) {
        if (key == "weight_map")
            isObject_ = false;
        else if (key == "metadata")
            map_.metadata = std::move(value);
    }

    // What the index said; `isObject` is whether the document is an object.
    WeightMap result(bool isObject, const std::string& where) {
        if (!isObject || !isObject_)
            throw Error::corrupt(where, "the index has no weight_map object");
        if (refused_)
            throw Error::corrupt(where, "the weight_map gives \"" + *refused_ +
                                            "\" a shard that is not a file name in its folder");
        keepLastOfEachName();
        return std::move(map_);
    }

private:
    // As json.loads keeps a name given twice: at its first place, with its
    // last shard (json.dumps never writes one; a hand-merged index may).
    void keepLastOfEachName() {
        auto& entries = map_.entries;
        std::unordered_map<std::string_view, std::size_t> firstAt;
        firstAt.reserve(entries.size());
        std::size_t kept = 0;
        for (std::size_t i = 0; i < entries.size(); ++i) {
            const auto [at, added] = firstAt.emplace(entries[i].first, kept);
            if (added)
                entries[kept++] = entries[i];
            else
                entries[at->second].second = entries[i].second;
        }
        entries.resize(kept);
    }

    // The shard's place in map_.shards, added when new. Tensors come in runs
    // of one shard: the last one found is tried first.
    std::size_t shardPlace(std::string_view shard) {
        std::vector<std::string>& shards = map_.shards;
        if (lastShard_ < shards.size() && shards[lastShard_] == shard)
            return lastShard_;
        const auto [it, added] = placeOf_.emplace(std::string(shard), shards.size());
        if (added) {
            shards.emplace_back(shard);
            shardNamed_(shards.back());
        }
        return lastShard_ = it->second;
    }

    std::function<void(const std::string&)> shardNamed_;
    WeightMap map_;
    std::unordered_map<std::string, std::size_t> placeOf_;  // in map_.shards
    bool isObject_ = false;                                 // the last weight_map is an object
    std::optional<std::string> refused_;  // its first entry naming no file of the folder
    std::size_t lastShard_ = 0;
};

// The map of an index whose text is `text`, which must outlive it;
// `shardNamed` is told each shard as soon as the index names it.
WeightMap readWeightMap(const std::string& text, const std::string& where,
                        std::function<void(const std::string&)> shardNamed) {
    WeightMapReader reader(std::move(shardNamed));
    // Room for the entries of a typical index (some 70 bytes each) at once,
    // up to a million; a larger map grows as it is read.
    const std::size_t expectedEntries = std::min<std::size_t>(text.size() / 64, 1u << 20);
    bool isObject = false;
    if (isPlainJson(text)) {
        // Every writer's index: no Value, nor string, made for an entry.
        isObject = readPlainMembers(text, [&](std::string key, PlainJsonReader& json) {
            if (key != "weight_map" || json.peek() != '{')
                return reader.member(key, json.value());
            reader.start(expectedEntries);
            json.memberViews([&](std::string_view name, PlainJsonReader& entry) {
                if (entry.peek() == '"') {
                    reader.entry(name, entry.string());
                } else {
                    entry.value();
                    reader.entry(name, std::nullopt);
                }
            });
        });
    } else {
        JsonMembers handlers;
        handlers.streamed = "weight_map";
        handlers.streamStarts = [&] { reader.start(expectedEntries); };
        handlers.entry = [&](std::string name, Value shard) {
            reader.entry(std::move(name), shard.isString()
                                              ? std::optional<std::string_view>(shard.asString())
                                              : std::nullopt);
        };
        handlers.member = [&](std::string key, Value value) {
            reader.member(key, std::move(value));
        };
        isObject = parseJsonMembers(text, where, handlers);
    }
    return reader.result(isObject, where);
}

// A shard's top-level nodes, each taken by key into the model's tree.
// An index names a shard's tensors in the order the shard holds them (both
// sorted by name, as save_pretrained writes them): the next leaf is tried
// first, and the shard's keys are hashed only when the index names one out
// of order.
struct OpenedShard {
    std::vector<std::unique_ptr<Node>> leaves;  // in the shard's order; taken ones null
    std::optional<Failure> failure;
    std::size_t next = 0;  // the leaf after the last one taken
    KeyTable index;
    bool indexed = false;

    const std::string* keyAt(std::size_t at) const {
        return leaves[at] ? &leaves[at]->key() : nullptr;
    }
    std::unique_ptr<Node>* find(std::string_view key) {
        if (next < leaves.size() && leaves[next] && leaves[next]->key() == key)
            return &leaves[next++];
        const auto keyOf = [this](std::size_t i) { return keyAt(i); };
        if (!indexed) {
            index.reserve(leaves.size(), leaves.size(), keyOf);
            indexed = true;
        }
        const std::size_t at = index.find(key, keyOf);
        if (at == KeyTable::npos)
            return nullptr;
        next = at + 1;
        return &leaves[at];
    }
};

// Shards opened on helper threads while the index is still being read: the
// reader hands over each shard as the index first names it, so that a large
// index and its shards' headers are read at once. A helper is started with
// each shard named, up to `threads - 1`; a shard named again (by a second
// weight_map) is opened once. finish() opens what is left on the calling
// thread too, joins the helpers and gives every shard opened, by name.
class ShardOpener {
public:
    using Open = std::function<OpenedShard(const std::string& shard)>;
    ShardOpener(int threads, Open open) : threads_(threads), open_(std::move(open)) {}
    // Left without finish() (the index was refused): the helpers stop after
    // the shards they are opening.
    ~ShardOpener() {
        {
            const std::lock_guard<std::mutex> lock(mutex_);
            pending_.clear();
        }
        helpers_.clear();
    }

    void add(const std::string& shard) {
        {
            const std::lock_guard<std::mutex> lock(mutex_);
            if (!named_.insert(shard).second)
                return;
            pending_.push_back(shard);
        }
        wake_.notify_one();
        if (static_cast<int>(helpers_.size()) + 1 < threads_)
            helpers_.push_back(std::make_unique<WorkerThreads>(
                1, [this] { work(); }, /*bestEffort=*/true, [this] { close(); }));
    }

    std::map<std::string, OpenedShard> finish() {
        close();
        work();
        helpers_.clear();
        failure_.rethrow();
        return std::move(opened_);
    }

private:
    void close() {
        {
            const std::lock_guard<std::mutex> lock(mutex_);
            closed_ = true;
        }
        wake_.notify_all();
    }
    // Opens shards until none is left and no more will come.
    void work() {
        try {
            for (;;) {
                std::string shard;
                {
                    std::unique_lock<std::mutex> lock(mutex_);
                    wake_.wait(lock, [this] { return !pending_.empty() || closed_; });
                    if (pending_.empty() || failure_.failed())
                        return;
                    shard = std::move(pending_.front());
                    pending_.pop_front();
                }
                OpenedShard opened = open_(shard);
                const std::lock_guard<std::mutex> lock(mutex_);
                opened_[shard] = std::move(opened);
            }
        } catch (...) {
            failure_.keepCurrent();
            close();
        }
    }

    const int threads_;
    Open open_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<std::string> pending_;
    std::set<std::string> named_;  // every shard handed over
    bool closed_ = false;
    std::map<std::string, OpenedShard> opened_;
    FirstFailure failure_;
    std::vector<std::unique_ptr<WorkerThreads>> helpers_;  // last: they use the rest
};

// Every leaf belongs to its shard's store: the folder itself holds none.
class ShardedStore final : public Store {
public:
    ShardedStore(std::shared_ptr<const Transport> transport, std::string folder,
                 std::string indexName, StoreOptions options)
        : ShardedStore(std::make_shared<FolderContainer>(std::move(transport), std::move(folder)),
                       std::move(indexName), options) {}

    std::string_view format() const override { return "sharded"; }
    WholeCheck wholeCheck() const override { return WholeCheck::ShardedModel; }

    std::unique_ptr<Node> buildTree(const std::shared_ptr<const Store>& self) const override {
        const std::string where = folder_->describe(indexName_);
        const std::string indexText = folder_->read(indexName_, kMaxIndexBytes);
        StoreOptions alone = options_;
        alone.shardOpensModel = false;
        // A local shard's header is work for a core; a remote one is a wait.
        // (Eight threads on two cores took 20% longer for 48 local shards:
        // each thread's heap is faulted in apart.)
        const int threads =
            folder_->transport().isLocal()
                ? static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))
                : kOpenThreads;
        ShardOpener opener(threads, [&](const std::string& shard) {
            OpenedShard opened;
            try {
                const auto store = openStore(folder_->describe(shard), alone);
                std::unique_ptr<Node> root = store->buildTree(store);
                if (!root || root->isTensor())
                    throw Error::corrupt(folder_->describe(shard),
                                         "not a safetensors file or a checkpoint of named tensors");
                opened.leaves = NodeBuilder(*root).takeChildren();
            } catch (const Error& e) {
                opened.failure = e.failure();
            }
            return opened;
        });
        const WeightMap map =
            readWeightMap(indexText, where, [&](const std::string& shard) { opener.add(shard); });
        const std::vector<std::string>& shards = map.shards;
        // A shard named only by a weight_map that a later one replaced is left out.
        std::map<std::string, OpenedShard> openedByName = opener.finish();
        std::vector<OpenedShard*> opened;
        for (const std::string& shard : shards)
            opened.push_back(&openedByName.at(shard));

        ShardedModelFacts facts;
        facts.indexName = indexName_;
        if (const auto naming = shardNamingOfIndex(indexName_))
            facts.shardStem = naming->stem, facts.shardExtension = naming->extension;
        // Shards named only by entries a later one replaced: transformers
        // loads the shards the index's last entries name, and so does this.
        std::vector<bool> loaded(shards.size());
        for (const auto& entry : map.entries)
            loaded[entry.second] = true;
        for (std::size_t i = 0; i < shards.size(); ++i)
            (loaded[i] ? facts.shards : facts.replacedShards).push_back(shards[i]);
        facts.hasMetadata = map.metadata.isObject();
        if (map.metadata.isObject())
            if (const Value* total = map.metadata.find("total_size"); total && total->isInt())
                facts.totalSize = static_cast<std::uint64_t>(total->asInt());

        // A .bin shard's storages (an entry; in the legacy layout, an
        // offset in the file), each with its first tensor in the shard's
        // order and its size, for total_size as the writers count it. A
        // safetensors tensor is a storage of its own.
        struct Storage {
            std::size_t firstPlace;
            std::uint64_t firstBytes, wholeBytes;
        };
        std::map<std::tuple<std::size_t, std::string_view, std::uint64_t>, Storage> binStorages;

        auto root = NodeBuilder::create(NodeKind::Container, "");
        NodeBuilder b(*root);
        b.setClass("dict", {});
        b.setStore(self);
        if (map.metadata.isObject())
            b.collection().attributes = map.metadata.asObject();
        b.reserveChildren(map.entries.size());
        std::set<std::string_view> lacking;  // names the index's shard does not hold
        // (each tensor of a safetensors shard a storage of its own)
        const bool safetensorsShards = facts.shardExtension == ".safetensors";
        for (const auto& [name, shard] : map.entries) {
            OpenedShard& from = *opened[shard];
            if (from.failure) {
                b.append(NodeBuilder::error(std::string(name), *from.failure));
                continue;
            }
            std::unique_ptr<Node>* leaf = from.find(name);
            if (!leaf || !*leaf) {
                lacking.insert(name);
                b.append(NodeBuilder::error(std::string(name),
                                            {ErrorKind::Corrupt, folder_->describe(shards[shard]),
                                             "the index puts \"" + std::string(name) +
                                                 "\" in this shard, which does not hold it"}));
                continue;
            }
            if ((*leaf)->isTensor()) {
                // What the tensor takes in its shard, as total_size counts it
                // (a packed F4/F6 tensor: numel x bits / 8, not its codes).
                const TensorLeaf& t = (*leaf)->leaf();
                facts.indexedBytes += t.dataBytes();
                // An empty tensor where another starts claims no storage.
                const bool entry = t.storage.kind == StorageKind::StoredEntry ||
                                   t.storage.kind == StorageKind::CompressedEntry;
                if (t.dataBytes() > 0 && safetensorsShards) {
                    facts.firstViewBytes += t.dataBytes();
                    facts.storageBytes += t.dataBytes();
                } else if (t.dataBytes() > 0) {
                    // (the path lives in the leaf, which the tree keeps)
                    const Storage mine{std::size_t(leaf - from.leaves.data()), t.dataBytes(),
                                       entry ? t.storage.size : t.dataBytes()};
                    const auto [it, added] =
                        binStorages.emplace(std::make_tuple(shard, std::string_view(t.storage.path),
                                                            entry ? 0 : t.storage.offset),
                                            mine);
                    if (!added && mine.firstPlace < it->second.firstPlace)
                        it->second = mine;
                }
            }
            b.append(std::move(*leaf));
        }
        for (const auto& [id, storage] : binStorages) {
            facts.firstViewBytes += storage.firstBytes;
            facts.storageBytes += storage.wholeBytes;
        }
        // What a shard holds beyond what the index gives it.
        for (std::size_t i = 0; i < shards.size(); ++i)
            for (const auto& node : opened[i]->leaves)
                if (node && loaded[i])
                    facts.unindexed.push_back({shards[i], node->key(), {}});
        if (!facts.unindexed.empty()) {
            std::unordered_map<std::string_view, std::string*> indexShardOf;
            for (auto& u : facts.unindexed)
                indexShardOf.emplace(u.tensor, &u.indexShard);
            for (const auto& [name, shard] : map.entries)
                if (const auto it = indexShardOf.find(name); it != indexShardOf.end())
                    *it->second = shards[shard];
            // (one name left over in two shards: each told the index's shard)
            for (auto& u : facts.unindexed) {
                u.indexShard = *indexShardOf.at(u.tensor);
                u.indexShardLacksIt = lacking.count(u.tensor) > 0;
            }
        }
        std::sort(facts.unindexed.begin(), facts.unindexed.end());
        {
            std::lock_guard<std::mutex> lock(mutex_);
            facts_ = std::move(facts);
        }
        return root;
    }

    std::optional<ShardedModelFacts> facts() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return facts_;
    }

    std::string readingNote() const override {
        return "a sharded model: " + indexName_ +
               " names the shard of every tensor; each shard "
               "is read by its own format, its header only until a view needs bytes";
    }

private:
    ShardedStore(std::shared_ptr<const FolderContainer> folder, std::string indexName,
                 StoreOptions options)
        : Store(folder),
          folder_(std::move(folder)),
          indexName_(std::move(indexName)),
          options_(options) {}

    std::shared_ptr<const FolderContainer> folder_;
    std::string indexName_;
    StoreOptions options_;
    mutable std::mutex mutex_;
    mutable std::optional<ShardedModelFacts> facts_;
};

class ShardedFormat final : public StoreFormat {
public:
    std::string_view name() const override { return "sharded"; }

    // Above a folder's memmap reading (100) when the folder has an index; above
    // a shard's own format (at most 60) when the file is a shard beside its index.
    int score(const StoreProbe& probe) const override {
        // A shard is opened alone: never as a model again (an index that names
        // itself, or a folder, as a shard would recurse).
        if (!probe.shardOpensModel)
            return 0;
        return where(probe) ? (probe.info.kind == SourceInfo::Kind::File &&
                                       !isIndexName(baseName(probe.location))
                                   ? 70
                                   : 110)
                            : 0;
    }

    std::shared_ptr<const Store> open(const StoreProbe& probe,
                                      const StoreOptions& options) const override {
        const auto found = where(probe);
        if (!found)
            throw Error::unsupported(probe.location, "not a sharded model");
        return std::make_shared<ShardedStore>(probe.transport, found->first, found->second,
                                              options);
    }

private:
    // The folder and the index's name, for a location this format reads.
    static std::optional<std::pair<std::string, std::string>> where(const StoreProbe& probe) {
        if (!probe.transport)
            return std::nullopt;
        if (probe.info.kind == SourceInfo::Kind::Directory) {
            std::string folder = probe.location;
            while (folder.size() > 1 && folder.back() == '/')
                folder.pop_back();
            for (std::string_view index : kFolderIndexes)
                if (isFile(*probe.transport, probe.transport->join(folder, std::string(index))))
                    return std::make_pair(folder, std::string(index));
            // Only a variant's index (model.safetensors.index.fp16.json) and no
            // model of its own (from_pretrained without a variant loads that):
            // the first by name, where the folder can be listed.
            const bool ownModel = std::any_of(
                std::begin(kFolderModelFiles), std::end(kFolderModelFiles),
                [&](std::string_view f) {
                    return isFile(*probe.transport, probe.transport->join(folder, std::string(f)));
                });
            if (!ownModel && probe.transport->isLocal()) {
                std::error_code ec;
                std::set<std::string> variants;
                for (const auto& entry : std::filesystem::directory_iterator(folder, ec))
                    if (const std::string name = entry.path().filename().string();
                        isVariantOfAFolderIndex(name) && entry.is_regular_file(ec))
                        variants.insert(name);
                if (!variants.empty())
                    return std::make_pair(folder, *variants.begin());
            }
            return std::nullopt;
        }
        if (probe.info.kind != SourceInfo::Kind::File)
            return std::nullopt;
        const std::string name = baseName(probe.location);
        if (isIndexName(name))
            return probe.head.find("\"weight_map\"") != std::string::npos
                       ? std::optional(std::make_pair(folderOfLocation(probe.location), name))
                       : std::nullopt;
        const std::string folder = folderOfLocation(probe.location);
        for (const std::string& index : indexesOfShard(name))
            if (isFile(*probe.transport, probe.transport->join(folder, index)))
                return std::make_pair(folder, index);
        return std::nullopt;
    }
};

// A model folder of one file (save_pretrained writes no index for a model
// under its shard size): the folder opens as its model.safetensors (or
// pytorch_model.bin): above a folder's memmap reading (100), as it has no
// meta.json; below a folder with an index (110).
class ModelFolderFormat final : public StoreFormat {
public:
    std::string_view name() const override { return "model folder"; }
    int score(const StoreProbe& probe) const override { return modelFile(probe) ? 105 : 0; }
    std::shared_ptr<const Store> open(const StoreProbe& probe,
                                      const StoreOptions& options) const override {
        const auto file = modelFile(probe);
        if (!file)
            throw Error::unsupported(probe.location, "not a model folder");
        return openStore(*file, options);
    }

private:
    static std::optional<std::string> modelFile(const StoreProbe& probe) {
        if (!probe.transport || probe.info.kind != SourceInfo::Kind::Directory)
            return std::nullopt;
        if (isFile(*probe.transport, probe.transport->join(probe.location, "meta.json")))
            return std::nullopt;
        for (std::string_view name : kFolderModelFiles) {
            const std::string file = probe.transport->join(probe.location, std::string(name));
            if (isFile(*probe.transport, file))
                return file;
        }
        return std::nullopt;
    }
};

}  // namespace

std::optional<ShardedModelFacts> shardedModelFacts(const Store& store) {
    const auto* sharded = dynamic_cast<const ShardedStore*>(&store);
    return sharded ? sharded->facts() : std::nullopt;
}

std::shared_ptr<const StoreFormat> shardedFormat() {
    return std::make_shared<ShardedFormat>();
}

std::shared_ptr<const StoreFormat> modelFolderFormat() {
    return std::make_shared<ModelFolderFormat>();
}

}  // namespace tensordict
