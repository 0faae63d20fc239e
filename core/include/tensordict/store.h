#pragma once

// Formats, and the registry that picks one for a location by its content.
//
// A Store is a format opened at a location: a memmap directory, a .tdz
// archive, a checkpoint, a folder of shards. It reads its files through
// its Container (container.h) and builds the node tree from them, or
// leaves that to the loader, which reads tensordict's meta.json files. A
// leaf asks its store's container for its bytes the first time they are
// needed. A new format is one Store class plus one StoreFormat registered
// with registerStoreFormat().

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "tensordict/bytes.h"
#include "tensordict/container.h"
#include "tensordict/node.h"
#include "tensordict/source.h"
#include "tensordict/store_options.h"

namespace tensordict {

// Which of tensordict's own containers a store is: a memmap directory or a
// .tdz archive, whose meta.json files record the tree (class, batch size,
// device) and whose every leaf is a file of its own; or neither, a format
// that builds its tree from its own structure (a checkpoint, safetensors).
enum class OwnContainer { None, Directory, Archive };

// What a format promises beyond its tree, which `--check` verifies as a
// whole: the files of a sharded model against its index, a distributed
// checkpoint's chunks against its metadata, the files of a replay buffer
// or a stack of chunks against each other.
enum class WholeCheck { TreeOnly, ShardedModel, DistributedCheckpoint, RowDataset };

// A format opened at a location: what its files mean. It holds the
// container it reads (or is one, for a format whose leaves are gathered in
// its own way: a distributed checkpoint's chunks), names itself, and
// builds the tree. Thread-safe: leaves may be read from worker threads.
class Store {
public:
    virtual ~Store() = default;

    // The format's name, for people: "directory", "archive", "safetensors".
    // Code asks ownContainer() or the format's facts (datasets.h), never this.
    virtual std::string_view format() const = 0;
    virtual OwnContainer ownContainer() const { return OwnContainer::None; }
    virtual WholeCheck wholeCheck() const { return WholeCheck::TreeOnly; }
    // A dtype as the format's files name it ("F8_E4M3" in safetensors);
    // torch's name ("torch.float8_e4m3fn") where they use that.
    virtual std::string dtypeNameInFile(DType dtype) const { return std::string(dtypeName(dtype)); }
    // Formats whose structure is their own (a checkpoint's pickle, a
    // safetensors header, a numpy file) build the whole tree here, its
    // leaves read from `self` (this store); the others return nullptr and
    // the loader reads their meta.json files.
    virtual std::unique_ptr<Node> buildTree(const std::shared_ptr<const Store>& self) const;
    // What the details and --info say about how the format was read
    // ("no code is run"); "" when there is nothing to say.
    virtual std::string readingNote() const { return {}; }

    // The files the format reads, and its leaves' bytes.
    const Container& container() const { return *container_; }

    // What building the tree found that no node of it can hold: storages a
    // checkpoint holds beside a root that is one tensor (a leaf takes no
    // children). --check reports them with the tree's.
    std::vector<Failure> failuresBesideTheTree() const;
    void keepFailureBesideTheTree(const Failure& failure) const;

protected:
    explicit Store(std::shared_ptr<const Container> container)
        : held_(std::move(container)), container_(held_.get()) {}
    // A format that is its own container (derives from Container too).
    explicit Store(const Container& own) : container_(&own) {}

private:
    std::shared_ptr<const Container> held_;
    const Container* container_;
    mutable std::mutex besideMutex_;
    mutable std::vector<Failure> beside_;
};

// What a format is shown to decide whether it reads a location.
struct StoreProbe {
    std::string location;
    std::shared_ptr<const Transport> transport;
    SourceInfo info;
    // Files only: the file, opened once, and its first bytes (up to 4 KiB).
    std::shared_ptr<const ByteSource> source;
    std::string head;
    bool shardOpensModel = true;  // StoreOptions::shardOpensModel
    // Whether a format may read more of the file than `head` to decide (a
    // trailer): only once no format recognised the head, so that opening a
    // file costs no read beyond it (a request, over a network).
    bool mayReadBeyondHead = false;
};

// One container format.
class StoreFormat {
public:
    virtual ~StoreFormat() = default;
    virtual std::string_view name() const = 0;
    // How well this format reads the probed location: 0 not at all; the
    // format with the highest score opens it.
    virtual int score(const StoreProbe& probe) const = 0;
    virtual std::shared_ptr<const Store> open(const StoreProbe& probe,
                                              const StoreOptions& options) const = 0;
};

// Adds a format to the registry (one with the same name is replaced).
void registerStoreFormat(std::shared_ptr<const StoreFormat> format);

// Opens `location` (a path or a URL) with the registered format that reads
// it best. Throws Error naming the location when none does.
std::shared_ptr<const Store> openStore(const std::string& location, const StoreOptions& options);

// Joins relative store paths: joinPath("", "a") == "a", joinPath("a", "b") == "a/b".
std::string joinPath(const std::string& dir, const std::string& name);

}  // namespace tensordict
