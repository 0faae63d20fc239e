// Reading .tdz archives (FORMAT.md section 8).
//
// The zip container is read with QuaZip (its minizip core parses the central
// directory, ZIP64 included, and inflates deflate and bzip2 entries). A stored
// entry's payload offset comes from minizip's raw open, so the payload is used
// in place from one private mapping of the whole archive. minizip refuses
// method 14 (LZMA, which Python's zipfile writes for compression="lzma"), so
// those entries are read raw through libzip and decoded with liblzma
// (raw_zip_entry.cpp: QuaZip's own zip.h shadows libzip's, so the two live in
// separate translation units).

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <quazip/quazip.h>
#include <quazip/unzip.h>
#include <QString>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>

#include "mapping.h"
#include "raw_zip_entry.h"
#include "store.h"
#include "tensordict/error.h"

namespace tensordict {

std::string zipMethodName(int method) {
    switch (method) {
        case 0:
            return "stored";
        case 8:
            return "deflate";
        case 12:
            return "bzip2";
        case 14:
            return "lzma";
        case 93:
            return "zstd";
        default:
            return "method " + std::to_string(method);
    }
}

namespace {

constexpr int kStored = 0;
constexpr int kDeflate = 8;
constexpr int kBzip2 = 12;
constexpr int kLzma = 14;

struct Entry {
    StorageInfo info;
    unz64_file_pos position{};  // where minizip finds it again
    std::uint32_t crc = 0;
};

bool isUnsafeEntryName(const std::string& name) {
    if (name.empty() || name.front() == '/' || name.find('\\') != std::string::npos ||
        name.find('\0') != std::string::npos)
        return true;
    std::size_t start = 0;
    while (start <= name.size()) {
        const std::size_t end = std::min(name.find('/', start), name.size());
        const std::string part = name.substr(start, end - start);
        if (part == ".." || part == ".")
            return true;
        if (part.empty() && end != name.size())
            return true;  // "a//b"
        start = end + 1;
    }
    return false;
}

class ArchiveStore final : public Store {
public:
    explicit ArchiveStore(std::string path)
        : path_(std::move(path)), zip_(QString::fromStdString(path_)) {
        // The archive stays open: later reads come from this file even if a
        // save replaces the path meanwhile.
        fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        if (fd_ < 0)
            throw Error(path_, std::strerror(errno));
        struct stat st {};
        if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
            ::close(fd_);
            throw Error(path_, "not a regular file");
        }
        fileSize_ = static_cast<std::uint64_t>(st.st_size);
        device_ = st.st_dev;
        inode_ = st.st_ino;
        try {
            openZip();
        } catch (...) {
            ::close(fd_);
            throw;
        }
    }

    ~ArchiveStore() override { ::close(fd_); }

    void openZip() {
        if (!zip_.open(QuaZip::mdUnzip))
            throw Error(path_,
                        "not a zip archive, or the archive is truncated or corrupt (zip error " +
                            std::to_string(zip_.getZipError()) + ")");
        unzFile uf = zip_.getUnzFile();
        int rc = unzGoToFirstFile(uf);
        for (; rc == UNZ_OK; rc = unzGoToNextFile(uf))
            readCurrentEntry(uf);
        if (rc != UNZ_END_OF_LIST_OF_FILE)
            throw Error(path_, "corrupt central directory (zip error " + std::to_string(rc) + ")");
        if (!entries_.count("meta.json"))
            throw Error(path_, "zip archive has no top-level meta.json: not a tensordict archive");
    }

    SourceFormat format() const override { return SourceFormat::Archive; }
    const std::string& location() const override { return path_; }
    std::string describe(const std::string& rel) const override {
        return rel.empty() ? path_ : path_ + ":" + rel;
    }

    std::optional<StorageInfo> stat(const std::string& rel) const override {
        auto it = entries_.find(rel);
        if (it == entries_.end())
            return std::nullopt;
        return it->second.info;
    }

    std::string read(const std::string& rel, std::uint64_t cap) const override {
        const Entry& entry = find(rel);
        if (entry.info.size > cap)
            throw Error(describe(rel), "entry is " + std::to_string(entry.info.size) +
                                           " bytes, over the metadata size limit of " +
                                           std::to_string(cap) + " bytes");
        LeafBytes bytes = extract(entry, entry.info.size, 1);
        return std::string(reinterpret_cast<const char*>(bytes.data.get()), bytes.size);
    }

    LeafBytes map(const StorageInfo& info, std::uint64_t nbytes,
                  std::size_t alignment) const override {
        return extract(find(info.path), nbytes, alignment);
    }

private:
    const Entry& find(const std::string& rel) const {
        auto it = entries_.find(rel);
        if (it == entries_.end())
            throw Error(describe(rel), "no such entry in the archive");
        return it->second;
    }

    void readCurrentEntry(unzFile uf) {
        unz_file_info64 fi{};
        char name[65536];
        if (unzGetCurrentFileInfo64(uf, &fi, name, sizeof name, nullptr, 0, nullptr, 0) != UNZ_OK)
            throw Error(path_, "corrupt central directory");
        Entry entry;
        entry.info.path.assign(name, fi.size_filename);
        const std::string& entryName = entry.info.path;
        if (!entryName.empty() && entryName.back() == '/')
            return;  // directory entry (zip -r)
        if (isUnsafeEntryName(entryName))
            throw Error(describe(entryName),
                        "unsafe entry name (absolute, or with '..' or '.' components)");
        if (fi.flag & 1u)
            throw Error(describe(entryName), "encrypted entries are not supported");
        entry.info.container = path_;
        entry.info.zipMethod = static_cast<int>(fi.compression_method);
        entry.info.size = fi.uncompressed_size;
        entry.info.storedSize = fi.compressed_size;
        entry.info.kind = entry.info.zipMethod == kStored ? StorageKind::StoredEntry
                                                          : StorageKind::CompressedEntry;
        entry.crc = static_cast<std::uint32_t>(fi.crc);
        unzGetFilePos64(uf, &entry.position);
        if (entry.info.storedSize > fileSize_)
            throw Error(describe(entryName),
                        "entry claims more bytes than the archive has (truncated file?)");
        const int method = entry.info.zipMethod;
        if (method != kStored && method != kDeflate && method != kBzip2 && method != kLzma) {
            // Kept in the listing; reading it gives a clear error.
        } else if (method != kLzma) {
            int m = 0, level = 0;
            if (unzOpenCurrentFile2(uf, &m, &level, 1) != UNZ_OK)
                throw Error(describe(entryName), "corrupt local header");
            entry.info.offset = unzGetCurrentFileZStreamPos64(uf);
            unzCloseCurrentFile(uf);
            if (*entry.info.offset > fileSize_ - entry.info.storedSize)
                throw Error(describe(entryName),
                            "entry data runs past the end of the archive (truncated file?)");
            if (method == kStored && entry.info.storedSize != entry.info.size)
                throw Error(describe(entryName), "stored entry with differing sizes");
        }
        entries_[entryName] = std::move(entry);  // a later duplicate wins, as in Python
    }

    LeafBytes extract(const Entry& entry, std::uint64_t nbytes, std::size_t alignment) const {
        const std::string where = describe(entry.info.path);
        if (nbytes > entry.info.size)
            throw Error(where, "entry is " + std::to_string(entry.info.size) +
                                   " bytes but the leaf needs " + std::to_string(nbytes));
        if (nbytes == 0)
            return {};
        switch (entry.info.zipMethod) {
            case kStored: {
                LeafBytes whole = archiveMapping();
                std::byte* p = whole.data.get() + *entry.info.offset;
                if (reinterpret_cast<std::uintptr_t>(p) % alignment != 0)
                    return copyToOwnedBuffer(p, nbytes);  // unaligned (zip -0, other tools)
                return {std::shared_ptr<std::byte>(whole.data, p),
                        static_cast<std::size_t>(nbytes)};
            }
            case kDeflate:
            case kBzip2:
                return inflate(entry, nbytes);
            case kLzma:
                return inflateLzma(entry, nbytes);
            default:
                throw Error(
                    where, "unsupported compression method " + zipMethodName(entry.info.zipMethod));
        }
    }

    LeafBytes archiveMapping() const {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!mapping_.data)
            mapping_ = mapFilePrivate(fd_, fileSize_, path_);
        return mapping_;
    }

    // libzip reopens by path (for LZMA entries): it must still be our file.
    void checkUnchanged() const {
        struct stat st {};
        if (::stat(path_.c_str(), &st) != 0 || st.st_dev != device_ || st.st_ino != inode_)
            throw Error(path_, "the archive was replaced since it was opened; open it again");
    }

    LeafBytes inflate(const Entry& entry, std::uint64_t nbytes) const {
        const std::string where = describe(entry.info.path);
        // Inflate only what the leaf needs: a hostile header may claim any size.
        const std::uint64_t wanted = std::min<std::uint64_t>(nbytes, entry.info.size);
        LeafBytes out = allocateOwnedBuffer(wanted);
        std::lock_guard<std::mutex> lock(mutex_);
        unzFile uf = zip_.getUnzFile();
        unz64_file_pos pos = entry.position;
        if (unzGoToFilePos64(uf, &pos) != UNZ_OK || unzOpenCurrentFile(uf) != UNZ_OK)
            throw Error(where, "cannot open entry");
        std::uint64_t done = 0;
        while (done < wanted) {
            const auto chunk =
                static_cast<unsigned>(std::min<std::uint64_t>(wanted - done, 1u << 30));
            const int n = unzReadCurrentFile(uf, out.data.get() + done, chunk);
            if (n < 0) {
                unzCloseCurrentFile(uf);
                throw Error(where, "corrupt compressed data (zip error " + std::to_string(n) + ")");
            }
            if (n == 0)
                break;
            done += static_cast<unsigned>(n);
        }
        const int closeRc = unzCloseCurrentFile(uf);  // checks the CRC when all was read
        if (done != wanted)
            throw Error(where, "compressed data ends after " + std::to_string(done) + " of " +
                                   std::to_string(wanted) + " bytes");
        if (closeRc == UNZ_CRCERROR && wanted == entry.info.size)
            throw Error(where, "CRC mismatch: the entry is corrupt");
        out.size = nbytes;
        return out;
    }

    LeafBytes inflateLzma(const Entry& entry, std::uint64_t nbytes) const {
        const std::string where = describe(entry.info.path);
        checkUnchanged();
        const std::string raw = readCompressedEntry(path_, entry.info.path, entry.info.storedSize);
        LeafBytes out = allocateOwnedBuffer(nbytes);
        decodeZipLzma(raw, out.data.get(), nbytes, where);
        out.size = nbytes;
        return out;
    }

    std::string path_;
    int fd_ = -1;
    dev_t device_ = 0;
    ino_t inode_ = 0;
    std::uint64_t fileSize_ = 0;
    mutable QuaZip zip_;
    std::map<std::string, Entry> entries_;
    mutable std::mutex mutex_;
    mutable LeafBytes mapping_;
};

}  // namespace

std::shared_ptr<const Store> openArchiveStore(const std::string& path) {
    return std::make_shared<ArchiveStore>(path);
}

}  // namespace tensordict
