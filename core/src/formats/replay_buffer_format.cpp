// TorchRL replay buffer dumps (core/FORMAT.md 18): the folder
// ReplayBuffer.dumps(path) writes, read as torchrl's source writes it
// (pytorch/rl v0.3.0 520e65fe, v0.13.3 662ba675 and main ae9719f1:
// replay_buffers.py / base.py dumps, storages.py / checkpointers.py
// TensorStorageCheckpointer.dumps, writers.py / writers/round_robin.py and
// max_value.py, samplers.py / samplers/prioritized.py, csrc/segment_tree.h).
//
//   storage/                 the storage tensordict (memmap, rows = capacity),
//                            storage_metadata.json {"len": rows written, ...}
//   writer/metadata.json     {"cursor": next row, ["write_count": n]}
//   sampler/                 none for RandomSampler; sumtree.memmap and
//                            mintree.memmap (float64 x capacity, leaves
//                            only) and sampler_metadata.json when prioritized
//   buffer_metadata.json     {"batch_size": n, ...}
//
// The storage is preallocated at its capacity: only `len` rows are valid,
// and once the writer wrapped the oldest is at the cursor. The tree shows
// the valid rows oldest first, and the sum tree's leaves of those rows as
// `priority`; each leaf's rows are read from the storage files in place.

#include "../builtin_stores.h"
#include "../loader.h"
#include "../node_builder.h"
#include "row_runs.h"
#include "tensordict/datasets.h"
#include "tensordict/error.h"

namespace tensordict {
namespace {

constexpr std::uint64_t kMaxJsonBytes = 1u << 20;

// A dump: buffer_metadata.json beside storage/, or a storage/ with its
// storage_metadata.json beside writer/ (a dump of a buffer subclass that
// writes no buffer metadata).
bool isDump(const StoreProbe& probe) {
    if (!probe.transport || probe.info.kind != SourceInfo::Kind::Directory)
        return false;
    const Transport& t = *probe.transport;
    const auto at = [&](const char* rel) { return kindAt(t, t.join(probe.location, rel)); };
    if (at("storage") != SourceInfo::Kind::Directory || at("meta.json") == SourceInfo::Kind::File)
        return false;
    return at("buffer_metadata.json") == SourceInfo::Kind::File ||
           (at("storage/storage_metadata.json") == SourceInfo::Kind::File &&
            at("writer") == SourceInfo::Kind::Directory);
}

// An int the way torchrl's JSON has it: an int, or a float of an int
// (v0.13 writes "_max_capacity": 1000.0).
std::optional<std::int64_t> intOf(const Value* v) {
    if (!v)
        return std::nullopt;
    if (v->isInt())
        return v->asInt();
    if (v->isDouble() && v->asDouble() == double(std::int64_t(v->asDouble())))
        return std::int64_t(v->asDouble());
    return std::nullopt;
}

class ReplayBufferStore final : public RowRunStore {
public:
    ReplayBufferStore(std::shared_ptr<const Transport> transport, std::string folder,
                      StoreOptions options)
        : RowRunStore(std::move(transport), std::move(folder)), options_(options) {}

    std::string_view format() const override { return "replay buffer"; }

    std::unique_ptr<Node> buildTree(const std::shared_ptr<const Store>& self) const override {
        ReplayBufferFacts facts;
        bool newer = false;
        // buffer_metadata.json
        if (const auto v = json("buffer_metadata.json")) {
            facts.batchSize = intOf(v->find("batch_size"));
            newer |= v->find("consume_after_n_samples") != nullptr;
        }
        // storage/
        const std::optional<Value> storageMeta = json("storage/storage_metadata.json");
        if (storageMeta) {
            const Value* isPytree = storageMeta->find("is_pytree");
            if (isPytree && isPytree->isBool() && isPytree->asBool())
                throw Error::unsupported(
                    describe("storage"),
                    "a storage of plain tensors (is_pytree), not of a tensordict, is not read yet");
            facts.valid = intOf(storageMeta->find("len"));
            if (!facts.valid || *facts.valid < 0)
                throw Error::corrupt(describe("storage/storage_metadata.json"),
                                     "\"len\" is not a count of rows");
        }
        LoadOptions load;
        load.throwOnError = false;
        load.inflateCacheBytes = options_.inflateCacheBytes;
        load.mapLeavesFrom = options_.mapLeavesFrom;
        const TensorDict storage = loadStore(
            openDirectoryStore(sharedTransport(), pathOf(facts.storageFolder), options_), load);
        const std::vector<std::int64_t>& batch = storage.root().batchSize();
        if (batch.empty())
            throw Error::corrupt(describe("storage/meta.json"),
                                 "the storage has no batch dimension: it holds no rows");
        facts.capacity = batch[0];
        // An ndim > 1 storage counts len in elements of its batch dimensions.
        std::int64_t perRow = 1;
        for (std::size_t d = 1; d < batch.size(); ++d)
            perRow *= std::max<std::int64_t>(1, batch[d]);
        if (facts.valid)
            facts.valid = *facts.valid / perRow;

        readWriter(facts, storage, newer);
        readSampler(facts, newer);
        for (const char* name : {"transform.t", "prefetch.pkl", "sampler/consuming_sampler.pt"})
            if (stat(name))
                facts.pickledFiles.push_back(name);
        newer |= stat("prefetch.pkl").has_value();
        facts.layout = newer ? "torchrl >= 0.14" : "torchrl <= 0.13";
        findDisagreements(facts);

        // Which rows show, in which order.
        const std::int64_t valid =
            facts.valid ? std::min(*facts.valid, facts.capacity) : facts.capacity;
        if (facts.valid && valid == facts.capacity && facts.cursor && facts.capacity > 0)
            facts.oldestRow = ((*facts.cursor % facts.capacity) + facts.capacity) % facts.capacity;
        facts.firstShownRow = options_.replayStorageOrder ? 0 : facts.oldestRow;
        facts.shownRows = options_.replayAllRows ? facts.capacity : valid;
        std::vector<RowRange> ranges;
        const std::int64_t head = std::min(facts.shownRows, facts.capacity - facts.firstShownRow);
        ranges.push_back({0, facts.firstShownRow, head});
        if (head < facts.shownRows)
            ranges.push_back({0, 0, facts.shownRows - head});

        auto root = gatherTree(self, {storage}, {describe(facts.storageFolder)}, ranges);
        if (!facts.priorityFile.empty() && root->isCollection())
            NodeBuilder(*root).append(priorityLeaf(self, facts, ranges, *root));
        std::lock_guard<std::mutex> lock(mutex_);
        facts_ = std::move(facts);
        return root;
    }

    std::string readingNote() const override {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!facts_)
            return {};
        std::string note = "a TorchRL replay buffer (" + facts_->layout + "): ";
        if (!facts_->valid)
            note +=
                "its fill level is unknown (no storage/storage_metadata.json: a live "
                "scratch_dir, or a dump cut short), so every row of its storage shows";
        else if (options_.replayAllRows)
            note += "every row of its storage, valid or not";
        else
            note += "its valid rows only";
        if (options_.replayStorageOrder)
            note += ", in storage order";
        else
            note += ", oldest first";
        if (!facts_->pickledFiles.empty())
            note += "; its pickled parts are shown, never run";
        return note;
    }

    std::optional<ReplayBufferFacts> facts() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return facts_;
    }

private:
    std::optional<Value> json(const std::string& rel) const {
        if (!stat(rel))
            return std::nullopt;
        Value v = parseJson(read(rel, kMaxJsonBytes), describe(rel));
        if (!v.isObject())
            throw Error::corrupt(describe(rel), "not a JSON object");
        return v;
    }

    void readWriter(ReplayBufferFacts& facts, const TensorDict& storage, bool& newer) const {
        const std::optional<Value> meta = json("writer/metadata.json");
        if (!meta) {
            facts.writer = "ImmutableDatasetWriter";  // writes no writer/ folder
            return;
        }
        facts.cursor = intOf(meta->find("cursor"));
        if (!facts.cursor)
            throw Error::corrupt(describe("writer/metadata.json"), "no \"cursor\" count");
        facts.writeCount = intOf(meta->find("write_count"));
        newer |= facts.writeCount.has_value();
        if (const Value* rank = meta->find("rank_key")) {
            facts.writer = "TensorDictMaxValueWriter";
            facts.writerParameters.emplace_back("rank_key", *rank);
        } else if (storage.root().child("index") && storage.root().child("index")->isTensor()) {
            facts.writer = "TensorDictRoundRobinWriter";  // it writes each row's "index"
        } else {
            facts.writer = "RoundRobinWriter";
        }
    }

    void readSampler(ReplayBufferFacts& facts, bool& newer) const {
        const Transport& t = transport();
        if (kindAt(t, pathOf("sampler")) != SourceInfo::Kind::Directory) {
            facts.sampler = "RandomSampler";  // as SliceSampler, it writes nothing
            return;
        }
        if (const std::optional<Value> meta = json("sampler/sampler_metadata.json")) {
            facts.sampler = "PrioritizedSampler";
            static const std::pair<const char*, const char*> names[] = {
                {"_alpha", "alpha"},
                {"_beta", "beta"},
                {"_eps", "eps"},
                {"_max_priority", "max_priority"},
                {"_max_capacity", "max_capacity"},
                {"_schema_version", "schema_version"},
            };
            for (const auto& [file, shown] : names)
                if (const Value* v = meta->find(file))
                    facts.samplerParameters.emplace_back(shown, *v);
            newer |= meta->find("_schema_version") != nullptr;
            if (const std::optional<StorageInfo> tree = stat("sampler/sumtree.memmap")) {
                facts.priorityFile = "sampler/sumtree.memmap";
                facts.priorityCapacity = static_cast<std::int64_t>(tree->size / sizeof(double));
            }
            return;
        }
        if (stat("sampler/consuming_sampler.pt"))
            facts.sampler = "ConsumingSampler";
        else if (kindAt(t, pathOf("sampler/0")) == SourceInfo::Kind::Directory)
            facts.sampler = "SamplerEnsemble";
        else if (stat("sampler/consumer_version.memmap"))
            facts.sampler = "StalenessAwareSampler";
        else if (stat("sampler/meta.json"))
            facts.sampler = "SamplerWithoutReplacement";
        else
            facts.sampler = "a sampler whose files tdstudio does not know";
    }

    static void findDisagreements(ReplayBufferFacts& facts) {
        const auto add = [&](bool error, const char* kind, const char* file, std::string what) {
            facts.disagreements.push_back({error, kind, file, std::move(what)});
        };
        const std::string cap = std::to_string(facts.capacity);
        if (facts.valid && *facts.valid > facts.capacity)
            add(true, "replay_len", "storage/storage_metadata.json",
                "\"len\" is " + std::to_string(*facts.valid) + " rows, past the storage's " + cap +
                    " (storage/meta.json)");
        if (facts.cursor) {
            const std::int64_t cursor = *facts.cursor;
            if (cursor < 0 || cursor >= std::max<std::int64_t>(1, facts.capacity))
                add(true, "replay_cursor", "writer/metadata.json",
                    "the cursor is " + std::to_string(cursor) + ", outside the storage's " + cap +
                        " rows (storage/meta.json)");
            else if (facts.valid && *facts.valid < facts.capacity && cursor != *facts.valid)
                add(true, "replay_cursor", "writer/metadata.json",
                    "the cursor is " + std::to_string(cursor) +
                        " but storage/storage_metadata.json says " + std::to_string(*facts.valid) +
                        " rows were written and the buffer never wrapped: the writer would "
                        "continue at row " +
                        std::to_string(*facts.valid) + ". One of the two files is stale");
            if (facts.writeCount) {
                const std::int64_t count = *facts.writeCount;
                if (facts.capacity > 0 && count >= 0 && cursor != count % facts.capacity)
                    add(false, "replay_write_count", "writer/metadata.json",
                        "write_count " + std::to_string(count) + " would leave the cursor at " +
                            std::to_string(count % facts.capacity) + ", not " +
                            std::to_string(cursor) + " (write_at() or empty() can do this)");
                if (facts.valid && count >= 0 &&
                    *facts.valid != std::min<std::int64_t>(count, facts.capacity))
                    add(false, "replay_write_count", "storage/storage_metadata.json",
                        "\"len\" is " + std::to_string(*facts.valid) + " but write_count " +
                            std::to_string(count) + " (writer/metadata.json) fills " +
                            std::to_string(std::min<std::int64_t>(count, facts.capacity)) +
                            " rows");
            }
        }
        if (!facts.priorityFile.empty() && facts.priorityCapacity != facts.capacity)
            add(true, "replay_tree", facts.priorityFile.c_str(),
                "the sum tree has " + std::to_string(facts.priorityCapacity) +
                    " leaves, the storage " + cap + " rows: the priorities are not the rows'");
        if (!facts.priorityFile.empty())
            for (const auto& [name, value] : facts.samplerParameters)
                if (name == "max_capacity" && intOf(&value) &&
                    *intOf(&value) != facts.priorityCapacity)
                    add(true, "replay_tree", "sampler/sampler_metadata.json",
                        "_max_capacity is " + std::to_string(*intOf(&value)) + " but " +
                            facts.priorityFile + " holds " +
                            std::to_string(facts.priorityCapacity) + " leaves");
    }

    // The sum tree's leaves of the rows shown: a sample's priority as
    // torchrl keeps it, (p + eps)^alpha.
    std::unique_ptr<Node> priorityLeaf(const std::shared_ptr<const Store>& self,
                                       const ReplayBufferFacts& facts,
                                       const std::vector<RowRange>& ranges,
                                       const Node& root) const {
        const std::string key = root.child("priority") ? "_sampler_priority" : "priority";
        if (facts.priorityCapacity != facts.capacity)
            return NodeBuilder::error(
                key, {ErrorKind::Corrupt, describe(facts.priorityFile),
                      "the sum tree has " + std::to_string(facts.priorityCapacity) +
                          " leaves for a storage of " + std::to_string(facts.capacity) + " rows"});
        // The sum tree as a float64 leaf of the dump's folder.
        const auto folder = openDirectoryStore(sharedTransport(), location(), options_);
        auto holder = NodeBuilder::create(NodeKind::TensorDict, "");
        auto tree = NodeBuilder::create(NodeKind::Tensor, "sumtree");
        NodeBuilder t(*tree);
        t.setStore(folder);
        TensorLeaf& l = t.leaf();
        l.dtype = DType::Float64;
        l.shape = {facts.priorityCapacity};
        l.numel = facts.priorityCapacity;
        l.nbytes = std::uint64_t(l.numel) * sizeof(double);
        l.storage = *folder->stat(facts.priorityFile);
        const Node* sumTree = &NodeBuilder(*holder).append(std::move(tree));
        keep(TensorDict::adopt(std::move(holder), describe(facts.priorityFile), "directory"));
        std::vector<RowRun> runs;
        for (const RowRange& r : ranges)
            runs.push_back({sumTree, r.first, r.count});
        try {
            return rowLeaf(self, key, key, std::move(runs));
        } catch (const Error& e) {
            return NodeBuilder::error(key, e.failure());
        }
    }

    StoreOptions options_;
    mutable std::mutex mutex_;
    mutable std::optional<ReplayBufferFacts> facts_;
};

class ReplayBufferFormat final : public StoreFormat {
public:
    std::string_view name() const override { return "replay buffer"; }
    // Above a model folder (105), below a DCP directory (110): a dump has
    // no meta.json of its own, its storage/ has.
    int score(const StoreProbe& probe) const override { return isDump(probe) ? 108 : 0; }
    std::shared_ptr<const Store> open(const StoreProbe& probe,
                                      const StoreOptions& options) const override {
        if (!isDump(probe))
            throw Error::unsupported(probe.location, "not a replay buffer dump");
        std::string folder = probe.location;
        while (folder.size() > 1 && folder.back() == '/')
            folder.pop_back();
        return std::make_shared<ReplayBufferStore>(probe.transport, folder, options);
    }
};

}  // namespace

std::optional<ReplayBufferFacts> replayBufferFacts(const Store& store) {
    const auto* buffer = dynamic_cast<const ReplayBufferStore*>(&store);
    return buffer ? buffer->facts() : std::nullopt;
}

std::shared_ptr<const StoreFormat> replayBufferFormat() {
    return std::make_shared<ReplayBufferFormat>();
}

}  // namespace tensordict
