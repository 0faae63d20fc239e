#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace tensordict {

std::uint32_t crc32Of(const std::byte* data, std::size_t size);

// The payload of a zip entry compressed with `method`: raw deflate (8), a
// bzip2 stream (12), or LZMA as APPNOTE 5.8.8 / Python's zipfile write it
// (14: version, properties size, LZMA1 properties, raw stream with end
// marker). `level` -1 is the codec's default. `onInput(bytes)` reports
// progress and returns false to stop (Error "cancelled").
std::string compressPayload(const std::byte* data, std::size_t size, int method, int level,
                            const std::function<bool(std::uint64_t)>& onInput);

}  // namespace tensordict
