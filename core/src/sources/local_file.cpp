// The local file system as a transport: pread for ranges, mmap for the
// fast path.

#include "sources/local_file.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "sources/copy_steps.h"
#include "sources/mapping.h"
#include "tensordict/error.h"

namespace tensordict {
namespace {

// "inode:seconds.nanoseconds" of the last modification, formatted in one
// step: every leaf of a directory records one when the tree is read.
std::string versionOf(const struct stat& st) {
    constexpr int kDigits = 20;  // of any 64-bit integer
    char text[3 * kDigits + 2];
    char* at = std::to_chars(text, text + kDigits, st.st_ino).ptr;
    *at++ = ':';
    at = std::to_chars(at, at + kDigits, st.st_mtim.tv_sec).ptr;
    *at++ = '.';
    at = std::to_chars(at, at + kDigits, st.st_mtim.tv_nsec).ptr;
    return std::string(text, at);
}

// "file:///data/x.tdz" -> "/data/x.tdz"; plain paths unchanged. A pointer
// into `location` (the tail of a string is still terminated): no copy.
const char* localPath(const std::string& location) {
    constexpr std::string_view prefix = "file://";
    if (location.compare(0, prefix.size(), prefix) == 0)
        return location.c_str() + prefix.size();
    return location.c_str();
}

// Whether copy_file_range into `fd` copies on a file server (NFS 4.2,
// SMB): there the bytes never cross the network, at any offsets.
bool copiesOnServer(int fd) {
    struct statfs fs {};
    if (::fstatfs(fd, &fs) != 0)
        return false;
    const auto type = static_cast<unsigned long>(fs.f_type);
    return type == NFS_SUPER_MAGIC || type == SMB2_SUPER_MAGIC || type == CIFS_SUPER_MAGIC;
}

// The path of the file open as `fd`, for messages; "" when unknown.
std::string pathOfOpenFile(int fd) {
    char link[64], path[4096];
    std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    const ssize_t n = ::readlink(link, path, sizeof path);
    return n > 0 ? std::string(path, static_cast<std::size_t>(n)) : std::string();
}

// Whether a kernel copy from `offset` to `at` pays: only where the two
// offsets are equally far into their pages can the kernel share extents
// or move whole pages. Otherwise it copies each page in two parts through
// the page cache: 1 GiB from four files into one at offsets 208 bytes
// apart took 0.33-0.45 s, read and written in 1 MiB steps on two threads
// 0.19-0.24 s (cp of the four files: 0.25-0.34 s).
bool kernelCopyPays(std::uint64_t offset, std::uint64_t at, int fd) {
    static const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    return offset % page == at % page || copiesOnServer(fd);
}

// An open file: later reads come from this file even if its path is
// replaced meanwhile.
class LocalFile final : public ByteSource {
public:
    explicit LocalFile(std::string path) : path_(std::move(path)) {
        fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        if (fd_ < 0) {
            const std::string why = std::string("cannot open: ") + std::strerror(errno);
            if (errno == ENOENT || errno == ENOTDIR)
                throw Error::notFound(path_, why);
            if (errno == EACCES || errno == EPERM)
                throw Error::denied(path_, why);
            throw Error::io(path_, why);
        }
        struct stat st {};
        const bool statted = ::fstat(fd_, &st) == 0;
        if (!statted || !S_ISREG(st.st_mode)) {
            const std::string why = !statted              ? std::strerror(errno)
                                    : S_ISDIR(st.st_mode) ? "is a directory, not a file"
                                                          : "not a regular file";
            ::close(fd_);
            if (!statted)
                throw Error::io(path_, why);
            throw Error::unsupported(path_, why);
        }
        size_ = static_cast<std::uint64_t>(st.st_size);
        version_ = versionOf(st);
    }
    ~LocalFile() override { ::close(fd_); }
    LocalFile(const LocalFile&) = delete;
    LocalFile& operator=(const LocalFile&) = delete;

    const std::string& name() const override { return path_; }
    std::uint64_t size() const override { return size_; }
    const std::string& version() const override { return version_; }

    void readAt(std::uint64_t offset, void* out, std::size_t n) const override {
        std::size_t done = 0;
        while (done < n) {
            const ssize_t r = ::pread(fd_, static_cast<char*>(out) + done, n - done,
                                      static_cast<off_t>(offset + done));
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0)
                throw Error::io(path_, std::string("read failed: ") + std::strerror(errno));
            if (r == 0)
                throw Error::truncated(path_,
                                       "the file ends at " + std::to_string(offset + done) +
                                           " bytes, before the data it should hold (truncated?)");
            done += static_cast<std::size_t>(r);
        }
    }

    LeafBytes map() const override { return mapFilePrivate(fd_, size_, path_); }

    bool copyTo(std::uint64_t offset, std::size_t n, int fd, std::uint64_t at) const override {
        if (!kernelCopyPays(offset, at, fd)) {
            std::vector<std::byte> buffer;
            copyInSteps([this](std::uint64_t from, std::byte* out,
                               std::size_t count) { readAt(from, out, count); },
                        offset, n, fd, at, buffer, pathOfOpenFile(fd), kLocalCopyStep);
            return true;
        }
        std::size_t done = 0;
        while (done < n) {
            loff_t from = static_cast<loff_t>(offset + done), to = static_cast<loff_t>(at + done);
            const ssize_t r = ::copy_file_range(fd_, &from, fd, &to, n - done, 0);
            if (r < 0 && errno == EINTR)
                continue;
            // Not between these two files (another file system, a kernel
            // without it): nothing was written yet, the caller copies.
            if (r < 0 && done == 0 &&
                (errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP))
                return false;
            // Some file systems (FUSE, virtual files) copy nothing and say so
            // with 0: the caller reads, and finds a truncation if there is one.
            if (r == 0 && done == 0)
                return false;
            if (r < 0)
                throw Error::io(path_, std::string("copying failed: ") + std::strerror(errno));
            if (r == 0)
                throw Error::truncated(path_,
                                       "the file ends at " + std::to_string(offset + done) +
                                           " bytes, before the data it should hold (truncated?)");
            done += static_cast<std::size_t>(r);
        }
        return true;
    }

private:
    std::string path_;
    int fd_ = -1;
    std::uint64_t size_ = 0;
    std::string version_;
};

class LocalTransport final : public Transport {
public:
    std::string_view scheme() const override { return "file"; }
    bool isLocal() const override { return true; }

    SourceInfo stat(const std::string& location) const override {
        const char* path = localPath(location);
        SourceInfo info;
        struct stat st {};
        if (::lstat(path, &st) != 0)
            return info;
        info.isLink = S_ISLNK(st.st_mode);
        if (info.isLink && ::stat(path, &st) != 0)
            return info;  // a dangling link
        if (S_ISREG(st.st_mode)) {
            info.kind = SourceInfo::Kind::File;
            info.size = static_cast<std::uint64_t>(st.st_size);
            info.version = versionOf(st);
        } else {
            info.kind = S_ISDIR(st.st_mode) ? SourceInfo::Kind::Directory : SourceInfo::Kind::Other;
        }
        return info;
    }

    std::shared_ptr<const ByteSource> open(const std::string& location) const override {
        return std::make_shared<LocalFile>(localPath(location));
    }

    std::string resolvedPath(const std::string& location) const override {
        char* real = ::realpath(localPath(location), nullptr);
        if (!real)
            return {};
        std::string out = real;
        std::free(real);
        return out;
    }
};

}  // namespace

std::shared_ptr<const Transport> localTransport() {
    static const auto transport = std::make_shared<LocalTransport>();
    return transport;
}

}  // namespace tensordict
