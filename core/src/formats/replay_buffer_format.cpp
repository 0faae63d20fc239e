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

#include <cmath>

#include "containers/builtin_stores.h"
#include "formats/row_runs.h"
#include "tensordict/datasets.h"
#include "tensordict/error.h"
#include "tensordict/keys.h"
#include "tree/loader.h"
#include "tree/node_builder.h"
#include "values/pickle.h"

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
// (v0.13 writes "_max_capacity": 1000.0); nullopt for anything else.
std::optional<std::int64_t> intOf(const Value* v) {
    if (!v)
        return std::nullopt;
    if (v->isInt())
        return v->asInt();
    if (v->isDouble()) {
        const double d = v->asDouble();
        if (std::isfinite(d) && d >= -0x1p63 && d < 0x1p63 && d == std::floor(d))
            return static_cast<std::int64_t>(d);
    }
    return std::nullopt;
}

// a * b, nullopt past int64 (a storage's hostile batch dimensions).
std::optional<std::int64_t> timesChecked(std::int64_t a, std::int64_t b) {
    std::int64_t out = 0;
    if (__builtin_mul_overflow(a, b, &out))
        return std::nullopt;
    return out;
}

class ReplayBufferStore final : public RowRunStore {
public:
    ReplayBufferStore(std::shared_ptr<const Transport> transport, std::string folder,
                      StoreOptions options)
        : RowRunStore(std::move(transport), std::move(folder)), options_(options) {}

    std::string_view format() const override { return "replay buffer"; }
    WholeCheck wholeCheck() const override { return WholeCheck::RowDataset; }

    std::unique_ptr<Node> buildTree(const std::shared_ptr<const Store>& self) const override {
        ReplayBufferFacts facts;
        bool newer = false;
        // buffer_metadata.json
        if (const auto v = json("buffer_metadata.json")) {
            facts.batchSize = intOf(v->find("batch_size"));
            newer |= v->find("consume_after_n_samples") != nullptr;
        }
        // storage/
        const std::optional<Value> storageMeta = sideFile(facts, "storage/storage_metadata.json");
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
        const TensorDict storage = loadStore(
            openDirectoryStore(sharedTransport(), pathOf(facts.storageFolder), options_), load);
        const std::vector<std::int64_t>& batch = storage.root().batchSize();
        if (batch.empty())
            throw Error::corrupt(describe("storage/meta.json"),
                                 "the storage has no batch dimension: it holds no rows");
        facts.capacity = batch[0];

        readWriter(facts, storage, newer);
        readSampler(facts, newer);
        countValidRows(facts, batch);
        for (const char* name : {"transform.t", "prefetch.pkl", "sampler/consuming_sampler.pt"})
            if (stat(name)) {
                facts.pickledFiles.push_back(name);
                facts.pickledContents.push_back(pickledContent(name));
            }
        newer |= stat("prefetch.pkl").has_value();
        facts.layout = newer ? "torchrl after 0.13 (write_count)" : "torchrl 0.3 to 0.13";
        findDisagreements(facts);

        // Which rows show, in which order.
        const std::int64_t valid =
            facts.valid ? std::min(*facts.valid, facts.capacity) : facts.capacity;
        // A full buffer's oldest row is at the cursor; a max-value writer
        // keeps its rows by rank, not by time.
        if (facts.valid && valid == facts.capacity && facts.cursor && facts.capacity > 0 &&
            facts.writer != "TensorDictMaxValueWriter")
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
    // What a pickled part holds, read as data (nothing in it runs): a plain
    // pickle's value, a torch.save checkpoint's tensors and values.
    std::string pickledContent(const std::string& rel) const {
        constexpr std::size_t kShown = 300;  // characters: a glance, not a dump
        try {
            std::string text;
            const std::string bytes = read(rel, 16u << 20);
            if (const std::optional<Value> plain = decodePlainPickle(bytes)) {
                text = toJson(*plain);
            } else {
                StoreOptions alone = options_;
                alone.shardOpensModel = false;
                const auto store = openStore(pathOf(rel), alone);
                const std::unique_ptr<Node> root = store->buildTree(store);
                if (!root)
                    return "a " + std::string(store->format()) + " file";
                std::vector<std::string> parts;
                for (const Node* child : root->children()) {
                    std::string part = child->key();
                    if (child->isTensor())
                        part += " " + std::string(dtypeName(child->leaf().dtype)) + " " +
                                formatShape(child->leaf().shape);
                    else if (!child->className().empty())
                        part += " (" + child->className() + ")";
                    parts.push_back(part);
                }
                text = "a checkpoint of " + std::to_string(parts.size()) + " keys: ";
                for (std::size_t i = 0; i < parts.size(); ++i)
                    text += (i ? ", " : "") + parts[i];
            }
            return text.size() > kShown ? text.substr(0, kShown) + "…" : text;
        } catch (const Error& e) {
            return "not read: " + e.reason();
        }
    }

    std::optional<Value> json(const std::string& rel) const {
        if (!stat(rel))
            return std::nullopt;
        Value v = parseJson(read(rel, kMaxJsonBytes), describe(rel));
        if (!v.isObject())
            throw Error::corrupt(describe(rel), "not a JSON object");
        return v;
    }

    // A file beside the storage: one that cannot be read is said (as a
    // disagreement --check reports) and the buffer opens without it.
    std::optional<Value> sideFile(ReplayBufferFacts& facts, const std::string& rel) const {
        try {
            return json(rel);
        } catch (const Error& e) {
            if (rel == "storage/storage_metadata.json")
                throw;  // without its len, the rows mean nothing
            facts.disagreements.push_back({true, "replay_file", rel, e.reason()});
            return std::nullopt;
        }
    }

    void readWriter(ReplayBufferFacts& facts, const TensorDict& storage, bool& newer) const {
        const Transport& t = transport();
        const std::optional<Value> meta = sideFile(facts, "writer/metadata.json");
        if (!meta) {
            if (kindAt(t, pathOf("writer/0")) == SourceInfo::Kind::Directory)
                facts.writer = "WriterEnsemble";
            else if (kindAt(t, pathOf("writer")) == SourceInfo::Kind::Directory)
                facts.writer = "a writer whose files tdstudio does not know";
            else
                facts.writer = "ImmutableDatasetWriter";  // writes no writer/ folder
            return;
        }
        facts.cursor = intOf(meta->find("cursor"));
        if (!facts.cursor)
            facts.disagreements.push_back(
                {true, "replay_file", "writer/metadata.json", "no \"cursor\" count"});
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
        const std::optional<StorageInfo> tree = stat("sampler/sumtree.memmap");
        const std::optional<Value> meta = sideFile(facts, "sampler/sampler_metadata.json");
        // Prioritized: its trees, or its alpha (torchrl 0.3's
        // SamplerWithoutReplacement also wrote a sampler_metadata.json).
        if (tree || (meta && meta->find("_alpha"))) {
            facts.sampler = "PrioritizedSampler";
            static const std::pair<const char*, const char*> names[] = {
                {"_alpha", "alpha"},
                {"_beta", "beta"},
                {"_eps", "eps"},
                {"_max_priority", "max_priority"},
                {"_max_capacity", "max_capacity"},
                {"_schema_version", "schema_version"},
            };
            if (meta) {
                for (const auto& [file, shown] : names)
                    if (const Value* v = meta->find(file))
                        facts.samplerParameters.emplace_back(shown, *v);
                newer |= meta->find("_schema_version") != nullptr;
            }
            if (tree) {
                facts.priorityFile = "sampler/sumtree.memmap";
                facts.priorityCapacity = static_cast<std::int64_t>(tree->size / sizeof(double));
                if (tree->size % sizeof(double) != 0)
                    facts.disagreements.push_back(
                        {true, "replay_tree", facts.priorityFile,
                         "the sum tree's " + std::to_string(tree->size) +
                             " bytes are not whole float64 leaves: it was cut short"});
            }
            return;
        }
        if (meta)
            facts.sampler = "SamplerWithoutReplacement";  // torchrl 0.3 wrote its state as JSON
        else if (stat("sampler/consuming_sampler.pt"))
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

    // len counts rows of a storage of one batch dimension (ndim=1), even
    // one that holds [N, T] trajectories; an ndim=2 storage counts elements
    // of its first two dimensions. The files do not say which: the one
    // that fits the cursor (or a full buffer) is taken.
    static void countValidRows(ReplayBufferFacts& facts, const std::vector<std::int64_t>& batch) {
        if (!facts.valid)
            return;
        const std::int64_t len = *facts.valid;
        const auto fits = [&](std::int64_t rows) {
            return rows <= facts.capacity &&
                   (!facts.cursor || rows == facts.capacity ||
                    *facts.cursor == rows % std::max<std::int64_t>(1, facts.capacity));
        };
        if (fits(len) || batch.size() < 2)
            return;
        std::int64_t unit = 1;
        for (std::size_t d = 1; d < batch.size(); ++d) {
            const std::optional<std::int64_t> next = timesChecked(unit, batch[d]);
            if (!next || *next <= 0)
                return;
            unit = *next;
            if (len % unit == 0 && fits(len / unit)) {
                facts.valid = len / unit;
                facts.lenUnit = unit;
                return;
            }
        }
    }

    static void findDisagreements(ReplayBufferFacts& facts) {
        const auto add = [&](bool error, const char* kind, const std::string& file,
                             std::string what) {
            facts.disagreements.push_back({error, kind, file, std::move(what)});
        };
        const std::string cap = std::to_string(facts.capacity);
        if (facts.valid && *facts.valid > facts.capacity)
            add(true, "replay_len", "storage/storage_metadata.json",
                "\"len\" is " + std::to_string(*facts.valid) + " rows, past the storage's " + cap +
                    " (storage/meta.json)");
        // A max-value writer keeps rows by rank: its cursor is not where the next goes.
        if (facts.cursor && facts.writer != "TensorDictMaxValueWriter") {
            const std::int64_t cursor = *facts.cursor;
            // write_at() (newer writers) writes a row past the cursor, which
            // stays: len then runs ahead of it, and write_count says so.
            const bool wroteAt = facts.writeCount && facts.valid &&
                                 *facts.valid<facts.capacity&& * facts.valid> cursor &&
                                 *facts.writeCount > cursor;
            if (cursor < 0 || cursor >= std::max<std::int64_t>(1, facts.capacity))
                add(true, "replay_cursor", "writer/metadata.json",
                    "the cursor is " + std::to_string(cursor) + ", outside the storage's " + cap +
                        " rows (storage/meta.json)");
            else if (facts.valid && *facts.valid < facts.capacity && cursor != *facts.valid)
                add(!wroteAt, "replay_cursor", "writer/metadata.json",
                    "the cursor is " + std::to_string(cursor) +
                        " but storage/storage_metadata.json says " + std::to_string(*facts.valid) +
                        " rows were written and the buffer never wrapped: " +
                        (wroteAt
                             ? std::string("rows written with write_at() do this (write_count "
                                           "is ") +
                                   std::to_string(*facts.writeCount) + ")"
                             : "the writer would continue at row " + std::to_string(*facts.valid) +
                                   ". One of the two files is stale"));
            if (facts.writeCount && facts.lenUnit == 1 && !wroteAt) {
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
        if (facts.priorityFile.empty())
            return;
        // One leaf a row, or (ndim > 1) one an element of the counted dimensions.
        const std::int64_t leaves =
            timesChecked(facts.capacity, facts.lenUnit).value_or(facts.capacity);
        if (facts.priorityCapacity < leaves)
            add(true, "replay_tree", facts.priorityFile,
                "the sum tree has " + std::to_string(facts.priorityCapacity) +
                    " leaves for the storage's " + std::to_string(leaves) +
                    (facts.lenUnit > 1 ? " elements" : " rows") +
                    ": the rows past them have no priority");
        else if (facts.priorityCapacity > leaves)
            add(false, "replay_tree", facts.priorityFile,
                "the sum tree has " + std::to_string(facts.priorityCapacity) +
                    " leaves for the storage's " + std::to_string(leaves) +
                    ": the sampler was made for a larger buffer; the first ones are the rows'");
        for (const auto& [name, value] : facts.samplerParameters)
            if (name == "max_capacity" && intOf(&value) && *intOf(&value) != facts.priorityCapacity)
                add(true, "replay_tree", "sampler/sampler_metadata.json",
                    "_max_capacity is " + std::to_string(*intOf(&value)) + " but " +
                        facts.priorityFile + " holds " + std::to_string(facts.priorityCapacity) +
                        " leaves");
    }

    // The sum tree's leaves of the rows shown: a sample's priority as
    // torchrl keeps it, (p + eps)^alpha; [rows, T] for an ndim=2 storage.
    std::unique_ptr<Node> priorityLeaf(const std::shared_ptr<const Store>& self,
                                       const ReplayBufferFacts& facts,
                                       const std::vector<RowRange>& ranges,
                                       const Node& root) const {
        std::string key = "priority";
        while (root.child(key))
            key = "_" + key;  // the storage's own key stays
        const std::int64_t leaves =
            timesChecked(facts.capacity, facts.lenUnit).value_or(facts.capacity);
        if (facts.priorityCapacity < leaves)
            return NodeBuilder::error(
                key, {ErrorKind::Corrupt, describe(facts.priorityFile),
                      "the sum tree has " + std::to_string(facts.priorityCapacity) +
                          " leaves for the storage's " + std::to_string(leaves)});
        // The sum tree's first leaves as a float64 leaf of the dump's folder.
        const auto folder = openDirectoryStore(sharedTransport(), location(), options_);
        const std::optional<StorageInfo> file = folder->container().stat(facts.priorityFile);
        if (!file)
            return NodeBuilder::error(
                key, {ErrorKind::NotFound, describe(facts.priorityFile), "the sum tree is gone"});
        auto holder = NodeBuilder::create(NodeKind::TensorDict, "");
        auto tree = NodeBuilder::create(NodeKind::Tensor, "sumtree");
        NodeBuilder t(*tree);
        t.setStore(folder);
        TensorLeaf& l = t.leaf();
        l.dtype = DType::Float64;
        l.shape = {facts.capacity};
        if (facts.lenUnit > 1)
            l.shape.push_back(facts.lenUnit);
        l.numel = leaves;
        l.nbytes = std::uint64_t(l.numel) * sizeof(double);
        l.storage = *file;
        const Node* sumTree = &NodeBuilder(*holder).append(std::move(tree));
        keep(TensorDict::adopt(std::move(holder), describe(facts.priorityFile), "directory"));
        std::vector<RowRun> runs;
        for (const RowRange& r : ranges)
            runs.push_back({sumTree, r.first, r.count});
        try {
            // Named by its file: no storage key path is "sampler/sumtree.memmap" (else an error).
            return rowLeaf(self, key, facts.priorityFile, std::move(runs));
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
