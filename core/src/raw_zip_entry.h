#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tensordict {

// The still-compressed bytes of entry `name` of the zip at `archivePath`
// (libzip). Throws Error naming the entry.
std::string readCompressedEntry(const std::string& archivePath, const std::string& name,
                                std::uint64_t compressedSize);

// libzip's version at run time.
std::string libzipVersion();

// Decodes a zip method-14 (LZMA) payload into exactly `outSize` bytes.
void decodeZipLzma(const std::string& payload, std::byte* out, std::size_t outSize,
                   const std::string& where);

}  // namespace tensordict
