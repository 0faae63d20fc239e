#pragma once

// Access points of the deflate entries we write (core/FORMAT.md 8.7): where
// a reader may start inflating without the bytes before.
//
// The writer compresses a large entry in 1 MiB chunks, each primed with the
// 32 KiB before it and ended on a byte boundary (codec.h). Every `spacing`
// bytes of input one chunk is left unprimed: the stream from there on
// refers to nothing before it, so a plain inflate may start at that byte.
// The compressed lengths of these segments, and each one's CRC-32, go into
// one extra block of the entry's central record, written last, when they
// are known; zip readers skip blocks they do not know (Python's zipfile,
// unzip, 7z and libzip do).
//
//   id 0x7874 ("tx"), data size, then:
//     u8 version (1), u8 0, u32 spacing, u32 segment count N,
//     N x (u32 compressed length, u32 CRC-32 of the inflated segment),
//     u32 CRC-32 of everything above from the version on
//
// A reader trusts the block only when it is whole and consistent with the
// entry: its own CRC, N segments of `spacing` covering the entry's size,
// lengths that add up to its compressed size, and segment CRCs that
// combine into the entry's CRC. Anything else and the block is ignored;
// the entry is then inflated from its start, as any reader would.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "containers/zip_layout.h"

namespace tensordict::zip {

constexpr std::uint16_t kAccessIndexExtraId = 0x7874;

struct AccessIndex {
    std::uint64_t spacing = 0;           // inflated bytes per segment (the last may be fewer)
    std::vector<std::uint64_t> offsets;  // each segment's start in the payload, and its end
    std::vector<std::uint32_t> crcs;     // CRC-32 of each segment, inflated
    std::size_t segments() const { return crcs.size(); }
    // The inflated bytes of segment `i` of an entry of `size` bytes.
    std::uint64_t segmentSize(std::size_t i, std::uint64_t size) const {
        return std::min(spacing, size - i * spacing);
    }
};

// The spacing the writer uses for an entry of `size` bytes: 4 MiB, or more
// to keep the block within 8,000 segments, a whole number of `chunk`s.
// 0 when the entry is small enough to need none (one segment).
std::uint64_t accessSpacing(std::uint64_t size, std::uint64_t chunk);

// The whole extra block (id, size, data) for these segments.
std::string accessIndexBlock(std::uint64_t spacing, const std::vector<std::uint64_t>& lengths,
                             const std::vector<std::uint32_t>& crcs);

// The index of `entry` from its block's data (CentralEntry::accessIndex),
// or nullopt when it is absent, damaged or does not fit the entry.
std::optional<AccessIndex> parseAccessIndex(std::string_view data, const CentralEntry& entry);

}  // namespace tensordict::zip
