// libFuzzer target: the walk of a raw deflate stream's blocks
// (deflate_blocks.h) that tells the parallel writer where a libdeflate
// chunk's final block starts. The input is
//
//   u32le how many bytes the stream should inflate to, when zlib rejects it
//   bytes the stream
//
// The walk is asked for zlib's own count when zlib inflates the stream, and
// for the given count otherwise. Whatever it answers, zlib must answer the
// same: zlib inflates the stream to exactly that count, and its final block
// starts and ends where the walk says. A walk that declines is always right.

#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <vector>

#include "deflate_blocks.h"
#include "tensordict/error.h"

namespace {

// zlib's count for the stream, or nullopt when it rejects it.
std::optional<std::uint64_t> inflatedSize(const std::uint8_t* data, std::size_t size) {
    z_stream z{};
    if (inflateInit2(&z, -MAX_WBITS) != Z_OK)
        std::abort();
    std::vector<Bytef> sink(1u << 16);
    z.next_in = const_cast<Bytef*>(data);
    z.avail_in = static_cast<uInt>(size);
    int rc;
    do {
        z.next_out = sink.data();
        z.avail_out = static_cast<uInt>(sink.size());
        rc = inflate(&z, Z_NO_FLUSH);
    } while (rc == Z_OK && z.total_out < (64u << 20));
    const std::uint64_t out = z.total_out;
    inflateEnd(&z);
    if (rc != Z_STREAM_END)
        return std::nullopt;
    return out;
}

[[noreturn]] void fail(const char* what) {
    std::fprintf(stderr, "fuzz_deflate_blocks: %s\n", what);
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 4)
        return 0;
    const std::uint64_t given = std::uint64_t(data[0]) | std::uint64_t(data[1]) << 8 |
                                std::uint64_t(data[2]) << 16 | std::uint64_t(data[3]) << 24;
    const std::uint8_t* stream = data + 4;
    const std::size_t length = size - 4;
    const std::optional<std::uint64_t> inflated = inflatedSize(stream, length);
    const std::uint64_t output = inflated ? *inflated : given;
    const auto* bytes = reinterpret_cast<const std::byte*>(stream);
    const std::optional<tensordict::StreamEnd> walked =
        tensordict::walkToStreamEnd(bytes, length, output);
    if (!walked)
        return 0;
    if (!inflated)
        fail("the walk answered for a stream zlib rejects");
    tensordict::StreamEnd reference;
    try {
        reference = tensordict::inflateToStreamEnd(bytes, length);
    } catch (const tensordict::Error&) {
        fail("zlib inflates the stream but finds no end");
    }
    if (!(reference == *walked))
        fail("the walk and zlib place the final block or the end differently");
    return 0;
}
