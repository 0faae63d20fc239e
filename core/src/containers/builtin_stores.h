#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tensordict/store.h"

namespace tensordict {

// The formats registered from the start.
std::shared_ptr<const StoreFormat> directoryFormat();  // memmap directories
std::shared_ptr<const StoreFormat> archiveFormat();    // .tdz archives

// A memmap directory's store, whatever else the folder would be opened as
// (a replay buffer's storage/); its raw files read as leaves too.
std::shared_ptr<const Store> openDirectoryStore(std::shared_ptr<const Transport> transport,
                                                std::string folder, const StoreOptions& options);

// An archive read from any source (the fuzz targets and tests use it directly).
std::shared_ptr<const Store> openArchiveStore(std::shared_ptr<const ByteSource> source,
                                              std::uint64_t inflateCacheBytes);

// Any zip file's entries, for the formats built on zip (torch checkpoints, .npz).
class ZipContainer : public Container {
public:
    // The names of the file entries, in central directory order.
    virtual std::vector<std::string> entryNames() const = 0;
};
std::shared_ptr<const ZipContainer> openZipContainer(std::shared_ptr<const ByteSource> source,
                                                     std::uint64_t inflateCacheBytes);

// tensordict's own containers read as what they are: a memmap directory or
// a .tdz archive, whose tree the loader reads from their meta.json files.
class TensorDictStore final : public Store {
public:
    TensorDictStore(std::shared_ptr<const Container> container, OwnContainer kind)
        : Store(std::move(container)), kind_(kind) {}

    std::string_view format() const override {
        return kind_ == OwnContainer::Archive ? "archive" : "directory";
    }
    OwnContainer ownContainer() const override { return kind_; }

private:
    OwnContainer kind_;
};

// The formats that read the files PyTorch users have (formats/).
std::shared_ptr<const StoreFormat> torchCheckpointFormat();  // torch.save zip files
std::shared_ptr<const StoreFormat> legacyTorchFormat();      // torch.save before 1.6
std::shared_ptr<const StoreFormat> npyFormat();
std::shared_ptr<const StoreFormat> npzFormat();
std::shared_ptr<const StoreFormat> safetensorsFormat();
std::shared_ptr<const StoreFormat> consolidatedFormat();
std::shared_ptr<const StoreFormat> shardedFormat();
std::shared_ptr<const StoreFormat> modelFolderFormat();  // a folder of one model file
std::shared_ptr<const StoreFormat> dcpFormat();          // torch.distributed.checkpoint directories
std::shared_ptr<const StoreFormat> replayBufferFormat();  // TorchRL ReplayBuffer.dumps() folders
std::shared_ptr<const StoreFormat> stackFormat();         // folders of tensordict chunks

// A torch.save stream (either layout) in `source`, read as its own store
// (a DCP chunk); throws Error naming it when it is not one.
std::shared_ptr<const Store> openTorchStream(std::shared_ptr<const ByteSource> source,
                                             const StoreOptions& options);

}  // namespace tensordict
