// Stacks of dataset chunks: a local folder whose subfolders are memmap
// tensordicts of the same keys, dtypes and trailing shapes (TorchRL's Atari
// DQN runs, a dataset saved in parts), opened as one dataset stacked along
// the first dimension. Each chunk is read by its own directory store; a
// leaf's rows are its chunks' rows in turn (row_runs.h), never copied.

#include "formats/row_runs.h"
#include "sources/folder_listing.h"
#include "tensordict/datasets.h"
#include "tensordict/error.h"
#include "tensordict/keys.h"
#include "tree/loader.h"

namespace tensordict {
namespace {

// The chunk folders of a stack, in natural order; empty when `folder` is
// not one: a tensordict itself, or a folder with anything but at least
// two tensordict folders (and files beside them).
std::vector<std::string> chunksOf(const StoreProbe& probe) {
    if (!probe.transport || !probe.transport->isLocal() ||
        probe.info.kind != SourceInfo::Kind::Directory)
        return {};
    const Transport& t = *probe.transport;
    if (kindAt(t, t.join(probe.location, "meta.json")) == SourceInfo::Kind::File)
        return {};
    std::vector<std::string> names;
    try {
        names = namesInNaturalOrder(probe.location);
    } catch (const Error&) {
        return {};
    }
    std::vector<std::string> chunks;
    for (const std::string& name : names) {
        // A leaf file of its own: a tensordict whose root meta.json is
        // missing (written last, an interrupted save), not a stack.
        if (isLeafFileName(name))
            return {};
        const std::string path = t.join(probe.location, name);
        if (kindAt(t, path) != SourceInfo::Kind::Directory)
            continue;
        if (kindAt(t, t.join(path, "meta.json")) != SourceInfo::Kind::File)
            return {};  // a folder of other things
        chunks.push_back(name);
    }
    return chunks.size() >= 2 ? chunks : std::vector<std::string>{};
}

class StackStore final : public RowRunStore {
public:
    StackStore(std::shared_ptr<const Transport> transport, std::string folder,
               std::vector<std::string> chunks, StoreOptions options)
        : RowRunStore(std::move(transport), std::move(folder)),
          chunks_(std::move(chunks)),
          options_(options) {}

    std::string_view format() const override { return "stack"; }
    WholeCheck wholeCheck() const override { return WholeCheck::RowDataset; }

    std::unique_ptr<Node> buildTree(const std::shared_ptr<const Store>& self) const override {
        LoadOptions load;
        load.throwOnError = false;
        StoreOptions alone = options_;
        alone.shardOpensModel = false;
        std::vector<TensorDict> trees;
        std::vector<std::string> names;
        std::vector<RowRange> ranges;
        StackFacts facts;
        for (const std::string& chunk : chunks_) {
            const std::string path = pathOf(chunk);
            const auto store = openStore(path, alone);
            if (store->ownContainer() != OwnContainer::Directory)
                throw Error::unsupported(path,
                                         "a chunk of a stack must be a memmap tensordict, "
                                         "not a " +
                                             std::string(store->format()));
            trees.push_back(loadStore(store, load));
            names.push_back(path);
            ranges.push_back({trees.size() - 1, 0, -1});
            const auto& batch = trees.back().root().batchSize();
            if (batch.empty())
                throw Error::unsupported(path, "a chunk with no batch dimension cannot be stacked");
            facts.chunks.push_back({chunk, batch[0]});
        }
        auto root = gatherTree(self, trees, names, ranges);
        std::lock_guard<std::mutex> lock(mutex_);
        facts_ = std::move(facts);
        return root;
    }

    std::string readingNote() const override {
        return "a stack of " + std::to_string(chunks_.size()) +
               " memmap tensordicts along their first dimension; each leaf's rows are read from "
               "its chunks' files";
    }

    std::optional<StackFacts> facts() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return facts_;
    }

private:
    std::vector<std::string> chunks_;
    StoreOptions options_;
    mutable std::mutex mutex_;
    mutable std::optional<StackFacts> facts_;
};

class StackFormat final : public StoreFormat {
public:
    std::string_view name() const override { return "stack"; }
    // Below a model folder (105) and a DCP directory (110); a tensordict
    // folder itself (100) is never a stack.
    int score(const StoreProbe& probe) const override { return chunksOf(probe).empty() ? 0 : 104; }
    std::shared_ptr<const Store> open(const StoreProbe& probe,
                                      const StoreOptions& options) const override {
        auto chunks = chunksOf(probe);
        if (chunks.empty())
            throw Error::unsupported(probe.location, "not a folder of tensordict chunks");
        return std::make_shared<StackStore>(probe.transport, probe.location, std::move(chunks),
                                            options);
    }
};

}  // namespace

std::optional<StackFacts> stackFacts(const Store& store) {
    const auto* stack = dynamic_cast<const StackStore*>(&store);
    return stack ? stack->facts() : std::nullopt;
}

std::shared_ptr<const StoreFormat> stackFormat() {
    return std::make_shared<StackFormat>();
}

}  // namespace tensordict
