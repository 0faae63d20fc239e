// tensordict::save(): the write plan, one writer per target (directory,
// archive, memory), progress and cancel, the atomic commit, and loading the
// result back mapped and locked.

#include "tensordict/save.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>

#include "sources/mapping.h"
#include "tensordict/error.h"
#include "tensordict/keys.h"
#include "tensordict/store.h"
#include "tree/node_builder.h"
#include "tree/shared_value.h"
#include "writing/archive_writer.h"
#include "writing/atomic_file.h"
#include "writing/directory_writer.h"
#include "writing/progress.h"
#include "writing/safetensors_writer.h"
#include "writing/write_plan.h"

namespace fs = std::filesystem;

namespace tensordict {
namespace {

std::string sysError(const char* what) {
    return std::string(what) + ": " + std::strerror(errno);
}

bool endsWith(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() &&
           s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Puts the finished directory `temp` at `prefix`. An existing prefix is
// swapped out in one step (renameat2 RENAME_EXCHANGE), so prefix never goes
// missing; the old tree is then removed.
void commitDirectory(const std::string& temp, const fs::path& prefix) {
    if (::rename(temp.c_str(), prefix.c_str()) == 0) {
        syncDirectoryOf(prefix);
        return;
    }
    if (errno != EEXIST && errno != ENOTEMPTY)
        throw Error::io(prefix.string(), sysError("cannot rename into place"));
    if (::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, prefix.c_str(), RENAME_EXCHANGE) == 0) {
        syncDirectoryOf(prefix);
        std::error_code ec;
        fs::remove_all(temp, ec);  // the previous content, now under the temporary name
        return;
    }
    if (errno != EINVAL && errno != ENOSYS)
        throw Error::io(prefix.string(), sysError("cannot swap into place"));
    // The file system cannot exchange: move the old tree aside for the shortest possible moment.
    const std::string old = temporarySibling(prefix);
    if (::rename(prefix.c_str(), old.c_str()) != 0)
        throw Error::io(prefix.string(), sysError("cannot move aside"));
    if (::rename(temp.c_str(), prefix.c_str()) != 0) {
        const std::string why = sysError("cannot rename into place");
        // Put the old tree back; if even that fails, say where it is.
        if (::rename(old.c_str(), prefix.c_str()) != 0)
            throw Error::io(prefix.string(), why +
                                                 "; the previous contents could not be moved "
                                                 "back either (" +
                                                 sysError("rename") + ") and are kept at " + old);
        throw Error::io(prefix.string(), why);
    }
    syncDirectoryOf(prefix);
    std::error_code ec;
    fs::remove_all(old, ec);
}

struct FileId {
    dev_t dev;
    ino_t ino;
    bool operator<(const FileId& o) const { return dev < o.dev || (dev == o.dev && ino < o.ino); }
    bool operator==(const FileId& o) const { return dev == o.dev && ino == o.ino; }
};

std::optional<FileId> fileId(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        return std::nullopt;
    return FileId{st.st_dev, st.st_ino};
}

// copy_existing, as Python's memmap: a leaf mapped from a file is reused when
// that file is its own target, copied with copyExisting, refused otherwise.
// Returns the plan files to leave as they are. Archives need no check:
// Python packs mapped leaves into them as they are.
std::set<std::string> checkExistingFiles(const WritePlan& plan, const fs::path& prefix,
                                         bool archive, const SaveOptions& options) {
    std::set<std::string> keep;
    if (archive)
        return keep;
    std::map<FileId, std::string> sources;  // files some leaf is read from
    for (const PlannedFile& file : plan.files) {
        // Only a memmap directory's leaves are memory-mapped tensors in Python's
        // sense; a leaf of a checkpoint or numpy file is converted, not copied.
        if (!file.leaf || file.leaf->leaf().storage.kind != StorageKind::File ||
            !file.leaf->store() || file.leaf->store()->ownContainer() != OwnContainer::Directory)
            continue;
        const std::string source =
            file.leaf->store()->container().describe(file.leaf->leaf().storage.path);
        const auto id = fileId(source);
        if (id)
            sources[*id] = file.keyText;
        const std::string target = (prefix / file.path).string();
        if (id && fileId(target) == id) {
            if (!options.atomic)
                keep.insert(file.path);  // already in place: not rewritten
            continue;
        }
        if (!options.copyExisting)
            throw Error::invalid(file.keyText, "already mapped from " + source + "; saving it to " +
                                                   target +
                                                   " copies it, which needs copy_existing");
    }
    if (!options.atomic) {
        // Never truncate a file another leaf is still to be read from.
        for (const PlannedFile& file : plan.files) {
            if (keep.count(file.path))
                continue;
            const auto id = fileId((prefix / file.path).string());
            if (id && sources.count(*id))
                throw Error::invalid(
                    (prefix / file.path).string(),
                    "would be overwritten while key " + sources[*id] +
                        " is read from it; save with atomic, or to another prefix");
        }
    }
    return keep;
}

LeafBytes toSharedMemory(const Node& leaf, ProgressTracker& progress) {
    const std::string where = formatKeyPath(leaf.keyPath());
    const LeafBytes source = leaf.bytes();
    const int fd = ::memfd_create(("tensordict:" + leaf.key()).substr(0, 240).c_str(), MFD_CLOEXEC);
    if (fd < 0)
        throw Error::io(where, sysError("cannot create shared memory"));
    if (::ftruncate(fd, static_cast<off_t>(source.size)) != 0) {
        const std::string why = sysError("cannot size shared memory");
        ::close(fd);
        throw Error::io(where, why);
    }
    void* p = ::mmap(nullptr, source.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    if (p == MAP_FAILED)
        throw Error::io(where, sysError("cannot map shared memory"));
    const std::size_t size = source.size;
    LeafBytes out{std::shared_ptr<std::byte>(static_cast<std::byte*>(p),
                                             [size](std::byte* q) { ::munmap(q, size); }),
                  size};
    constexpr std::size_t kChunk = 16u << 20;
    for (std::size_t done = 0; done < size; done += kChunk) {
        progress.throwIfCancelled(where);
        const std::size_t n = std::min(kChunk, size - done);
        std::memcpy(out.data.get() + done, source.data.get() + done, n);
        progress.add(n, leaf.key());
    }
    progress.fileDone(leaf.key());
    return out;
}

// Every leaf of `node` moves into its own memfd.
void moveLeavesToSharedMemory(Node& node, ProgressTracker& progress) {
    if (node.isError())
        throw Error::invalid(formatKeyPath(node.keyPath()),
                             "cannot save a part that could not be read: " + node.error());
    NodeBuilder b(node);
    if (node.isTensor()) {
        b.setDevice("cpu");
        if (node.leaf().nbytes) {
            b.adoptBytes(toSharedMemory(node, progress));
            StorageInfo& storage = b.leaf().storage;
            storage = StorageInfo{};
            storage.kind = StorageKind::Memory;
            storage.size = node.leaf().nbytes;
        }
        b.setStore(nullptr);
    }
    for (std::size_t i = 0; i < node.children().size(); ++i)
        moveLeavesToSharedMemory(b.childAt(i), progress);
}

TensorDict saveToMemory(const TensorDict& data, const SaveOptions& options) {
    std::uint64_t total = 0;
    int files = 0;
    std::vector<const Node*> stack{&data.root()};
    while (!stack.empty()) {
        const Node* n = stack.back();
        stack.pop_back();
        if (n->isTensor() && n->leaf().nbytes)
            total += n->leaf().nbytes, ++files;
        for (const auto& c : n->children())
            stack.push_back(c);
    }
    ProgressTracker progress(options, total, files);
    std::shared_ptr<Node> root = data.root().clone();
    moveLeavesToSharedMemory(*root, progress);
    NodeBuilder(*root).lockAndShare(options.shareNonTensor);
    return TensorDict::adopt(std::move(root), {}, "directory");
}

}  // namespace

std::optional<int> zipMethodFromName(std::string_view name) {
    if (name == "stored" || name == "store" || name == "none")
        return kZipStored;
    if (name == "deflate" || name == "deflated" || name == "zip")
        return kZipDeflate;
    if (name == "bzip2" || name == "bz2")
        return kZipBzip2;
    if (name == "lzma")
        return kZipLzma;
    if (!name.empty() &&
        std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
        name.size() < 4) {
        const int m = std::stoi(std::string(name));
        if (m == kZipStored || m == kZipDeflate || m == kZipBzip2 || m == kZipLzma)
            return m;
    }
    return std::nullopt;
}

namespace {

// The plan of a save, and every refusal that depends on the data alone.
WritePlan planSave(const TensorDict& data, bool archive, const SaveOptions& options) {
    WritePlan plan =
        makeWritePlan(data.root(), options.robustKey,
                      archive ? PlanOrder::Archive : PlanOrder::Directory, options.skipObjects);
    if (!options.allowOutsideLinks)
        for (const PlannedFile& file : plan.files)
            if (!file.outsideTarget.empty())
                throw Error::denied(
                    file.keyText,
                    "its file is a symbolic link to " + file.outsideTarget +
                        ", outside the dataset; refusing to copy it (allow links that "
                        "leave the dataset to save it anyway)");
    return plan;
}

std::string writeFiles(const TensorDict& data, const std::string& prefix,
                       const SaveOptions& options);

// A safetensors file or a Hugging Face folder (safetensors_writer.h); its path.
std::string saveAsSafetensors(const TensorDict& data, const std::string& prefix, SaveFormat format,
                              const SaveOptions& options) {
    if (options.compression != kZipStored || options.archive.value_or(false))
        throw Error::invalid(prefix, "archive and compression apply to tensordicts only");
    const fs::path target = fs::absolute(fs::path(prefix)).lexically_normal();
    const fs::path clean = target.has_filename() ? target : target.parent_path();
    struct stat st {};
    if (::lstat(clean.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
        throw Error::denied(clean.string(), "refusing to write through a symbolic link");
    if (!fs::is_directory(clean.parent_path()))
        throw Error::notFound(clean.parent_path().string(), "no such directory");
    try {
        if (format == SaveFormat::Safetensors)
            saveSafetensorsFile(data, clean, options);
        else
            saveHuggingFaceFolder(data, clean, options);
    } catch (const std::exception& e) {
        if (dynamic_cast<const Cancelled*>(&e) || options.cancel.isCancelled())
            throw Cancelled(clean.string());
        Failure failure = failureOf(e);
        if (failure.where.empty())
            failure.where = clean.string();
        failure.reason += " (nothing was changed at " + clean.string() + ")";
        throw Error(std::move(failure));
    }
    return clean.string();
}

// std::filesystem reports through its own exception; ours names the path.
template <typename Work>
auto namingPaths(const std::string& path, Work work) -> decltype(work()) {
    try {
        return work();
    } catch (const fs::filesystem_error& e) {
        throw Error::io(e.path1().empty() ? path : e.path1().string(), e.code().message());
    }
}

}  // namespace

std::optional<Failure> saveRefusal(const TensorDict& data, const SaveOptions& options) {
    try {
        if (options.format.value_or(SaveFormat::Tensordict) != SaveFormat::Tensordict)
            checkSafetensorsSource(data, options);
        else
            planSave(data, false, options);
        return std::nullopt;
    } catch (const Error& e) {
        return e.failure();
    }
}

TensorDict save(const TensorDict& data, const std::string& prefix, const SaveOptions& options) {
    if (prefix.empty()) {
        if (options.numThreads < 0)
            throw Error::invalid("<memory>", "num_threads must be 0 or more");
        if (options.compression != kZipStored || options.archive.value_or(false))
            throw Error::invalid("<memory>", "archive and compression need a prefix");
        return saveToMemory(data, options);
    }
    return namingPaths(prefix, [&] {
        LoadOptions loadOptions;
        loadOptions.robustKey = options.robustKey;
        TensorDict result = load(writeFiles(data, prefix, options), loadOptions);
        NodeBuilder(result.mutableRoot()).lockAndShare(options.shareNonTensor);
        return result;
    });
}

std::string saveFiles(const TensorDict& data, const std::string& prefix,
                      const SaveOptions& options) {
    if (prefix.empty())
        throw Error::invalid("<memory>", "saveFiles() writes files: it needs a prefix");
    return namingPaths(prefix, [&] { return writeFiles(data, prefix, options); });
}

namespace {

std::string writeFiles(const TensorDict& data, const std::string& prefix,
                       const SaveOptions& options) {
    if (options.numThreads < 0)
        throw Error::invalid(prefix, "num_threads must be 0 or more");
    const SaveFormat format = options.format.value_or(
        endsWith(prefix, ".safetensors") ? SaveFormat::Safetensors : SaveFormat::Tensordict);
    if (format != SaveFormat::Tensordict)
        return saveAsSafetensors(data, prefix, format, options);
    const bool archive = options.archive.value_or(endsWith(prefix, ".tdz"));
    if (!archive && options.compression != kZipStored)
        throw Error::invalid(
            prefix, "compression applies to archives only: use a .tdz prefix or archive=true");
    const fs::path target = fs::absolute(fs::path(prefix)).lexically_normal();
    const fs::path cleanTarget = target.has_filename() ? target : target.parent_path();

    struct stat st {};
    const bool exists = ::lstat(cleanTarget.c_str(), &st) == 0;
    if (exists && S_ISLNK(st.st_mode))
        throw Error::denied(cleanTarget.string(), "refusing to write through a symbolic link");
    if (exists && archive && S_ISDIR(st.st_mode))
        throw Error::invalid(cleanTarget.string(), "is a directory; an archive needs a file name");
    if (exists && !archive && !S_ISDIR(st.st_mode))
        throw Error::invalid(cleanTarget.string(), "exists and is not a directory");
    if (exists && !archive && options.atomic && !fs::is_empty(cleanTarget) &&
        !fs::exists(cleanTarget / "meta.json"))
        throw Error::invalid(
            cleanTarget.string(),
            "exists, is not empty and holds no meta.json; an atomic save replaces the whole "
            "directory, so it refuses to replace what is not a tensordict");
    if (!fs::is_directory(cleanTarget.parent_path()))
        throw Error::notFound(cleanTarget.parent_path().string(), "no such directory");

    const WritePlan plan = planSave(data, archive, options);
    if (options.skipped)
        for (const std::string& key : plan.skipped)
            options.skipped(key);
    const std::set<std::string> keep = checkExistingFiles(plan, cleanTarget, archive, options);
    ProgressTracker progress(options, plan.totalBytes, static_cast<int>(plan.files.size()));

    // An archive is always written beside its target and renamed onto it:
    // whoever maps the old archive (the source of this save, perhaps) keeps
    // its bytes, and a failed archive save changes nothing. `atomic` adds
    // the flushes that make the rename durable.
    const bool viaTemporary = archive || options.atomic;
    const std::string writeTo = viaTemporary ? temporarySibling(cleanTarget) : cleanTarget.string();
    try {
        if (archive) {
            writeArchive(writeTo, plan, options.compression, options.compressionLevel,
                         options.deflateAccessPoints, options.numThreads, progress);
            if (options.atomic)
                syncFile(writeTo);
            if (::rename(writeTo.c_str(), cleanTarget.c_str()) != 0)
                throw Error::io(cleanTarget.string(), sysError("cannot rename into place"));
            if (options.atomic)
                syncDirectoryOf(cleanTarget);
        } else {
            writeDirectory(writeTo, plan, options.numThreads, progress, keep);
            if (options.atomic) {
                syncTree(writeTo);
                commitDirectory(writeTo, cleanTarget);
            }
        }
    } catch (const std::exception& e) {
        if (viaTemporary) {
            std::error_code ec;
            fs::remove_all(writeTo, ec);
        }
        // A failure seen after the cancel (a codec stopped midway) is the cancel's doing.
        if (dynamic_cast<const Cancelled*>(&e) || options.cancel.isCancelled())
            throw Cancelled(cleanTarget.string());
        Failure failure = failureOf(e);
        if (failure.where.empty())
            failure.where = writeTo;
        failure.reason +=
            viaTemporary ? " (nothing was changed at " + cleanTarget.string() + ")"
                         : " (the partly written output is left at " + cleanTarget.string() + ")";
        throw Error(std::move(failure));
    }
    return cleanTarget.string();
}

}  // namespace

std::future<TensorDict> saveAsync(std::shared_ptr<const TensorDict> data, std::string prefix,
                                  SaveOptions options) {
    // std::async's thread: the future's destructor waits for it, so a
    // dropped future never leaves a save writing behind its caller's back.
    return std::async(std::launch::async,
                      [data = std::move(data), prefix = std::move(prefix),
                       options = std::move(options)] { return save(*data, prefix, options); });
}

}  // namespace tensordict
