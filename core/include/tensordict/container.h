#pragma once

// The files of one location, and how a leaf's bytes are read from them.
//
// A Container is the bytes side of an opened location: a memmap directory,
// a .tdz archive's entries, one file, a folder of shards. It names records
// by paths relative to its root, with '/' ("b/c.memmap"), and reads them
// through a Transport and its ByteSources (source.h). A format (store.h)
// holds the container it reads and builds the tree from it; a leaf asks
// its store's container for its bytes the first time they are needed. A
// container may span many files, and a leaf may be gathered from parts in
// several records (leafParts()).

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "tensordict/bytes.h"
#include "tensordict/node.h"

namespace tensordict {

struct RecordedPoints;  // the library's own (access points of a deflate stream)

// What a reader that works on a record's compressed bytes asks of its
// container (a zip archive's deflated, bzip2 or LZMA entries), from
// Container::compressedRecords(). Thread-safe.
class CompressedRecords {
public:
    // A compressed entry's payload, still compressed.
    virtual LeafBytes compressedPayload(const StorageInfo& info) const = 0;
    // Whether Container::leafBytesRange() of this entry inflates only the parts
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

// A location's records, and its leaves' bytes. Thread-safe: leaves may be
// read from worker threads.
class Container {
public:
    virtual ~Container() = default;

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
    // Where a leaf's stored bytes start in its file, when the leaf's bytes
    // are not a range of it: an archive entry's payload (read from its local
    // header once), a packed tensor's codes; nullopt for files of a directory.
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
    // the container cannot: the caller reads and writes them.
    virtual bool copyLeafRangeTo(const StorageInfo&, std::uint64_t, std::size_t, int,
                                 std::uint64_t) const {
        return false;
    }
    // Bytes [offset, offset + length) of a leaf's file (the whole file read
    // through leafBytes() unless the container can do better).
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

    // Integrity problems found by readers (a CRC-32 mismatch), per file.
    void reportIntegrityProblem(const StorageInfo& info, const std::string& message) const;
    std::string integrityProblem(const StorageInfo& info) const;

private:
    mutable std::mutex problemsMutex_;
    mutable std::map<std::string, std::string> problems_;
    // Set by the first problem: a listing of 72,000 leaves asks each, and
    // nearly every container has none.
    mutable std::atomic<bool> hasProblems_{false};
};

// The elements of a leaf whose StorageInfo is not plain (an offset, strides,
// big-endian), as C-ordered little-endian bytes: in place where they already
// are (contiguous, little-endian, aligned), otherwise copied into that
// order. Throws Error naming `where` when the view reaches past its storage.
LeafBytes viewBytes(const Container& files, const TensorLeaf& leaf, const std::string& where);

}  // namespace tensordict
