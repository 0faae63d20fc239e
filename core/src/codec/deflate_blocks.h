#pragma once

// The block structure of raw deflate streams (RFC 1951): where a stream's
// final block starts, so that a stream compressed whole (libdeflate ends
// every call with a final block) can be continued by the next chunk's.

#include <cstddef>
#include <cstdint>
#include <optional>

namespace tensordict {

// Where a complete raw deflate stream's final block begins and where its
// end-of-block code ends, in bits from the stream's start.
struct StreamEnd {
    std::uint64_t finalBlock = 0;
    std::uint64_t end = 0;
    bool operator==(const StreamEnd& o) const { return finalBlock == o.finalBlock && end == o.end; }
};

// Finds them by walking the stream's blocks: every Huffman code is decoded
// and the bytes it stands for are counted, but nothing is written, which
// takes about half the time of zlib's inflate. It answers only when the walk
// checks out whole: every code and every table valid, every distance
// within the output before it (the stream is unprimed), exactly `output`
// bytes up to the first final block, and no bit read past the stream's
// end. Otherwise nullopt, and inflateToStreamEnd decides. Bytes after the
// end are the caller's to judge, as they are zlib's.
std::optional<StreamEnd> walkToStreamEnd(const std::byte* stream, std::size_t size,
                                         std::uint64_t output);

// The same found by zlib's inflate, as zlib's gzappend finds it (inflate
// stops between blocks with Z_BLOCK). Throws Error (corrupt) when zlib
// rejects the stream or it ends early.
StreamEnd inflateToStreamEnd(const std::byte* stream, std::size_t size);

}  // namespace tensordict
