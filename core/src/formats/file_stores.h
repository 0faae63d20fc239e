#pragma once

// What the formats of formats/ share: one file as a container (a .npy, a
// safetensors file, a pre-1.6 checkpoint), a folder's files as one (a
// sharded model, a distributed checkpoint), and a format over a zip file's
// entries (a torch checkpoint, a .npz). Each format adds how it finds its
// tree (Store::buildTree).

#include <memory>
#include <mutex>
#include <string>

#include "containers/builtin_stores.h"
#include "tensordict/store.h"

namespace tensordict {

// The name of a zip file's first entry, from its first local header in
// `head` (the file's first bytes); "" when it is not there.
std::string zipFirstEntryName(const std::string& head);

// The little-endian uint64 in the first 8 bytes of `bytes` (a safetensors
// header's length, a consolidated file's trailer).
std::uint64_t littleEndianU64(std::string_view bytes);

// Throws Error (truncated) naming `name` unless bytes [offset, offset + n)
// lie within its `size` bytes.
void checkWithin(const std::string& name, std::uint64_t offset, std::uint64_t n,
                 std::uint64_t size);

// Bytes [offset, offset + length) of `file` as a file of their own (a
// stream inside a larger file: a DCP chunk's torch.save stream), named
// "FILE@OFFSET" in messages. Maps where `file` maps.
std::shared_ptr<const ByteSource> sliceOf(std::shared_ptr<const ByteSource> file,
                                          std::uint64_t offset, std::uint64_t length);

// One file (a .npy, a safetensors file, a pre-1.6 checkpoint) as a
// container: the file is its one record, named by its base name.
class SingleFile final : public Container {
public:
    explicit SingleFile(std::shared_ptr<const ByteSource> source);

    const std::string& location() const override { return source_->name(); }
    std::string describe(const std::string& rel) const override;
    std::optional<StorageInfo> stat(const std::string& rel) const override;
    bool hasDirectory(const std::string&) const override { return false; }
    std::string read(const std::string& rel, std::uint64_t cap) const override;
    // The file's first nbytes: mapped where the source maps, else read.
    LeafBytes leafBytes(const StorageInfo& info, std::uint64_t nbytes,
                        std::size_t alignment) const override;
    // Read, even where the file maps: a copy leaves nothing resident.
    void readLeafRange(const StorageInfo& info, std::uint64_t offset, std::byte* out,
                       std::size_t n) const override;
    bool copyLeafRangeTo(const StorageInfo& info, std::uint64_t offset, std::size_t n, int fd,
                         std::uint64_t at) const override;

    const ByteSource& source() const { return *source_; }
    // The file as a leaf's storage (offset 0).
    StorageInfo fileInfo() const;
    // `n` bytes at `offset`; throws Error naming the file when they are past its end.
    std::string readRange(std::uint64_t offset, std::uint64_t n, const char* what) const;

private:
    // Throws Error unless bytes [offset, offset + n) of the file hold the leaf `info`.
    void requireLeafRange(const StorageInfo& info, std::uint64_t offset, std::size_t n) const;
    // The file's mapping if a leaf has mapped it already (none otherwise).
    LeafBytes currentMapping() const;

    std::shared_ptr<const ByteSource> source_;
    std::string name_;
    mutable std::mutex mutex_;
    mutable LeafBytes mapping_;
    mutable bool mappingTried_ = false;
};

// A format read from one file: the file is its container.
class SingleFileStore : public Store {
public:
    SingleFileStore(std::shared_ptr<const SingleFile> file, std::string_view format)
        : Store(file), file_(std::move(file)), format_(format) {}
    SingleFileStore(std::shared_ptr<const ByteSource> source, std::string_view format)
        : SingleFileStore(std::make_shared<SingleFile>(std::move(source)), format) {}

    std::string_view format() const override { return format_; }

protected:
    const SingleFile& file() const { return *file_; }
    const std::shared_ptr<const SingleFile>& sharedFile() const { return file_; }

private:
    std::shared_ptr<const SingleFile> file_;
    std::string format_;
};

// The files of one folder, reached through its transport (a local folder,
// a URL), as a container: what formats made of several files share (a
// sharded model, a distributed checkpoint). A format whose leaves are read
// from the folder's files in its own way (gathered from chunks) derives
// from it; one whose leaves belong to stores of their own (a shard's)
// holds it.
class FolderContainer : public Container {
public:
    FolderContainer(std::shared_ptr<const Transport> transport, std::string folder)
        : transport_(std::move(transport)), folder_(std::move(folder)) {}

    const std::string& location() const override { return folder_; }
    std::string describe(const std::string& rel) const override;
    std::optional<StorageInfo> stat(const std::string& rel) const override;
    bool hasDirectory(const std::string&) const override { return false; }
    std::string read(const std::string& rel, std::uint64_t cap) const override;
    // No leaf is a file of the folder itself: throws Error (invalid).
    LeafBytes leafBytes(const StorageInfo& info, std::uint64_t nbytes,
                        std::size_t alignment) const override;

    const Transport& transport() const { return *transport_; }
    const std::shared_ptr<const Transport>& sharedTransport() const { return transport_; }
    // The location of a file of the folder.
    std::string pathOf(const std::string& rel) const { return transport_->join(folder_, rel); }

private:
    std::shared_ptr<const Transport> transport_;
    std::string folder_;
};

// What is at a location (Missing when it cannot be looked at): how formats
// made of several files probe a folder's members.
SourceInfo::Kind kindAt(const Transport& transport, const std::string& location);

// The folder a file's location is in: "/a/b" for "/a/b/c", "." for "c".
std::string folderOfLocation(const std::string& location);

// A format read from a zip file's entries (a checkpoint, a .npz), not the
// archive itself: the zip is its container.
class ZipBackedStore : public Store {
public:
    ZipBackedStore(std::shared_ptr<const ZipContainer> zip, std::string_view format)
        : Store(zip), zip_(std::move(zip)), format_(format) {}

    std::string_view format() const override { return format_; }

protected:
    const ZipContainer& zip() const { return *zip_; }
    // The first `n` bytes of an entry (at most its size), inflated if need be.
    std::string entryPrefix(const StorageInfo& entry, std::uint64_t n) const;

private:
    std::shared_ptr<const ZipContainer> zip_;
    std::string format_;
};

}  // namespace tensordict
