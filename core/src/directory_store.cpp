#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "mapping.h"
#include "store.h"
#include "tensordict/error.h"

namespace tensordict {
namespace {

class FileDescriptor {
public:
    explicit FileDescriptor(int fd) : fd_(fd) {}
    ~FileDescriptor() {
        if (fd_ >= 0)
            ::close(fd_);
    }
    FileDescriptor(const FileDescriptor&) = delete;
    FileDescriptor& operator=(const FileDescriptor&) = delete;
    int get() const { return fd_; }

private:
    int fd_;
};

// A memmap directory: one meta.json per node, one raw file per leaf.
class DirectoryStore final : public Store {
public:
    explicit DirectoryStore(std::string root) : root_(std::move(root)) {
        char* real = ::realpath(root_.c_str(), nullptr);
        realRoot_ = real ? real : root_;
        std::free(real);
    }

    SourceFormat format() const override { return SourceFormat::Directory; }
    const std::string& location() const override { return root_; }
    std::string describe(const std::string& rel) const override {
        return rel.empty() ? root_ : root_ + "/" + rel;
    }

    std::optional<StorageInfo> stat(const std::string& rel) const override {
        const std::string path = describe(rel);
        struct stat st {};
        if (::lstat(path.c_str(), &st) != 0)
            return std::nullopt;
        const bool link = S_ISLNK(st.st_mode);
        if ((link && ::stat(path.c_str(), &st) != 0) || !S_ISREG(st.st_mode))
            return std::nullopt;
        StorageInfo info;
        // A link, or a file in a directory reached through one, may lead out
        // of the dataset; a plain file in a plain directory never does.
        const auto slash = rel.rfind('/');
        if (link || directoryLeavesRoot(slash == std::string::npos ? "" : rel.substr(0, slash)))
            info.outsideTarget = outsideTarget(path);
        info.kind = StorageKind::File;
        info.path = rel;
        info.container = root_;
        info.size = static_cast<std::uint64_t>(st.st_size);
        info.storedSize = info.size;
        info.inode = static_cast<std::uint64_t>(st.st_ino);
        info.mtimeNs =
            static_cast<std::uint64_t>(st.st_mtim.tv_sec) * 1000000000ull + st.st_mtim.tv_nsec;
        return info;
    }

    bool hasDirectory(const std::string& rel) const override {
        struct stat st {};
        return ::stat(describe(rel).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
    }

    std::string read(const std::string& rel, std::uint64_t cap) const override {
        const std::string path = describe(rel);
        FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
        if (fd.get() < 0)
            throw Error(path, std::string("cannot open: ") + std::strerror(errno));
        struct stat st {};
        if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
            throw Error(path, "not a regular file");
        if (static_cast<std::uint64_t>(st.st_size) > cap)
            throw Error(path, "file is " + std::to_string(st.st_size) +
                                  " bytes, over the metadata size limit of " + std::to_string(cap) +
                                  " bytes");
        std::string out(static_cast<std::size_t>(st.st_size), '\0');
        std::size_t done = 0;
        while (done < out.size()) {
            const ssize_t n = ::read(fd.get(), out.data() + done, out.size() - done);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0)
                throw Error(path, std::string("read failed: ") + std::strerror(errno));
            if (n == 0)
                break;
            done += static_cast<std::size_t>(n);
        }
        out.resize(done);
        return out;
    }

    LeafBytes map(const StorageInfo& info, std::uint64_t nbytes, std::size_t) const override {
        // Page-aligned mappings suit every dtype.
        const std::string path = describe(info.path);
        FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
        if (fd.get() < 0)
            throw Error(path, std::string("cannot open: ") + std::strerror(errno));
        struct stat st {};
        if (::fstat(fd.get(), &st) != 0)
            throw Error(path, std::strerror(errno));
        if (!S_ISREG(st.st_mode))
            throw Error(path, "not a regular file");
        if (info.inode &&
            (static_cast<std::uint64_t>(st.st_ino) != info.inode ||
             static_cast<std::uint64_t>(st.st_mtim.tv_sec) * 1000000000ull + st.st_mtim.tv_nsec !=
                 info.mtimeNs))
            throw Error(
                path,
                "the file was replaced or changed since the tensordict was opened; open it again");
        if (static_cast<std::uint64_t>(st.st_size) < nbytes)
            throw Error(path, "file is " + std::to_string(st.st_size) +
                                  " bytes but the leaf needs " + std::to_string(nbytes) +
                                  " (was it truncated after opening?)");
        return mapFilePrivate(fd.get(), nbytes, path);
    }

private:
    // realpath(path) when it is not under the root's real path, else "".
    std::string outsideTarget(const std::string& path) const {
        char* real = ::realpath(path.c_str(), nullptr);
        if (!real)
            return {};
        std::string target = real;
        std::free(real);
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

    std::string root_;
    std::string realRoot_;
    mutable std::mutex mutex_;
    mutable std::unordered_map<std::string, bool> leavesRoot_;
};

}  // namespace

std::string joinPath(const std::string& dir, const std::string& name) {
    return dir.empty() ? name : dir + "/" + name;
}

std::shared_ptr<const Store> openDirectoryStore(const std::string& path) {
    std::string root = path;
    while (root.size() > 1 && root.back() == '/')
        root.pop_back();
    return std::make_shared<DirectoryStore>(root);
}

std::shared_ptr<const Store> openStore(const std::string& path, std::uint64_t inflateCacheBytes) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        throw Error(path, std::strerror(errno));
    if (S_ISDIR(st.st_mode))
        return openDirectoryStore(path);
    if (S_ISREG(st.st_mode))
        return openArchiveStore(path, inflateCacheBytes);
    throw Error(path, "neither a directory nor a regular file");
}

}  // namespace tensordict
