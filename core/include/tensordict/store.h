#pragma once

// Containers of a tensordict's files, and the registry that picks one for
// a location by its content.
//
// A Store reads one container (a memmap directory, a .tdz archive) through
// a Transport and its ByteSources (source.h). Paths inside a store are
// relative to its root and use '/' ("b/c.memmap"). The loader builds the
// node tree from a store's metadata; a leaf asks its store for its bytes
// the first time they are needed. A new container format is one Store
// class plus one StoreFormat registered with registerStoreFormat().

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "tensordict/bytes.h"
#include "tensordict/node.h"
#include "tensordict/source.h"
#include "tensordict/store_options.h"

namespace tensordict {

struct RecordedPoints;  // the library's own (access points of a deflate stream)

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

// What a reader that works on a record's compressed bytes asks of its
// container (a zip archive's deflated, bzip2 or LZMA entries), from
// Store::compressedRecords(). Thread-safe.
class CompressedRecords {
public:
    // A compressed entry's payload, still compressed.
    virtual LeafBytes compressedPayload(const StorageInfo& info) const = 0;
    // Whether Store::leafBytesRange() of this entry inflates only the parts
    // asked for (a deflate entry with access points, its own or recorded by
    // a first pass over it).
    virtual bool hasRandomAccess(const StorageInfo& info) const = 0;
    // How far apart a reader that inflates this entry front to back should
    // record access points on the way (a large deflate entry without any),
    // 0 for none; and where it hands them when it is through.
    virtual std::uint64_t recordPointsEvery(const StorageInfo& info) const = 0;
    virtual void keepRecordedPoints(const StorageInfo& info,
                                    std::shared_ptr<const RecordedPoints> points) const = 0;

protected:
    ~CompressedRecords() = default;
};

// Thread-safe: leaves may be read from worker threads.
class Store {
public:
    virtual ~Store() = default;

    // The container format's name, for people: "directory", "archive".
    // Code asks ownContainer() or the format's facts (datasets.h), never this.
    virtual std::string_view format() const = 0;
    virtual OwnContainer ownContainer() const { return OwnContainer::None; }
    virtual WholeCheck wholeCheck() const { return WholeCheck::TreeOnly; }
    // The container's location: a directory or a file, as opened.
    virtual const std::string& location() const = 0;
    // How to name a relative path in messages: "/data/ds/b/c.memmap" or "/data/ds.tdz:b/c.memmap".
    virtual std::string describe(const std::string& rel) const = 0;
    // A regular file (or archive entry) at rel, or nullopt.
    virtual std::optional<StorageInfo> stat(const std::string& rel) const = 0;
    // A directory at rel (in an archive: any entry under "rel/").
    virtual bool hasDirectory(const std::string& rel) const = 0;
    // The whole content of a small file; throws Error if missing or over `cap` bytes.
    virtual std::string read(const std::string& rel, std::uint64_t cap) const = 0;
    // The first `nbytes` of a leaf's file as writable (copy-on-write) memory
    // whose address is a multiple of `alignment`: mapped in place where the
    // source can map, otherwise read or inflated. The file never changes.
    virtual LeafBytes leafBytes(const StorageInfo& info, std::uint64_t nbytes,
                                std::size_t alignment) const = 0;
    // Where an archive entry's payload starts in the archive (read from its
    // local header once); nullopt for files of a directory.
    virtual std::optional<std::uint64_t> payloadOffset(const StorageInfo&) const {
        return std::nullopt;
    }
    // Whether leafBytes() of this plain (uncompressed) leaf maps it in place,
    // so that holding all of it costs no memory; false for a source that
    // cannot map (a web server): such a leaf is better read in ranges.
    virtual bool readsInPlace(const StorageInfo&) const { return true; }
    // Bytes [offset, offset + n) of a plain leaf that does not read in
    // place, into `out` (no buffer of its own: a streaming reader's chunk).
    virtual void readLeafRange(const StorageInfo& info, std::uint64_t offset, std::byte* out,
                               std::size_t n) const;
    // The same bytes copied into the file open as `fd`, at `at`, by
    // ByteSource::copyTo (in the kernel); false, with nothing written, where
    // the store cannot: the caller reads and writes them.
    virtual bool copyLeafRangeTo(const StorageInfo&, std::uint64_t, std::size_t, int,
                                 std::uint64_t) const {
        return false;
    }
    // A dtype as the format's files name it ("F8_E4M3" in safetensors);
    // torch's name ("torch.float8_e4m3fn") where they use that.
    virtual std::string dtypeNameInFile(DType dtype) const { return std::string(dtypeName(dtype)); }
    // Bytes [offset, offset + length) of a leaf's file (the whole file read
    // through leafBytes() unless the store can do better).
    virtual LeafBytes leafBytesRange(const StorageInfo& info, std::uint64_t offset,
                                     std::uint64_t length, std::size_t alignment) const;
    // The container's compressed records (StorageKind::CompressedEntry
    // leaves), nullptr where it has none.
    virtual const CompressedRecords* compressedRecords() const { return nullptr; }
    // The parts a leaf is gathered from, when it is not one range of one
    // file (a DCP tensor's chunks): one object each, {file, offset, length,
    // offsets, sizes}, the last two in elements of the leaf; empty otherwise.
    virtual Value::List leafParts(const StorageInfo&) const { return {}; }
    // Whether leafBytes() would return bytes already in memory (no inflating).
    virtual bool isResident(const StorageInfo&) const { return false; }

    // Formats whose structure is their own (a checkpoint's pickle, a
    // safetensors header, a numpy file) build the whole tree here, its
    // leaves read from `self` (this store); the others return nullptr and
    // the loader reads their meta.json files.
    virtual std::unique_ptr<Node> buildTree(const std::shared_ptr<const Store>& self) const;
    // What the details and --info say about how the format was read
    // ("no code is run"); "" when there is nothing to say.
    virtual std::string readingNote() const { return {}; }

    // Integrity problems found by readers (a CRC-32 mismatch), per file.
    void reportIntegrityProblem(const StorageInfo& info, const std::string& message) const;
    virtual std::string integrityProblem(const StorageInfo& info) const;

private:
    mutable std::mutex problemsMutex_;
    mutable std::map<std::string, std::string> problems_;
    // Set by the first problem: a listing of 72,000 leaves asks each, and
    // nearly every store has none.
    mutable std::atomic<bool> hasProblems_{false};
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

// The elements of a leaf whose StorageInfo is not plain (an offset, strides,
// big-endian), as C-ordered little-endian bytes: in place where they already
// are (contiguous, little-endian, aligned), otherwise copied into that
// order. Throws Error naming `where` when the view reaches past its storage.
LeafBytes viewBytes(const Store& store, const TensorLeaf& leaf, const std::string& where);

// Joins relative store paths: joinPath("", "a") == "a", joinPath("a", "b") == "a/b".
std::string joinPath(const std::string& dir, const std::string& name);

}  // namespace tensordict
