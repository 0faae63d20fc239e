// libFuzzer target: the walk of a raw deflate stream's blocks
// (deflate_blocks.h) that tells the parallel writer where a libdeflate
// chunk's final block starts. The input is one of
//
//   u8 (even) u32le a byte count, then a raw deflate stream;
//   u8 (odd)  u8 maker, 4 x u16le bit positions, then bytes to compress: the
//             stream is the bytes compressed by the maker (0-12: libdeflate
//             at that level; 13-22: zlib at level maker - 13; 23-255: zlib
//             level 6 with the fixed Huffman codes), with those four bits
//             (modulo its length) flipped, the count the bytes' length;
//             shorter than 10 bytes, it is read as the first form.
//
// Raw streams reach the header checks; made ones, valid streams and their
// near misses, reach everything past them. The walk is asked for zlib's
// count when zlib inflates the stream, and for the given count otherwise.
// Whatever it answers, zlib must answer the same: zlib inflates the stream
// to exactly that count, and its final block starts and ends where the
// walk says. A walk that declines is right, except on a stream a compressor
// made and the flips left as it was: that one it must answer for.

#include <libdeflate.h>
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <vector>

#include "codec/deflate_blocks.h"
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

// The stream `maker` makes of the bytes (the input's layout above).
std::vector<std::uint8_t> made(std::uint8_t maker, const std::uint8_t* data, std::size_t size) {
    std::vector<std::uint8_t> out;
    if (maker <= 12) {
        libdeflate_compressor* c = libdeflate_alloc_compressor(maker);
        if (!c)
            std::abort();
        out.resize(libdeflate_deflate_compress_bound(c, size));
        out.resize(libdeflate_deflate_compress(c, data, size, out.data(), out.size()));
        libdeflate_free_compressor(c);
        return out;
    }
    z_stream z{};
    const int level = maker <= 22 ? maker - 13 : 6;
    if (deflateInit2(&z, level, Z_DEFLATED, -MAX_WBITS, 8,
                     maker <= 22 ? Z_DEFAULT_STRATEGY : Z_FIXED) != Z_OK)
        std::abort();
    out.resize(deflateBound(&z, static_cast<uLong>(size)) + 64);
    z.next_in = const_cast<Bytef*>(data);
    z.avail_in = static_cast<uInt>(size);
    z.next_out = out.data();
    z.avail_out = static_cast<uInt>(out.size());
    if (deflate(&z, Z_FINISH) != Z_STREAM_END)
        std::abort();
    out.resize(z.total_out);
    deflateEnd(&z);
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::vector<std::uint8_t> stream, unflipped;
    std::uint64_t given = 0;
    if (size >= 10 && (data[0] & 1)) {
        given = size - 10;
        stream = made(data[1], data + 10, size - 10);
        unflipped = stream;
        for (int i = 0; i < 4; ++i) {
            const std::size_t bit = std::size_t(data[2 + 2 * i] | data[3 + 2 * i] << 8);
            if (!stream.empty())
                stream[bit / 8 % stream.size()] ^= std::uint8_t(1u << (bit % 8));
        }
    } else if (size >= 5) {
        given = std::uint64_t(data[1]) | std::uint64_t(data[2]) << 8 |
                std::uint64_t(data[3]) << 16 | std::uint64_t(data[4]) << 24;
        stream.assign(data + 5, data + size);
    } else {
        return 0;
    }
    const std::optional<std::uint64_t> inflated = inflatedSize(stream.data(), stream.size());
    const std::uint64_t output = inflated ? *inflated : given;
    const auto* bytes = reinterpret_cast<const std::byte*>(stream.data());
    const std::optional<tensordict::StreamEnd> walked =
        tensordict::walkToStreamEnd(bytes, stream.size(), output);
    if (!walked) {
        if (!unflipped.empty() && stream == unflipped)
            fail("the walk declined a stream a compressor made");
        return 0;
    }
    if (!inflated)
        fail("the walk answered for a stream zlib rejects");
    tensordict::StreamEnd reference;
    try {
        reference = tensordict::inflateToStreamEnd(bytes, stream.size());
    } catch (const tensordict::Error&) {
        fail("zlib inflates the stream but finds no end");
    }
    if (!(reference == *walked))
        fail("the walk and zlib place the final block or the end differently");
    return 0;
}
