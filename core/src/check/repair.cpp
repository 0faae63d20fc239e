// Repairing what a check found (tensordict/check.h): an archive's CRC-32s
// re-stamped in a copy that replaces it, stale temporaries deleted.

#include "check/checker.h"
#include "check/temporaries.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <set>

#include "codec/codec.h"
#include "sources/copy_steps.h"
#include "writing/atomic_file.h"

namespace tensordict {

namespace fs = std::filesystem;

namespace {

using checking::heldOpen;
using checking::hex32;
using checking::kInflateBuffer;

std::string sysError(const std::string& what) {
    return what + ": " + std::strerror(errno);
}

// The bytes of open file `in` copied into open file `out` (in the kernel
// where the file systems allow, else through a buffer), a piece at a time
// so that `cancel` is heard. Throws Error naming `to`.
void copyFile(int in, std::uint64_t size, int out, const std::string& to,
              const CancelToken& cancel) {
    constexpr std::size_t kPiece = 64u << 20;
    bool kernel = true;
    std::vector<char> buffer;
    for (std::uint64_t done = 0; done < size;) {
        cancel.throwIfCancelled(to);
        const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(kPiece, size - done));
        ssize_t n = -1;
        if (kernel) {
            loff_t from = static_cast<loff_t>(done), at = static_cast<loff_t>(done);
            n = ::copy_file_range(in, &from, out, &at, want, 0);
            if (n < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS ||
                          errno == EOPNOTSUPP || errno == EBADF)) {
                kernel = false;  // this file system cannot: through a buffer
                continue;
            }
        } else {
            buffer.resize(std::min<std::size_t>(want, 8u << 20));
            n = ::pread(in, buffer.data(), buffer.size(), static_cast<off_t>(done));
            if (n > 0)
                writeAllAt(out, buffer.data(), static_cast<std::size_t>(n), done, to);
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            throw Error::io(to, sysError("cannot copy"));
        if (n == 0)
            throw Error::changed(to, "the archive shrank while it was copied");
        done += static_cast<std::uint64_t>(n);
    }
}

// The file descriptor of an archive, closed with this object.
struct OpenFile {
    int fd = -1;
    ~OpenFile() {
        if (fd >= 0)
            ::close(fd);
    }
};

bool sameVersion(const struct stat& a, const struct stat& b) {
    return a.st_dev == b.st_dev && a.st_ino == b.st_ino && a.st_size == b.st_size &&
           a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec;
}

// New CRC-32s for the stored entries `names` of the archive at `path`,
// whose data changed after they were written: recomputed from the data and
// written into a copy beside the archive (the central directory's and the
// data descriptor's CRC field, and the local header's unless a data
// descriptor holds it; nothing else), which then replaces it, with its
// permissions and owner. Refused while another process has the archive
// open or mapped (an r+ writer's later writes would be lost), and when the
// archive changed meanwhile. A link is repaired at its target.
void restampCrcs(const std::string& location, const std::set<std::string>& names,
                 const RepairOptions& options, RepairReport& out) {
    std::error_code ec;
    const std::string path = fs::canonical(location, ec).string();
    if (ec)
        throw Error::io(location, "cannot resolve: " + ec.message());
    OpenFile file;
    file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (file.fd < 0)
        throw Error::io(path, sysError("cannot open"));
    struct stat st {};
    if (::fstat(file.fd, &st) != 0)
        throw Error::io(path, sysError("cannot stat"));
    const auto size = static_cast<std::uint64_t>(st.st_size);
    const zip::ReadAt read = [&](std::uint64_t offset, void* o, std::size_t n) {
        for (std::size_t done = 0; done < n;) {
            const ssize_t r = ::pread(file.fd, static_cast<char*>(o) + done, n - done,
                                      static_cast<off_t>(offset + done));
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                throw Error::io(path, r == 0 ? "the archive is shorter than its directory says"
                                             : sysError("cannot read"));
            done += static_cast<std::size_t>(r);
        }
    };
    const std::vector<zip::CentralEntry> entries = zip::readCentralDirectory(read, size, location);
    struct Patch {
        std::uint64_t offset;
        std::uint32_t crc;
    };
    std::vector<Patch> patches;
    std::uint64_t directoryStart = size;
    for (const zip::CentralEntry& c : entries)
        directoryStart = std::min(directoryStart, c.centralHeaderOffset);
    std::vector<std::byte> buffer(kInflateBuffer);
    for (const zip::CentralEntry& c : entries) {
        if (!names.count(c.name) || c.method != zip::kStored)
            continue;
        const std::string where = location + ":" + c.name;
        const zip::LocalHeader local = zip::readLocalHeader(read, size, c, where);
        std::uint32_t crc = 0;
        for (std::uint64_t done = 0; done < c.compressedSize;) {
            options.cancel.throwIfCancelled(where);
            const auto n = static_cast<std::size_t>(
                std::min<std::uint64_t>(buffer.size(), c.compressedSize - done));
            read(local.payloadOffset + done, buffer.data(), n);
            crc = crc32(crc, buffer.data(), n);
            done += n;
        }
        if (crc == c.crc)
            continue;  // already right (checked again since the report)
        out.done.push_back(std::string(options.dryRun ? "would re-stamp" : "re-stamped") +
                           " the CRC-32 of " + where + " (" + hex32(c.crc) + " to " + hex32(crc) +
                           ")");
        patches.push_back({c.centralHeaderOffset + 16, crc});
        if (c.flags & zip::kFlagDataDescriptor) {
            const zip::DataDescriptor dd =
                zip::readEntryDataDescriptor(read, local.payloadOffset + c.compressedSize,
                                             directoryStart, local.zip64, c, where);
            patches.push_back({dd.crcOffset, crc});
        } else {
            patches.push_back({c.localHeaderOffset + 14, crc});
        }
    }
    if (options.dryRun || patches.empty())
        return;
    if (st.st_nlink > 1)
        throw Error::invalid(path,
                             "has " + std::to_string(st.st_nlink) +
                                 " hard links: replacing it would part them; re-stamp a copy");
    if (heldOpen(path))
        throw Error::invalid(
            path,
            "another process has it open or mapped (an in-place writer?): its later "
            "writes would be lost; close it, then repair");
    const std::string temp = temporarySibling(fs::path(path));
    OpenFile copy;
    try {
        copy.fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (copy.fd < 0)
            throw Error::io(temp, sysError("cannot create"));
        copyFile(file.fd, size, copy.fd, temp, options.cancel);
        for (const Patch& p : patches) {
            const unsigned char le[4] = {
                static_cast<unsigned char>(p.crc), static_cast<unsigned char>(p.crc >> 8),
                static_cast<unsigned char>(p.crc >> 16), static_cast<unsigned char>(p.crc >> 24)};
            writeAllAt(copy.fd, le, 4, p.offset, temp);
        }
        // The archive's permissions and owner (the owner where we may set it).
        if (::fchmod(copy.fd, st.st_mode & 07777) != 0)
            throw Error::io(temp, sysError("cannot set its permissions"));
        if (::fchown(copy.fd, st.st_uid, st.st_gid) != 0 && errno != EPERM)
            throw Error::io(temp, sysError("cannot set its owner"));
        if (::fsync(copy.fd) != 0)
            throw Error::io(temp, sysError("cannot flush"));
        options.cancel.throwIfCancelled(path);
        struct stat now {};
        if (::stat(path.c_str(), &now) != 0 || !sameVersion(st, now))
            throw Error::changed(path, "it changed while it was being repaired");
        if (::rename(temp.c_str(), path.c_str()) != 0)
            throw Error::io(path, sysError("cannot rename the repaired copy into place"));
    } catch (...) {
        fs::remove(temp, ec);  // the archive is as it was
        throw;
    }
    syncDirectoryOf(fs::path(path));
}

}  // namespace

RepairReport repair(const CheckReport& report, const RepairOptions& options) {
    RepairReport out;
    std::set<std::string> crcs;
    std::vector<const Problem*> temporaries;
    // Entries are named "archive:entry", the archive as the check's source named it.
    std::string prefix;
    for (const Problem& p : report.problems)
        if (p.repairable && p.kind == "crc_mismatch" && prefix.empty()) {
            const auto transport = transportFor(report.path);
            if (!transport->isLocal())  // repairs rewrite files in place
                throw Error::unsupported(report.path,
                                         "only files on this machine can be repaired: copy it "
                                         "here, repair the copy, and upload it");
            prefix = transport->open(report.path)->name() + ":";
        }
    for (const Problem& p : report.problems) {
        if (p.repairable && p.kind == "crc_mismatch" &&
            p.file.compare(0, prefix.size(), prefix) == 0)
            crcs.insert(p.file.substr(prefix.size()));
        else if (p.repairable && p.kind == "stale_temporary")
            temporaries.push_back(&p);
        else
            out.left.push_back(p);
    }
    if (!crcs.empty())
        restampCrcs(report.path, crcs, options, out);
    for (const Problem* p : temporaries) {
        // Checked again: a save may have started since.
        const std::optional<std::chrono::seconds> age = checking::ageOf(p->file);
        if (checking::heldOpen(p->file) || !age || *age < checking::kStaleAfter) {
            out.left.push_back(*p);
            continue;
        }
        if (!options.dryRun) {
            std::error_code ec;
            fs::remove_all(p->file, ec);
            if (ec)
                throw Error::io(p->file, "cannot delete: " + ec.message());
        }
        out.done.push_back(std::string(options.dryRun ? "would delete" : "deleted") +
                           " the stale temporary " + p->file);
    }
    return out;
}

}  // namespace tensordict
