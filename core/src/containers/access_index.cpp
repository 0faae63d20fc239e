#include "containers/access_index.h"

#include <algorithm>

#include "codec/codec.h"
#include "tensordict/bytes.h"

namespace tensordict::zip {
namespace {

constexpr std::uint8_t kVersion = 1;
constexpr std::uint64_t kMaxSegments = 8000;  // 64 KB: an extra block's limit is 65,535
constexpr std::size_t kHeadSize = 10;         // version, 0, spacing, count

std::uint32_t crcOf(std::string_view bytes) {
    return crc32Of(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size());
}

}  // namespace

std::uint64_t accessSpacing(std::uint64_t size, std::uint64_t chunk) {
    std::uint64_t spacing = std::max(kAccessPointSpacing, (size + kMaxSegments - 1) / kMaxSegments);
    spacing = (spacing + chunk - 1) / chunk * chunk;
    return size > spacing ? spacing : 0;
}

std::string accessIndexBlock(std::uint64_t spacing, const std::vector<std::uint64_t>& lengths,
                             const std::vector<std::uint32_t>& crcs) {
    std::string data;
    data.push_back(static_cast<char>(kVersion));
    data.push_back(0);
    put32(data, static_cast<std::uint32_t>(spacing));
    put32(data, static_cast<std::uint32_t>(lengths.size()));
    for (std::size_t i = 0; i < lengths.size(); ++i) {
        put32(data, static_cast<std::uint32_t>(lengths[i]));
        put32(data, crcs[i]);
    }
    put32(data, crcOf(data));
    std::string block;
    put16(block, kAccessIndexExtraId);
    put16(block, static_cast<std::uint32_t>(data.size()));
    return block + data;
}

std::optional<AccessIndex> parseAccessIndex(std::string_view data, const CentralEntry& entry) {
    if (data.size() < kHeadSize + 4 || entry.method != kDeflate)
        return std::nullopt;
    const auto* p = reinterpret_cast<const unsigned char*>(data.data());
    const std::uint64_t spacing = u32(p + 2);
    const std::uint64_t count = u32(p + 6);
    if (p[0] != kVersion || spacing == 0 || count > kMaxSegments ||
        data.size() != kHeadSize + count * 8 + 4 ||
        u32(p + data.size() - 4) != crcOf(data.substr(0, data.size() - 4)) ||
        count != (entry.size + spacing - 1) / spacing)
        return std::nullopt;
    AccessIndex index;
    index.spacing = spacing;
    index.offsets.reserve(count + 1);
    index.crcs.reserve(count);
    std::uint64_t offset = 0;
    std::uint32_t crc = 0;
    for (std::uint64_t i = 0; i < count; ++i) {
        const std::uint64_t length = u32(p + kHeadSize + i * 8);
        index.offsets.push_back(offset);
        index.crcs.push_back(u32(p + kHeadSize + i * 8 + 4));
        crc = crc32Combine(crc, index.crcs.back(), index.segmentSize(i, entry.size));
        offset += length;
    }
    index.offsets.push_back(offset);
    if (offset != entry.compressedSize || crc != entry.crc)
        return std::nullopt;
    return index;
}

}  // namespace tensordict::zip
