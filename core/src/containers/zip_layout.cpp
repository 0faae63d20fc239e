#include "containers/zip_layout.h"

#include <algorithm>
#include <ctime>

#include "containers/access_index.h"
#include "tensordict/error.h"

namespace tensordict::zip {
namespace {

constexpr std::uint32_t k32 = 0xFFFFFFFFu;
constexpr std::uint16_t k16 = 0xFFFFu;
// Python's zipfile switches to zip64 fields past these (ZIP64_LIMIT, ZIP_FILECOUNT_LIMIT).
constexpr std::uint64_t kZip64Limit = (1ull << 31) - 1;
constexpr std::uint64_t kFileCountLimit = 0xFFFF;
constexpr int kVersionDefault = 20;
constexpr int kVersionZip64 = 45;
constexpr int kVersionBzip2 = 46;
constexpr int kVersionLzma = 63;
constexpr int kSystemUnix = 3;
constexpr std::uint32_t kExternalAttributes = 0644u << 16;

std::string toHex(std::uint64_t v) {
    static const char digits[] = "0123456789abcdef";
    std::string s;
    do {
        s.insert(s.begin(), digits[v & 15]);
        v >>= 4;
    } while (v);
    return "0x" + s;
}

struct EndRecord {
    std::uint64_t entries = 0;
    std::uint64_t directorySize = 0;
    std::uint64_t directoryOffset = 0;
    std::uint64_t location = 0;  // where the end record (or the zip64 end record) starts
    bool zip64 = false;
};

EndRecord findEnd(const ReadAt& read, std::uint64_t fileSize, const std::string& where) {
    if (fileSize < kEndSize)
        throw Error::corrupt(where, "not a zip archive: too short (" + std::to_string(fileSize) +
                                        " bytes) for an end of central directory record");
    // The end record is last unless an archive comment follows it (at most 64 KiB).
    const std::uint64_t tail = std::min<std::uint64_t>(fileSize, kEndSize + 0xFFFF);
    std::string buffer(tail, '\0');
    read(fileSize - tail, buffer.data(), buffer.size());
    const auto* data = reinterpret_cast<const unsigned char*>(buffer.data());
    std::int64_t at = -1;
    if (u32(data + tail - kEndSize) == kEndSignature && u16(data + tail - 2) == 0) {
        at = static_cast<std::int64_t>(tail - kEndSize);
    } else {
        for (std::int64_t i = static_cast<std::int64_t>(tail - kEndSize); i >= 0; --i)
            if (u32(data + i) == kEndSignature) {
                at = i;
                break;
            }
    }
    if (at < 0)
        throw Error::corrupt(
            where, "not a zip archive: no end of central directory record (truncated file?)");
    const unsigned char* e = data + at;
    EndRecord end;
    end.location = fileSize - tail + static_cast<std::uint64_t>(at);
    if (u16(e + 4) != 0 || u16(e + 6) != 0)
        throw Error::unsupported(where, "multi-disk (spanned) zip archives are not supported");
    end.entries = u16(e + 10);
    end.directorySize = u32(e + 12);
    end.directoryOffset = u32(e + 16);

    // A zip64 locator right before the end record points to the zip64 end record.
    if (end.location >= kZip64LocatorSize + kZip64EndSize) {
        unsigned char locator[kZip64LocatorSize];
        read(end.location - kZip64LocatorSize, locator, sizeof locator);
        if (u32(locator) == kZip64LocatorSignature) {
            if (u32(locator + 4) != 0 || u32(locator + 16) > 1)
                throw Error::unsupported(where,
                                         "multi-disk (spanned) zip archives are not supported");
            unsigned char record[kZip64EndSize];
            const std::uint64_t recordAt = end.location - kZip64LocatorSize - kZip64EndSize;
            read(recordAt, record, sizeof record);
            if (u32(record) == kZip64EndSignature) {
                end.entries = u64(record + 32);
                end.directorySize = u64(record + 40);
                end.directoryOffset = u64(record + 48);
                end.location = recordAt;
                end.zip64 = true;
            }
        }
    }
    return end;
}

// The values a central record left at 0xFFFF... are in its zip64 extra block.
void applyZip64Extra(CentralEntry& entry, const unsigned char* extra, std::size_t length,
                     bool sizeFull, bool compressedFull, bool offsetFull,
                     const std::string& where) {
    std::size_t i = 0;
    while (i + 4 <= length) {
        const std::uint16_t id = u16(extra + i);
        const std::uint16_t n = u16(extra + i + 2);
        if (i + 4 + n > length)
            throw Error::corrupt(where, "extra field runs past its record");
        if (id == kZip64ExtraId) {
            const unsigned char* p = extra + i + 4;
            std::size_t left = n;
            auto take = [&](std::uint64_t& field) {
                if (left < 8)
                    throw Error::corrupt(where, "zip64 extra field too short");
                field = u64(p);
                p += 8;
                left -= 8;
            };
            if (sizeFull)
                take(entry.size);
            if (compressedFull)
                take(entry.compressedSize);
            if (offsetFull)
                take(entry.localHeaderOffset);
            sizeFull = compressedFull = offsetFull = false;  // a second zip64 block changes nothing
        } else if (id == kAccessIndexExtraId && entry.accessIndex.empty()) {
            entry.accessIndex.assign(reinterpret_cast<const char*>(extra + i + 4), n);
        }
        i += 4 + n;
    }
    // No zip64 block: values of exactly 0xFFFFFFFF stand as they are, as in Python.
}

}  // namespace

std::vector<CentralEntry> readCentralDirectory(const ReadAt& read, std::uint64_t fileSize,
                                               const std::string& where) {
    const EndRecord end = findEnd(read, fileSize, where);
    if (end.directorySize > end.location || end.directoryOffset > end.location)
        throw Error::corrupt(where, "corrupt end of central directory record: the directory (" +
                                        std::to_string(end.directorySize) + " bytes at " +
                                        std::to_string(end.directoryOffset) +
                                        ") does not fit before it (truncated file?)");
    // Bytes prepended to the archive (a self-extractor stub, a concatenation)
    // shift every recorded offset; Python's zipfile accounts for them too.
    const std::uint64_t concat = end.location - end.directorySize - end.directoryOffset;
    const std::uint64_t start = end.directoryOffset + concat;
    if (end.entries > end.directorySize / kCentralHeaderSize)
        throw Error::corrupt(
            where, "corrupt end of central directory record: " + std::to_string(end.entries) +
                       " entries cannot fit in " + std::to_string(end.directorySize) + " bytes");

    std::string directory(end.directorySize, '\0');
    read(start, directory.data(), directory.size());
    const auto* data = reinterpret_cast<const unsigned char*>(directory.data());

    std::vector<CentralEntry> entries;
    entries.reserve(end.entries);
    std::size_t at = 0;
    while (at + kCentralHeaderSize <= directory.size()) {
        const unsigned char* h = data + at;
        if (u32(h) != kCentralHeaderSignature) {
            if (entries.size() == end.entries)
                break;  // padding or garbage after the last record, as zipfile tolerates
            throw Error::corrupt(where, "corrupt central directory: bad signature at offset " +
                                            std::to_string(start + at));
        }
        const std::size_t nameLength = u16(h + 28);
        const std::size_t extraLength = u16(h + 30);
        const std::size_t commentLength = u16(h + 32);
        const std::size_t recordSize =
            kCentralHeaderSize + nameLength + extraLength + commentLength;
        if (at + recordSize > directory.size())
            throw Error::corrupt(where, "corrupt central directory: record at offset " +
                                            std::to_string(start + at) +
                                            " runs past the directory");
        CentralEntry entry;
        entry.flags = u16(h + 8);
        entry.method = u16(h + 10);
        entry.crc = u32(h + 16);
        entry.compressedSize = u32(h + 20);
        entry.size = u32(h + 24);
        entry.localHeaderOffset = u32(h + 42);
        entry.centralHeaderOffset = start + at;
        entry.name.assign(reinterpret_cast<const char*>(h + kCentralHeaderSize), nameLength);
        applyZip64Extra(entry, h + kCentralHeaderSize + nameLength, extraLength, entry.size == k32,
                        entry.compressedSize == k32, entry.localHeaderOffset == k32,
                        where + ":" + entry.name);
        if (entry.localHeaderOffset > UINT64_MAX - concat)
            throw Error::corrupt(where + ":" + entry.name, "local header offset out of range");
        entry.localHeaderOffset += concat;
        if (entry.localHeaderOffset >= start || entry.localHeaderOffset + kLocalHeaderSize > start)
            throw Error::corrupt(where + ":" + entry.name,
                                 "local header offset " + std::to_string(entry.localHeaderOffset) +
                                     " is not before the central directory (corrupt archive)");
        if (entry.compressedSize > start - entry.localHeaderOffset)
            throw Error::corrupt(where + ":" + entry.name,
                                 "entry claims " + std::to_string(entry.compressedSize) +
                                     " bytes, more than the archive holds before its directory "
                                     "(truncated file?)");
        entries.push_back(std::move(entry));
        at += recordSize;
    }
    if (entries.size() != end.entries && !end.zip64 && end.entries != k16)
        throw Error::corrupt(where, "corrupt central directory: " + std::to_string(entries.size()) +
                                        " entries found, the end record says " +
                                        std::to_string(end.entries));
    return entries;
}

std::uint64_t readPayloadOffset(const ReadAt& read, std::uint64_t fileSize,
                                const CentralEntry& entry, const std::string& where) {
    if (entry.localHeaderOffset > fileSize ||
        fileSize - entry.localHeaderOffset < kLocalHeaderSize + entry.name.size())
        throw Error::truncated(where,
                               "local header runs past the end of the archive (truncated file?)");
    std::string header(kLocalHeaderSize + entry.name.size(), '\0');
    read(entry.localHeaderOffset, header.data(), header.size());
    const auto* h = reinterpret_cast<const unsigned char*>(header.data());
    if (u32(h) != kLocalHeaderSignature)
        throw Error::corrupt(where, "no local header at offset " +
                                        std::to_string(entry.localHeaderOffset) + " (signature " +
                                        toHex(u32(h)) + "): corrupt archive");
    const std::size_t nameLength = u16(h + 26);
    const std::size_t extraLength = u16(h + 28);
    if (nameLength != entry.name.size() ||
        header.compare(kLocalHeaderSize, nameLength, entry.name) != 0)
        throw Error::corrupt(where, "the local header names another entry: corrupt archive");
    const std::uint64_t payload =
        entry.localHeaderOffset + kLocalHeaderSize + nameLength + extraLength;
    if (payload > fileSize || entry.compressedSize > fileSize - payload)
        throw Error::truncated(where,
                               "entry data runs past the end of the archive (truncated file?)");
    return payload;
}

LocalHeader readLocalHeader(const ReadAt& read, std::uint64_t fileSize, const CentralEntry& entry,
                            const std::string& where) {
    if (entry.localHeaderOffset > fileSize || fileSize - entry.localHeaderOffset < kLocalHeaderSize)
        throw Error::truncated(where,
                               "local header runs past the end of the archive (truncated file?)");
    unsigned char h[kLocalHeaderSize];
    read(entry.localHeaderOffset, h, sizeof h);
    if (u32(h) != kLocalHeaderSignature)
        throw Error::corrupt(where, "no local header at offset " +
                                        std::to_string(entry.localHeaderOffset) + " (signature " +
                                        toHex(u32(h)) + ")");
    LocalHeader local;
    local.flags = u16(h + 6);
    local.method = u16(h + 8);
    local.crc = u32(h + 14);
    local.compressedSize = u32(h + 18);
    local.size = u32(h + 22);
    const std::size_t nameLength = u16(h + 26);
    const std::size_t extraLength = u16(h + 28);
    const std::uint64_t end = entry.localHeaderOffset + kLocalHeaderSize + nameLength + extraLength;
    if (end > fileSize)
        throw Error::truncated(where,
                               "local header runs past the end of the archive (truncated file?)");
    std::string rest(nameLength + extraLength, '\0');
    read(entry.localHeaderOffset + kLocalHeaderSize, rest.data(), rest.size());
    local.name = rest.substr(0, nameLength);
    CentralEntry sizes;
    sizes.size = local.size;
    sizes.compressedSize = local.compressedSize;
    applyZip64Extra(sizes, reinterpret_cast<const unsigned char*>(rest.data()) + nameLength,
                    extraLength, local.size == k32, local.compressedSize == k32, false, where);
    local.size = sizes.size;
    local.compressedSize = sizes.compressedSize;
    local.payloadOffset = end;
    const auto* extra = reinterpret_cast<const unsigned char*>(rest.data()) + nameLength;
    for (std::size_t i = 0; i + 4 <= extraLength; i += 4 + u16(extra + i + 2))
        if (u16(extra + i) == kZip64ExtraId)
            local.zip64 = true;
    return local;
}

namespace {

// Reads the data descriptor at `offset`, its sizes 8 bytes each when
// `zip64`. Throws Error(where, reason) when it runs past `limit`.
DataDescriptor readDataDescriptor(const ReadAt& read, std::uint64_t offset, std::uint64_t limit,
                                  bool zip64, const std::string& where) {
    const std::uint64_t fields = zip64 ? 20 : 12;
    if (offset > limit || limit - offset < fields)
        throw Error::truncated(where,
                               "the data descriptor runs past the entry's room (truncated file?)");
    unsigned char d[24] = {};
    read(offset, d, std::min<std::uint64_t>(limit - offset, fields + 4));
    DataDescriptor dd;
    dd.offset = offset;
    // The signature is optional (APPNOTE 4.3.9.3).
    const bool signed_ = u32(d) == kDataDescriptorSignature && limit - offset >= fields + 4;
    const unsigned char* p = d + (signed_ ? 4 : 0);
    dd.crcOffset = offset + (signed_ ? 4 : 0);
    dd.crc = u32(p);
    dd.compressedSize = zip64 ? u64(p + 4) : u32(p + 4);
    dd.size = zip64 ? u64(p + 12) : u32(p + 8);
    dd.length = fields + (signed_ ? 4 : 0);
    return dd;
}

}  // namespace

DataDescriptor readEntryDataDescriptor(const ReadAt& read, std::uint64_t offset,
                                       std::uint64_t limit, bool localZip64,
                                       const CentralEntry& central, const std::string& where) {
    const auto fits = [&](const DataDescriptor& dd) {
        return dd.compressedSize == central.compressedSize && dd.size == central.size;
    };
    std::optional<DataDescriptor> expected;
    try {
        expected = readDataDescriptor(read, offset, limit, localZip64, where);
        if (fits(*expected))
            return *expected;
    } catch (const Error&) {
        // The other width may fit where this one runs past the room.
    }
    try {
        const DataDescriptor other = readDataDescriptor(read, offset, limit, !localZip64, where);
        if (fits(other) || !expected)
            return other;
    } catch (const Error&) {
        if (!expected)
            throw;
    }
    return *expected;
}

std::uint16_t alignmentPadding(std::uint64_t offset, std::size_t nameLength) {
    // The padding block (4 + pad bytes) comes before the 20-byte zip64 block.
    const std::uint64_t before = offset + kLocalHeaderSize + nameLength + 4 + kZip64LocalExtraSize;
    return static_cast<std::uint16_t>((kPayloadAlignment - before % kPayloadAlignment) %
                                      kPayloadAlignment);
}

namespace {

bool isAscii(const std::string& s) {
    return std::all_of(s.begin(), s.end(),
                       [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

int versionNeeded(int method) {
    return method == kBzip2 ? kVersionBzip2 : method == kLzma ? kVersionLzma : kVersionDefault;
}

std::uint16_t flagsOf(const EntryHeader& e) {
    std::uint16_t flags = isAscii(e.name) ? 0 : kFlagUtf8;
    if (e.method == kLzma)
        flags |= kFlagLzmaEndMarker;
    return flags;
}

std::string paddingBlock(const EntryHeader& e) {
    std::string s;
    if (e.padding) {
        put16(s, kPaddingExtraId);
        put16(s, *e.padding);
        s.append(*e.padding, '\0');
    }
    return s;
}

bool isLarge(const EntryHeader& e) {
    return e.size > kZip64Limit || e.compressedSize > kZip64Limit;
}

// The fields local and central headers share, from the flags to the name
// length; the sizes as 0xFFFFFFFF when a zip64 block holds them instead.
void putEntryFields(std::string& s, const EntryHeader& e, bool sizesInZip64) {
    put16(s, flagsOf(e));
    put16(s, static_cast<std::uint32_t>(e.method));
    put16(s, e.dosTime);
    put16(s, e.dosDate);
    put32(s, e.crc);
    put32(s, sizesInZip64 ? k32 : static_cast<std::uint32_t>(e.compressedSize));
    put32(s, sizesInZip64 ? k32 : static_cast<std::uint32_t>(e.size));
    put16(s, static_cast<std::uint32_t>(e.name.size()));
}

// Every entry is written as zipfile writes one opened with force_zip64
// (tensordict's writer): version needed 4.5 (or the method's, if higher).
int versionOf(const EntryHeader& e) {
    return std::max(versionNeeded(e.method), kVersionZip64);
}

}  // namespace

std::size_t localHeaderSize(const EntryHeader& entry) {
    return kLocalHeaderSize + entry.name.size() + (entry.padding ? 4u + *entry.padding : 0u) +
           kZip64LocalExtraSize;
}

std::string localHeader(const EntryHeader& e) {
    std::string s;
    s.reserve(localHeaderSize(e));
    put32(s, kLocalHeaderSignature);
    put16(s, versionOf(e));
    // The local header's sizes are in its zip64 block (APPNOTE 4.5.3).
    putEntryFields(s, e, true);
    put16(s, static_cast<std::uint32_t>(localHeaderSize(e) - kLocalHeaderSize - e.name.size()));
    s += e.name;
    s += paddingBlock(e);
    put16(s, kZip64ExtraId);
    put16(s, 16);
    put64(s, e.size);
    put64(s, e.compressedSize);
    return s;
}

std::string centralHeader(const EntryHeader& e) {
    std::string zip64;
    const bool far = e.localHeaderOffset > kZip64Limit;
    if (isLarge(e)) {
        put64(zip64, e.size);
        put64(zip64, e.compressedSize);
    }
    if (far)
        put64(zip64, e.localHeaderOffset);
    std::string extra;
    if (!zip64.empty()) {
        put16(extra, kZip64ExtraId);
        put16(extra, static_cast<std::uint32_t>(zip64.size()));
        extra += zip64;
    }
    extra += paddingBlock(e);
    extra += e.centralExtra;
    const int version = versionOf(e);
    std::string s;
    s.reserve(kCentralHeaderSize + e.name.size() + extra.size());
    put32(s, kCentralHeaderSignature);
    put16(s, kSystemUnix << 8 | version);
    put16(s, static_cast<std::uint32_t>(version));
    putEntryFields(s, e, isLarge(e));
    put16(s, static_cast<std::uint32_t>(extra.size()));
    put16(s, 0);  // comment
    put16(s, 0);  // disk
    put16(s, 0);  // internal attributes
    put32(s, kExternalAttributes);
    put32(s, far ? k32 : static_cast<std::uint32_t>(e.localHeaderOffset));
    s += e.name;
    s += extra;
    return s;
}

std::string endRecords(std::uint64_t count, std::uint64_t directoryOffset,
                       std::uint64_t directorySize) {
    std::string s;
    const bool zip64 =
        count > kFileCountLimit || directoryOffset > kZip64Limit || directorySize > kZip64Limit;
    if (zip64) {
        const std::uint64_t recordAt = directoryOffset + directorySize;
        put32(s, kZip64EndSignature);
        put64(s, kZip64EndSize - 12);
        put16(s, kVersionZip64);
        put16(s, kVersionZip64);
        put32(s, 0);
        put32(s, 0);
        put64(s, count);
        put64(s, count);
        put64(s, directorySize);
        put64(s, directoryOffset);
        put32(s, kZip64LocatorSignature);
        put32(s, 0);
        put64(s, recordAt);
        put32(s, 1);
    }
    put32(s, kEndSignature);
    put16(s, 0);
    put16(s, 0);
    put16(s, static_cast<std::uint32_t>(std::min<std::uint64_t>(count, k16)));
    put16(s, static_cast<std::uint32_t>(std::min<std::uint64_t>(count, k16)));
    put32(s, static_cast<std::uint32_t>(std::min<std::uint64_t>(directorySize, k32)));
    put32(s, static_cast<std::uint32_t>(std::min<std::uint64_t>(directoryOffset, k32)));
    put16(s, 0);
    return s;
}

void dosDateTime(std::uint16_t& time, std::uint16_t& date) {
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    const int year = std::max(1980, local.tm_year + 1900);
    date = static_cast<std::uint16_t>((year - 1980) << 9 | (local.tm_mon + 1) << 5 | local.tm_mday);
    time = static_cast<std::uint16_t>(local.tm_hour << 11 | local.tm_min << 5 | local.tm_sec / 2);
}

}  // namespace tensordict::zip
