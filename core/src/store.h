#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "tensordict/error.h"
#include "tensordict/node.h"
#include "tensordict/tensordict.h"

namespace tensordict {

// Where a tensordict's files live: a directory or a zip archive. Paths are
// relative to the root and use '/' ("b/c.memmap"). Implementations are
// thread-safe: leaves may be mapped from worker threads.
class Store {
public:
    virtual ~Store() = default;

    virtual SourceFormat format() const = 0;
    // The directory or archive on disk.
    virtual const std::string& location() const = 0;
    // How to name a relative path in messages: "/data/ds/b/c.memmap" or "/data/ds.tdz:b/c.memmap".
    virtual std::string describe(const std::string& rel) const = 0;
    // A regular file (or archive entry) at rel, or nullopt.
    virtual std::optional<StorageInfo> stat(const std::string& rel) const = 0;
    // A directory at rel (in an archive: any entry under "rel/").
    virtual bool hasDirectory(const std::string& rel) const = 0;
    // The whole content of a small file; throws Error if missing or over `cap` bytes.
    virtual std::string read(const std::string& rel, std::uint64_t cap) const = 0;
    // The first `nbytes` of a file as writable (copy-on-write) memory whose
    // address is a multiple of `alignment`. The file itself never changes.
    virtual LeafBytes map(const StorageInfo& info, std::uint64_t nbytes,
                          std::size_t alignment) const = 0;
    // Where an archive entry's payload starts in the archive (read from its
    // local header once); nullopt for files of a directory.
    virtual std::optional<std::uint64_t> payloadOffset(const StorageInfo&) const {
        return std::nullopt;
    }
    // A compressed entry's payload, still compressed, in place in the archive.
    virtual LeafBytes compressedPayload(const StorageInfo& info) const {
        throw Error(describe(info.path), "not a compressed entry");
    }
    // Whether map() would return bytes already in memory (no inflating).
    virtual bool isResident(const StorageInfo&) const { return false; }

    // Integrity problems found by readers (a CRC-32 mismatch), per file.
    void reportIntegrityProblem(const StorageInfo& info, const std::string& message) const {
        std::lock_guard<std::mutex> lock(problemsMutex_);
        problems_[info.path] = message;
    }
    std::string integrityProblem(const StorageInfo& info) const {
        std::lock_guard<std::mutex> lock(problemsMutex_);
        const auto it = problems_.find(info.path);
        return it == problems_.end() ? std::string() : it->second;
    }

private:
    mutable std::mutex problemsMutex_;
    mutable std::map<std::string, std::string> problems_;
};

// Opens `path` as a directory store or, for a regular file, an archive store.
// `inflateCacheBytes`: how much memory an archive's cache of inflated
// entries may hold (LoadOptions::inflateCacheBytes).
std::shared_ptr<const Store> openStore(const std::string& path, std::uint64_t inflateCacheBytes);

std::shared_ptr<const Store> openDirectoryStore(const std::string& path);
std::shared_ptr<const Store> openArchiveStore(const std::string& path,
                                              std::uint64_t inflateCacheBytes);

// Joins relative store paths: join("", "a") == "a", join("a", "b") == "a/b".
std::string joinPath(const std::string& dir, const std::string& name);

}  // namespace tensordict
