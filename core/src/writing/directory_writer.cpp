#include "writing/directory_writer.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <vector>

#include "sources/copy_steps.h"
#include "tensordict/cancel.h"
#include "tensordict/error.h"
#include "tensordict/worker_threads.h"
#include "writing/atomic_file.h"

namespace tensordict {
namespace {

constexpr std::size_t kWriteChunk = 4u << 20;
constexpr std::size_t kCopyPiece = 64u << 20;  // a streamed leaf's piece: one copy_file_range
constexpr std::size_t kReadPiece = 16u << 20;  // or one read and one write

std::string sysError(const char* what) {
    return std::string(what) + ": " + std::strerror(errno);
}

void makeDirectory(const std::string& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) {
        if (S_ISLNK(st.st_mode))
            throw Error::denied(path, "refusing to write through a symbolic link");
        if (!S_ISDIR(st.st_mode))
            throw Error::invalid(path, "exists and is not a directory");
        return;
    }
    if (::mkdir(path.c_str(), 0777) != 0 && errno != EEXIST)
        throw Error::io(path, sysError("cannot create directory"));
}

// A streamed leaf's `size` bytes into `fd`: copied piece by piece
// where the leaf's store can (in the kernel, or by a local file
// through its own small buffer; one after another: copies into one file
// contend for it), else read into buffers and written on `threads`
// threads (the save's own: a file's pieces are not more work than files).
void streamLeaf(const Node& leaf, std::size_t size, int fd, const std::string& path,
                const std::string& shown, int threads, ProgressTracker& progress) {
    std::size_t copied = 0;
    while (copied < size) {
        progress.throwIfCancelled(path);
        const std::size_t n = std::min(kCopyPiece, size - copied);
        if (!leaf.copyInto(copied, n, fd, copied))
            break;
        copied += n;
        progress.add(n, shown);
    }
    const std::size_t pieces = (size - copied + kReadPiece - 1) / kReadPiece;
    parallelFor(
        pieces, std::max(1, threads), [] { return std::vector<std::byte>(); },
        [&](std::vector<std::byte>& buffer, std::size_t i) {
            const std::size_t at = copied + i * kReadPiece, n = std::min(kReadPiece, size - at);
            buffer.resize(n);
            leaf.readInto(at, buffer.data(), n);
            writeAllAt(fd, buffer.data(), n, at, path);
            progress.add(n, shown);
        },
        &progress.cancelToken(), path);
}

void writeFile(const std::string& root, const PlannedFile& file, int threads,
               ProgressTracker& progress) {
    const std::string path = root + "/" + file.path;
    progress.throwIfCancelled(path);
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
        throw Error::denied(path, "refusing to write through a symbolic link");
    // A leaf gathered from pieces, or on a server, is streamed: copied in
    // the kernel piece by piece where it can be, else read into a buffer,
    // never gathered whole in memory first.
    const bool streams = file.leaf && file.leaf->readsAnyRange() && file.leaf->hasRandomAccess();
    const LeafBytes bytes = streams ? LeafBytes() : file.bytes();
    const std::size_t size = streams ? static_cast<std::size_t>(file.size) : bytes.size;
    // Written under a temporary name and renamed over the old file: whoever
    // still maps the old file keeps its bytes (no truncation under a mapping).
    const std::string temp = path + ".tdstudio-part";
    const int fd =
        ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0)
        throw Error::io(path, sysError("cannot create file"));
    struct Unlink {
        const std::string& name;
        bool armed = true;
        ~Unlink() {
            if (armed)
                ::unlink(name.c_str());
        }
    } cleanup{temp};
    if (streams) {
        try {
            streamLeaf(*file.leaf, size, fd, path, file.path, threads, progress);
        } catch (...) {
            ::close(fd);
            throw;
        }
    }
    std::size_t done = streams ? size : 0;
    while (done < size) {
        if (progress.cancelled()) {
            ::close(fd);
            throw Cancelled(path);
        }
        const std::size_t n = std::min(kWriteChunk, size - done);
        const ssize_t w = ::pwrite(fd, bytes.data.get() + done, n, static_cast<off_t>(done));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            const bool lostPages = w < 0 && errno == EFAULT;  // the kernel's copy from a mapping
            const std::string why = sysError("write failed");
            ::close(fd);
            if (lostPages)
                throw Error::changed(file.keyText);
            throw Error::io(path, why + " after " + std::to_string(done) + " of " +
                                      std::to_string(size) + " bytes");
        }
        done += static_cast<std::size_t>(w);
        progress.add(static_cast<std::uint64_t>(w), file.path);
    }
    if (::close(fd) != 0)
        throw Error::io(path, sysError("close failed"));
    if (::rename(temp.c_str(), path.c_str()) != 0)
        throw Error::io(path, sysError("cannot rename into place"));
    cleanup.armed = false;
    progress.fileDone(file.path);
}

}  // namespace

void writeDirectory(const std::string& root, const WritePlan& plan, int threads,
                    ProgressTracker& progress, const std::set<std::string>& keep) {
    makeDirectory(root);
    for (const std::string& dir : plan.directories)
        makeDirectory(root + "/" + dir);
    progress.started(root);

    // A streamed leaf's pieces share the threads the files do not take:
    // threads x threads readers would hold as many buffers.
    const int pieceThreads =
        plan.files.size() >= std::size_t(std::max(1, threads)) ? 1 : std::max(1, threads);
    auto writeOne = [&](const PlannedFile& file) {
        if (keep.count(file.path)) {
            progress.add(file.size, file.path);
            progress.fileDone(file.path);
            return;
        }
        writeFile(root, file, pieceThreads, progress);
    };
    if (threads <= 1) {
        for (const PlannedFile& file : plan.files)
            writeOne(file);
        return;
    }
    // Python's threaded writer: every file is an independent task, taken in
    // turn by `threads` threads.
    parallelFor(plan.files.size(), threads, [&](std::size_t i) { writeOne(plan.files[i]); });
}

void syncTree(const std::string& root) {
    const int fd = ::open(root.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        throw Error::io(root, sysError("cannot open to flush"));
    // One syncfs flushes every file of the new tree; then the directories' entries.
    const int rc = ::syncfs(fd);
    ::close(fd);
    if (rc != 0)
        throw Error::io(root, sysError("cannot flush to disk"));
}

}  // namespace tensordict
