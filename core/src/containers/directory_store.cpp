// Memmap directories (core/FORMAT.md section 2): one meta.json per node,
// one raw file per leaf, read through a Transport.
//
// Leaves are read into memory when small and mapped when large. Mappings
// are kept in a cache of at most kKeptMappings, so that a directory of any
// number of leaves never holds more than a few thousand mappings (the
// kernel allows a process 65,530): a leaf's bytes live while someone uses
// them, and the cache keeps the most recently used for the next reader.

#include <mutex>
#include <unordered_map>

#include "base/lru_cache.h"
#include "containers/builtin_stores.h"
#include "sources/mapping.h"
#include "tensordict/error.h"

namespace tensordict {
namespace {

// Mappings of large leaves kept for reuse.
constexpr std::uint64_t kKeptMappings = 256;

class DirectoryContainer final : public Container {
public:
    // Files smaller than `mapFrom` are read with one pread into memory: for
    // small files that is cheaper than mapping, faulting and unmapping
    // (bench_save: 20,000 leaves of 5 KiB), and it holds no mapping.
    DirectoryContainer(std::shared_ptr<const Transport> transport, std::string root,
                       std::uint64_t mapFrom)
        : transport_(std::move(transport)),
          root_(std::move(root)),
          realRoot_(transport_->resolvedPath(root_)),
          mapFrom_(mapFrom),
          mappings_(kKeptMappings, LruBytesCache::Cost::Count) {}

    const std::string& location() const override { return root_; }
    std::string describe(const std::string& rel) const override {
        return rel.empty() ? root_ : transport_->join(root_, rel);
    }

    std::optional<StorageInfo> stat(const std::string& rel) const override {
        const std::string path = describe(rel);
        SourceInfo found = transport_->stat(path);
        if (found.kind != SourceInfo::Kind::File)
            return std::nullopt;
        StorageInfo info;
        // A link, or a file in a directory reached through one, may lead out
        // of the dataset; a plain file in a plain directory never does.
        const auto slash = rel.rfind('/');
        if (found.isLink ||
            directoryLeavesRoot(slash == std::string::npos ? "" : rel.substr(0, slash)))
            info.setOutsideTarget(outsideTarget(path));
        info.kind = StorageKind::File;
        info.path = rel;
        info.size = found.size;
        info.storedSize = found.size;
        info.setVersion(std::move(found.version));
        return info;
    }

    bool hasDirectory(const std::string& rel) const override {
        return transport_->stat(describe(rel)).kind == SourceInfo::Kind::Directory;
    }

    std::string read(const std::string& rel, std::uint64_t cap) const override {
        const auto source = transport_->open(describe(rel));
        if (source->size() > cap)
            throw Error::corrupt(source->name(), "file is " + std::to_string(source->size()) +
                                                     " bytes, over the metadata size limit of " +
                                                     std::to_string(cap) + " bytes");
        std::string out(static_cast<std::size_t>(source->size()), '\0');
        source->readAt(0, out.data(), out.size());
        return out;
    }

    LeafBytes leafBytes(const StorageInfo& info, std::uint64_t nbytes, std::size_t) const override {
        if (nbytes == 0)
            return {};
        if (auto kept = mappings_.find(info.path, nbytes))
            return {kept->data, static_cast<std::size_t>(nbytes)};
        const auto source = openUnchanged(info);
        if (source->size() < nbytes)
            throw Error::truncated(source->name(), "file is " + std::to_string(source->size()) +
                                                       " bytes but the leaf needs " +
                                                       std::to_string(nbytes) +
                                                       " (was it truncated after opening?)");
        if (nbytes >= mapFrom_) {
            // Page-aligned mappings suit every dtype.
            LeafBytes mapped = source->map();
            if (mapped.data) {
                mappings_.insert(info.path, mapped);
                return {mapped.data, static_cast<std::size_t>(nbytes)};
            }
        }
        LeafBytes copy = allocateOwnedBuffer(nbytes);
        source->readOnce(0, copy.data.get(), nbytes);
        return copy;
    }

    // A file's transport that maps (local files) keeps large leaves in place.
    bool readsInPlace(const StorageInfo&) const override { return transport_->isLocal(); }

    LeafBytes leafBytesRange(const StorageInfo& info, std::uint64_t offset, std::uint64_t length,
                             std::size_t alignment) const override {
        if (readsInPlace(info))
            return Container::leafBytesRange(info, offset, length, alignment);
        LeafBytes part = allocateOwnedBuffer(length);
        readLeafRange(info, offset, part.data.get(), length);
        return part;
    }

    void readLeafRange(const StorageInfo& info, std::uint64_t offset, std::byte* out,
                       std::size_t n) const override {
        // Read, even where the file maps: a copy leaves nothing resident.
        openedSource(info)->readOnce(offset, out, n);
    }

    bool copyLeafRangeTo(const StorageInfo& info, std::uint64_t offset, std::size_t n, int fd,
                         std::uint64_t at) const override {
        return openedSource(info)->copyTo(offset, n, fd, at);
    }

private:
    // A streaming reader asks for one chunk after another: the file is
    // opened once (on a web server, opening is a request).
    std::shared_ptr<const ByteSource> openedSource(const StorageInfo& info) const {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (const auto it = opened_.find(info.path); it != opened_.end())
                return it->second;
        }
        auto source = openUnchanged(info);
        std::lock_guard<std::mutex> lock(mutex_);
        if (opened_.size() >= kOpenedKept)
            opened_.clear();
        opened_.emplace(info.path, source);
        return source;
    }

    // The leaf's file, refused if it is not the one the tree was built from.
    std::shared_ptr<const ByteSource> openUnchanged(const StorageInfo& info) const {
        auto source = transport_->open(describe(info.path));
        if (!info.version().empty() && source->version() != info.version())
            throw Error::corrupt(
                source->name(),
                "the file was replaced or changed since the tensordict was opened; open it again");
        return source;
    }

    // The real path when it is not under the root's real path, else "".
    std::string outsideTarget(const std::string& path) const {
        const std::string target = transport_->resolvedPath(path);
        if (target.empty() || realRoot_.empty())
            return {};
        const bool inside =
            target == realRoot_ || (target.size() > realRoot_.size() &&
                                    target.compare(0, realRoot_.size(), realRoot_) == 0 &&
                                    (target[realRoot_.size()] == '/' || realRoot_ == "/"));
        return inside ? std::string() : target;
    }

    // Whether the directory `rel` resolves out of the root (cached: leaves of
    // one directory share the answer).
    bool directoryLeavesRoot(const std::string& rel) const {
        if (rel.empty())
            return false;
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = leavesRoot_.find(rel);
        if (it == leavesRoot_.end())
            it = leavesRoot_.emplace(rel, !outsideTarget(describe(rel)).empty()).first;
        return it->second;
    }

    std::shared_ptr<const Transport> transport_;
    std::string root_;
    std::string realRoot_;
    std::uint64_t mapFrom_;
    mutable std::mutex mutex_;
    mutable std::unordered_map<std::string, bool> leavesRoot_;
    mutable LruBytesCache mappings_;
    // Files of a transport that cannot map, open for readLeafRange().
    static constexpr std::size_t kOpenedKept = 16;
    mutable std::unordered_map<std::string, std::shared_ptr<const ByteSource>> opened_;
};

class DirectoryFormat final : public StoreFormat {
public:
    std::string_view name() const override { return "directory"; }
    int score(const StoreProbe& probe) const override {
        return probe.info.kind == SourceInfo::Kind::Directory ? 100 : 0;
    }
    std::shared_ptr<const Store> open(const StoreProbe& probe,
                                      const StoreOptions& options) const override {
        return openDirectoryStore(probe.transport, probe.location, options);
    }
};

}  // namespace

std::shared_ptr<const Store> openDirectoryStore(std::shared_ptr<const Transport> transport,
                                                std::string folder, const StoreOptions& options) {
    while (folder.size() > 1 && folder.back() == '/')
        folder.pop_back();
    return std::make_shared<TensorDictStore>(
        std::make_shared<DirectoryContainer>(std::move(transport), std::move(folder),
                                             options.mapLeavesFrom),
        OwnContainer::Directory);
}

std::shared_ptr<const StoreFormat> directoryFormat() {
    return std::make_shared<DirectoryFormat>();
}

}  // namespace tensordict
