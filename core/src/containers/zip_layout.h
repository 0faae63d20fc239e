#pragma once

// The zip container of .tdz archives (PKWARE APPNOTE 6.3.x; core/FORMAT.md 8),
// read and written here by hand. libzip and QuaZip cannot do what the format
// needs at speed: open from the central directory alone (QuaZip reads every
// local header at open), write payloads at offsets known in advance from
// several threads, and stream without a copy through a callback.
//
// Layout of an archive as Python's zipfile writes it for tensordict, and as
// we write it (all integers little-endian):
//
//   for each entry, in plan order (no directory entries):
//     local header   30 bytes: sig 50 4B 03 04, version needed (20; 46 bzip2,
//                    63 lzma), flags (0x800 for non-ASCII names, 0x02 for
//                    lzma's end marker), method, DOS time, DOS date, CRC-32,
//                    compressed size, size (0xFFFFFFFF when >= 4 GiB),
//                    name length, extra length
//     name
//     extra          [.memmap entries stored: 74 64, pad, pad zero bytes,
//                    so that the payload starts on a multiple of 64]
//                    01 00 10 00, size (8 bytes), compressed size (8 bytes):
//                    the zip64 block every local header carries
//     payload        stored bytes, or the compressed stream
//   central directory, one 46-byte record per entry: sig 50 4B 01 02,
//                    version made by (3 << 8 | version needed: Unix), version
//                    needed, flags, method, time, date, CRC, sizes, name
//                    length, extra length, comment length 0, disk 0, internal
//                    attributes 0, external attributes 0o644 << 16, local
//                    header offset; name; extra: a zip64 block only for the
//                    fields that overflow (then version 45), then the padding
//                    block as in the local header
//   [zip64 end of central directory record (56 bytes, sig 50 4B 06 06) and
//    locator (20 bytes, sig 50 4B 06 07): only when the entry count, the
//    directory size or its offset overflow the end record]
//   end of central directory record, 22 bytes: sig 50 4B 05 06, disks 0,
//                    entry counts, directory size and offset, comment length 0
//
// Reading trusts none of it: every size and offset is checked against the
// file before it is used, and the parser is fuzzed (tests/fuzz).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tensordict::zip {

constexpr std::uint32_t kLocalHeaderSignature = 0x04034b50;
constexpr std::uint32_t kCentralHeaderSignature = 0x02014b50;
constexpr std::uint32_t kEndSignature = 0x06054b50;
constexpr std::uint32_t kZip64EndSignature = 0x06064b50;
constexpr std::uint32_t kZip64LocatorSignature = 0x07064b50;

constexpr std::size_t kLocalHeaderSize = 30;
constexpr std::size_t kCentralHeaderSize = 46;
constexpr std::size_t kEndSize = 22;
constexpr std::size_t kZip64EndSize = 56;
constexpr std::size_t kZip64LocatorSize = 20;
constexpr std::size_t kZip64LocalExtraSize = 20;  // id, length, size, compressed size

constexpr std::uint16_t kZip64ExtraId = 0x0001;
constexpr std::uint16_t kPaddingExtraId = 0x6474;  // "td": tensordict's alignment padding
constexpr std::uint64_t kPayloadAlignment = 64;

constexpr int kStored = 0;
constexpr int kDeflate = 8;
constexpr int kBzip2 = 12;
constexpr int kLzma = 14;
// The methods this library decompresses (stored is no compression at all).
constexpr bool isReadableMethod(int method) {
    return method == kStored || method == kDeflate || method == kBzip2 || method == kLzma;
}

constexpr std::uint16_t kFlagEncrypted = 0x0001;
constexpr std::uint16_t kFlagLzmaEndMarker = 0x0002;
constexpr std::uint16_t kFlagUtf8 = 0x0800;

// Little-endian fields, as every zip integer is.
inline std::uint16_t u16(const unsigned char* p) {
    return static_cast<std::uint16_t>(p[0] | p[1] << 8);
}
inline std::uint32_t u32(const unsigned char* p) {
    return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
           static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}
inline std::uint64_t u64(const unsigned char* p) {
    return static_cast<std::uint64_t>(u32(p)) | static_cast<std::uint64_t>(u32(p + 4)) << 32;
}
inline void put16(std::string& s, std::uint32_t v) {
    s.push_back(static_cast<char>(v & 0xFF));
    s.push_back(static_cast<char>((v >> 8) & 0xFF));
}
inline void put32(std::string& s, std::uint32_t v) {
    put16(s, v & 0xFFFF);
    put16(s, v >> 16);
}
inline void put64(std::string& s, std::uint64_t v) {
    put32(s, static_cast<std::uint32_t>(v));
    put32(s, static_cast<std::uint32_t>(v >> 32));
}

// One entry as the central directory describes it.
struct CentralEntry {
    std::string name;  // raw bytes of the name
    std::uint16_t flags = 0;
    int method = 0;
    std::uint32_t crc = 0;
    std::uint64_t compressedSize = 0;
    std::uint64_t size = 0;
    std::uint64_t localHeaderOffset = 0;    // from the start of the file
    std::uint64_t centralHeaderOffset = 0;  // where this record is, from the start of the file
    std::string accessIndex;  // the data of its access-index block, if any (access_index.h)
};

// Reads `n` bytes at `offset` of the archive into `out`; throws Error naming
// the archive when the file is shorter.
using ReadAt = std::function<void(std::uint64_t offset, void* out, std::size_t n)>;

// The central directory of an archive of `fileSize` bytes: every entry, in
// directory order, with ZIP64 sizes and offsets resolved and data prepended
// to the archive accounted for, as Python's zipfile does. Reads only the end
// records and the directory. Throws Error(where, reason) for anything that
// is not a well-formed zip, or that points outside the file.
std::vector<CentralEntry> readCentralDirectory(const ReadAt& read, std::uint64_t fileSize,
                                               const std::string& where);

// Where the payload of `entry` starts, from its local header (which must
// name the same entry). Throws Error(where, reason).
std::uint64_t readPayloadOffset(const ReadAt& read, std::uint64_t fileSize,
                                const CentralEntry& entry, const std::string& where);

// An entry's local header as it is in the file, sizes from its zip64 block
// where the 32-bit fields overflow.
struct LocalHeader {
    std::string name;
    std::uint16_t flags = 0;
    int method = 0;
    std::uint32_t crc = 0;
    std::uint64_t compressedSize = 0;
    std::uint64_t size = 0;
    std::uint64_t payloadOffset = 0;  // just past the header, its name and its extra field
    bool zip64 = false;               // it has a zip64 extra block (then so has its descriptor)
};
// Reads the local header at `entry.localHeaderOffset`, checking only that
// it is one and that it fits in the file (comparing it with the directory
// is the caller's). Throws Error(where, reason).
LocalHeader readLocalHeader(const ReadAt& read, std::uint64_t fileSize, const CentralEntry& entry,
                            const std::string& where);

// A data descriptor (flag bit 3): the CRC and sizes after the payload.
constexpr std::uint32_t kDataDescriptorSignature = 0x08074b50;
constexpr std::uint16_t kFlagDataDescriptor = 0x0008;
struct DataDescriptor {
    std::uint32_t crc = 0;
    std::uint64_t compressedSize = 0, size = 0;
    std::uint64_t offset = 0;     // where it starts
    std::uint64_t length = 0;     // its bytes: 12 or 20, and 4 more with its signature
    std::uint64_t crcOffset = 0;  // where its CRC field is
};
// The data descriptor after entry `central`, whose local header has a zip64
// block or not (`localZip64`): its sizes are 8 bytes each with that block,
// or where only that width agrees with the central directory. Go's and
// Java's writers give an entry over 4 GiB 8-byte sizes there with no zip64
// block in its local header; readers that check (libzip) take either.
DataDescriptor readEntryDataDescriptor(const ReadAt& read, std::uint64_t offset,
                                       std::uint64_t limit, bool localZip64,
                                       const CentralEntry& central, const std::string& where);

// Writing: one entry as it goes into the archive.
struct EntryHeader {
    std::string name;
    int method = kStored;
    std::uint32_t crc = 0;
    std::uint64_t compressedSize = 0;
    std::uint64_t size = 0;
    std::uint64_t localHeaderOffset = 0;
    // The 0x6474 padding block's data size, for aligned .memmap entries
    // (present even when 0 bytes are needed).
    std::optional<std::uint16_t> padding;
    std::uint16_t dosTime = 0, dosDate = 0;
    std::string centralExtra;  // more extra blocks for the central record (an access index)
};

// Bytes of the padding block's data that put the payload of an entry with
// this name, whose local header starts at `offset`, on a 64-byte boundary.
std::uint16_t alignmentPadding(std::uint64_t offset, std::size_t nameLength);
// The size of the local header (with name and extra) of an entry.
std::size_t localHeaderSize(const EntryHeader& entry);
std::string localHeader(const EntryHeader& entry);
std::string centralHeader(const EntryHeader& entry);
// The end records for `count` entries whose directory of `directorySize`
// bytes starts at `directoryOffset`.
std::string endRecords(std::uint64_t count, std::uint64_t directoryOffset,
                       std::uint64_t directorySize);
// The current local time in MS-DOS form, as zipfile stamps entries.
void dosDateTime(std::uint16_t& time, std::uint16_t& date);

}  // namespace tensordict::zip
