#include "formats/file_stores.h"

#include <algorithm>
#include <cstring>

#include "sources/mapping.h"
#include "tensordict/error.h"
#include "tensordict/guarded_read.h"

namespace tensordict {

std::string zipFirstEntryName(const std::string& head) {
    if (head.size() < 30 || head.compare(0, 4, "PK\x03\x04") != 0)
        return {};
    const std::size_t n = static_cast<unsigned char>(head[26]) |
                          static_cast<std::size_t>(static_cast<unsigned char>(head[27])) << 8;
    return head.size() >= 30 + n ? head.substr(30, n) : std::string();
}

namespace {

class Slice final : public ByteSource {
public:
    Slice(std::shared_ptr<const ByteSource> file, std::uint64_t offset, std::uint64_t length)
        : file_(std::move(file)),
          offset_(offset),
          length_(length),
          name_(file_->name() + "@" + std::to_string(offset)) {}

    const std::string& name() const override { return name_; }
    std::uint64_t size() const override { return length_; }
    const std::string& version() const override { return file_->version(); }
    void readAt(std::uint64_t offset, void* out, std::size_t n) const override {
        check(offset, n);
        file_->readAt(offset_ + offset, out, n);
    }
    void readOnce(std::uint64_t offset, void* out, std::size_t n) const override {
        check(offset, n);
        file_->readOnce(offset_ + offset, out, n);
    }
    bool copyTo(std::uint64_t offset, std::size_t n, int fd, std::uint64_t at) const override {
        check(offset, n);
        return file_->copyTo(offset_ + offset, n, fd, at);
    }
    LeafBytes map() const override {
        const LeafBytes whole = file_->map();
        if (!whole.data)
            return {};
        return {std::shared_ptr<std::byte>(whole.data, whole.data.get() + offset_),
                static_cast<std::size_t>(length_)};
    }

private:
    void check(std::uint64_t offset, std::size_t n) const {
        checkWithin(name_, offset, n, length_);
    }

    std::shared_ptr<const ByteSource> file_;
    std::uint64_t offset_, length_;
    std::string name_;
};

}  // namespace

SourceInfo::Kind kindAt(const Transport& transport, const std::string& location) {
    try {
        return transport.stat(location).kind;
    } catch (const Error&) {
        return SourceInfo::Kind::Missing;
    }
}

void checkWithin(const std::string& name, std::uint64_t offset, std::uint64_t n,
                 std::uint64_t size) {
    if (offset > size || n > size - offset)
        throw Error::truncated(name, "bytes " + std::to_string(offset) + " to " +
                                         std::to_string(offset + n) + " are past its end at " +
                                         std::to_string(size));
}

std::shared_ptr<const ByteSource> sliceOf(std::shared_ptr<const ByteSource> file,
                                          std::uint64_t offset, std::uint64_t length) {
    checkWithin(file->name(), offset, length, file->size());
    return std::make_shared<Slice>(std::move(file), offset, length);
}

SingleFile::SingleFile(std::shared_ptr<const ByteSource> source) : source_(std::move(source)) {
    const std::string& path = source_->name();
    const auto slash = path.find_last_of('/');
    name_ = slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string SingleFile::describe(const std::string& rel) const {
    return rel.empty() || rel == name_ ? source_->name() : source_->name() + ":" + rel;
}

StorageInfo SingleFile::fileInfo() const {
    StorageInfo info;
    info.kind = StorageKind::File;
    info.path = name_;
    info.size = info.storedSize = source_->size();
    return info;  // no version: the container holds its file open (StorageInfo::version)
}

std::optional<StorageInfo> SingleFile::stat(const std::string& rel) const {
    if (rel != name_)
        return std::nullopt;
    return fileInfo();
}

std::string SingleFile::readRange(std::uint64_t offset, std::uint64_t n, const char* what) const {
    const std::uint64_t size = source_->size();
    if (offset > size || n > size - offset)
        throw Error::corrupt(source_->name(),
                             std::string(what) + " needs bytes " + std::to_string(offset) + " to " +
                                 std::to_string(offset + n) + ", past the end of the file at " +
                                 std::to_string(size) + " (truncated file?)");
    std::string out(static_cast<std::size_t>(n), '\0');
    source_->readAt(offset, out.data(), out.size());
    return out;
}

std::uint64_t littleEndianU64(std::string_view bytes) {
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i)
        v = (v << 8) | static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)]);
    return v;
}

std::string SingleFile::read(const std::string& rel, std::uint64_t cap) const {
    if (rel != name_)
        throw Error::notFound(describe(rel), "no such file");
    if (source_->size() > cap)
        throw Error::corrupt(source_->name(),
                             "over the size limit of " + std::to_string(cap) + " bytes");
    return readRange(0, source_->size(), "reading the file");
}

LeafBytes SingleFile::leafBytes(const StorageInfo& info, std::uint64_t nbytes,
                                std::size_t alignment) const {
    if (info.path != name_)
        throw Error::notFound(describe(info.path), "no such file");
    if (nbytes > source_->size())
        throw Error::truncated(source_->name(), "the file is " + std::to_string(source_->size()) +
                                                    " bytes but the leaf needs " +
                                                    std::to_string(nbytes) + " (truncated file?)");
    if (nbytes == 0)
        return {};
    LeafBytes whole;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!mappingTried_) {
            mappingTried_ = true;
            mapping_ = source_->map();
        }
        whole = mapping_;
    }
    // A mapping starts on a page: aligned for any element.
    if (whole.data && alignment <= 4096)
        return {whole.data, static_cast<std::size_t>(nbytes)};
    LeafBytes copy = allocateOwnedBuffer(nbytes);
    source_->readAt(0, copy.data.get(), nbytes);
    return copy;
}

LeafBytes SingleFile::currentMapping() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return mapping_;
}

void SingleFile::requireLeafRange(const StorageInfo& info, std::uint64_t offset,
                                  std::size_t n) const {
    if (info.path != name_)
        throw Error::notFound(describe(info.path), "no such file");
    const std::uint64_t end = offset + n;
    if (end < offset || end > source_->size())
        throw Error::truncated(source_->name(), "the file is " + std::to_string(source_->size()) +
                                                    " bytes but the leaf needs bytes to " +
                                                    std::to_string(end) + " (truncated file?)");
}

void SingleFile::readLeafRange(const StorageInfo& info, std::uint64_t offset, std::byte* out,
                               std::size_t n) const {
    requireLeafRange(info, offset, n);
    // Once mapped, the mapping: a tensor over another view of the same
    // storage may have written into it (the file does not have that).
    if (const LeafBytes mapped = currentMapping(); mapped.data) {
        if (!tryGuardedCopy(out, mapped.data.get() + offset, n))
            throw Error::changed(source_->name());
        return;
    }
    source_->readOnce(offset, out, n);
}

bool SingleFile::copyLeafRangeTo(const StorageInfo& info, std::uint64_t offset, std::size_t n,
                                 int fd, std::uint64_t at) const {
    requireLeafRange(info, offset, n);
    return !currentMapping().data && source_->copyTo(offset, n, fd, at);
}

std::string FolderContainer::describe(const std::string& rel) const {
    return pathOf(rel);
}

std::optional<StorageInfo> FolderContainer::stat(const std::string& rel) const {
    const SourceInfo info = transport_->stat(pathOf(rel));
    if (info.kind != SourceInfo::Kind::File)
        return std::nullopt;
    StorageInfo s;
    s.kind = StorageKind::File;
    s.path = rel;
    s.size = s.storedSize = info.size;
    if (!info.version.empty())
        s.setVersion(info.version);
    return s;
}

LeafBytes FolderContainer::leafBytes(const StorageInfo& info, std::uint64_t, std::size_t) const {
    // A format that reads the folder's files as leaves overrides this.
    throw Error::invalid(describe(info.path), "not a leaf of " + folder_);
}

std::string FolderContainer::read(const std::string& rel, std::uint64_t cap) const {
    const auto source = transport_->open(pathOf(rel));
    if (source->size() > cap)
        throw Error::unsupported(
            source->name(),
            std::to_string(source->size()) + " bytes, over the limit of " + std::to_string(cap));
    std::string out(static_cast<std::size_t>(source->size()), '\0');
    source->readAt(0, out.data(), out.size());
    return out;
}

std::string folderOfLocation(const std::string& location) {
    const auto slash = location.find_last_of('/');
    if (slash == std::string::npos)
        return ".";
    return slash == 0 ? "/" : location.substr(0, slash);
}

std::string ZipBackedStore::entryPrefix(const StorageInfo& entry, std::uint64_t n) const {
    n = std::min(n, entry.size);
    if (n == 0)
        return {};
    const LeafBytes bytes = zip_->leafBytes(entry, n, 1);
    std::string out(static_cast<std::size_t>(n), '\0');
    if (!tryGuardedCopy(out.data(), bytes.data.get(), out.size()))
        throw Error::changed(zip_->describe(entry.path));
    return out;
}

}  // namespace tensordict
