// libFuzzer target: tensordict's consolidated file (td.consolidate(filename=...)):
// the leaves' bytes, then the metadata as JSON, then the JSON's length in the
// last 8 bytes. The input is
//
//   u64  dataLen   (little-endian; cut to what the input holds)
//   data           dataLen bytes: the leaves' bytes
//   json           the rest: the metadata
//
// and the file is data + json + u64(len(json)), so that every mutation keeps
// the trailer consistent and reaches the metadata's meaning (leaves, cls,
// offsets, shapes, padding). Loaded from a memfd, every leaf read (load_support.h).

#include <algorithm>
#include <cstring>
#include <string>

#include "load_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::uint64_t dataLen = 0;
    if (size >= 8)
        std::memcpy(&dataLen, data, 8);
    const std::size_t rest = size >= 8 ? size - 8 : 0;
    dataLen = std::min<std::uint64_t>(dataLen, rest);
    const std::size_t jsonLen = rest - static_cast<std::size_t>(dataLen);
    std::string file(reinterpret_cast<const char*>(data) + (size - rest), rest);
    std::uint64_t trailer = jsonLen;
    file.append(reinterpret_cast<const char*>(&trailer), 8);
    fuzz::loadAndRead(fuzz::asFile(
        "fuzz_consolidated", reinterpret_cast<const std::uint8_t*>(file.data()), file.size()));
    return 0;
}
