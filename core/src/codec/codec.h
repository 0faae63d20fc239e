#pragma once

// The codecs of zip entries: CRC-32, compression of whole payloads or of
// deflate chunks that join into one stream, and streaming decompression.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tensordict {

// CRC-32 (zip's, reflected 0xEDB88320), continued from `crc` (0 to start):
// ISA-L's PCLMUL kernel, many GB/s.
std::uint32_t crc32(std::uint32_t crc, const std::byte* data, std::size_t size);
inline std::uint32_t crc32Of(const std::byte* data, std::size_t size) {
    return crc32(0, data, size);
}
// The CRC of A followed by B, from CRC(A), CRC(B) and B's length.
std::uint32_t crc32Combine(std::uint32_t crcA, std::uint32_t crcB, std::uint64_t lengthB);

// The payload of a zip entry compressed with `method`: raw deflate (8), a
// bzip2 stream (12), or LZMA as APPNOTE 5.8.8 / Python's zipfile write it
// (14: version, properties size, LZMA1 properties, raw stream with end
// marker). `level` -1 is the codec's default. `onInput(bytes)` reports
// progress and returns false to stop (throws Cancelled).
std::string compressPayload(const std::byte* data, std::size_t size, int method, int level,
                            const std::function<bool(std::uint64_t)>& onInput);

// ISA-L's deflate for zip levels 1 to 3: several times zlib's speed with
// gzip -1's size or less (bench_save). Zip level 1 is ISA-L's level 2, 2
// and 3 its level 3: on image-like data ISA-L's level 1 came out 5.7% over
// gzip -1, level 2 within 1%, level 3 2.6% under, all three at one speed.
int isalLevelFor(int zipLevel);
// The level buffer ISA-L's level `isalLevel` (0 to 3) takes: its default,
// the size whose hash tables bench_save measured.
std::uint32_t isalLevelBufferSize(int isalLevel);

// libdeflate for zip levels 4 to 7: it compresses a whole buffer about twice
// as fast as zlib, but its levels find fewer matches than zlib's of the same
// number on image-like data (its 6 came out 1.3% over zlib's 6). Each zip
// level takes the fastest libdeflate level within 1% of zlib's size on
// bench_save's images and floats; at 8 and 9, where size is the point,
// libdeflate is either larger (its 8, 9) or slower (10 to 12), so zlib stays.
// 0 where libdeflate does not take the level.
int libdeflateLevelFor(int zipLevel);

// Parallel deflate, the pigz method: a payload cut into chunks, each
// compressed on its own (by zlib and ISA-L primed with the 32 KiB of input
// before it, so matches still reach back across the cut; libdeflate takes no
// dictionary) and ended on a byte boundary with an empty stored block; the
// last chunk ends the stream. Their
// concatenation is one valid raw deflate stream.
constexpr std::size_t kDeflateChunk = 1u << 20;
std::string deflateChunk(const std::byte* data, std::size_t size, const std::byte* dictionary,
                         std::size_t dictionarySize, bool last, int level);

// Where a deflate stream can be decoded on from without its start: ISA-L's
// whole decoder state (bit buffer, Huffman tables, the last 32 KiB of
// output: the zran method's window and more, about 85 KiB) and how much
// input it had taken. Opaque outside codec.cpp.
struct InflatePoint;

// Access points recorded by one front-to-back pass over a deflate stream
// without its own (a Python-written archive): point i resumes at output
// i * spacing (point 0 is the start: null), and crcs[i] is the CRC-32 of
// segment i, so that a part read from a point is checked as our own
// access points are.
struct RecordedPoints {
    std::uint64_t spacing = 0;
    std::uint64_t size = 0;  // the stream's output bytes
    std::vector<std::shared_ptr<const InflatePoint>> points;
    std::vector<std::uint32_t> crcs;
    std::size_t segments() const { return crcs.size(); }
    std::uint64_t segmentSize(std::size_t i) const { return std::min(spacing, size - i * spacing); }
    // The memory they take, for the cache that keeps them.
    std::uint64_t memoryBytes() const;
};

// Streaming decompression of one zip entry's payload (deflate, bzip2 or
// LZMA method 14) from `compressed`, which must stay valid meanwhile. Each
// read() fills `out` with the next bytes; it returns fewer than asked only
// at the end of the stream. Throws Error(where, reason) on corrupt data.
class Decompressor {
public:
    static std::unique_ptr<Decompressor> create(int method, const std::byte* compressed,
                                                std::size_t size, const std::string& where);
    // A raw deflate stream (all of `compressed`, from its start) decoded on
    // from `point`, a point that recordPoints() gave for it.
    static std::unique_ptr<Decompressor> resume(const InflatePoint& point,
                                                const std::byte* compressed, std::size_t size,
                                                const std::string& where);
    virtual ~Decompressor() = default;
    virtual std::size_t read(std::byte* out, std::size_t n) = 0;
    // Records an access point every `spacing` bytes of output while the
    // stream is read front to back from its start; once `size` bytes are
    // out, `done` gets them (on the reading thread). Deflate read by ISA-L
    // only: elsewhere (zlib, bzip2, LZMA, a fallback) nothing is recorded.
    virtual void recordPoints(std::uint64_t spacing, std::uint64_t size,
                              std::function<void(std::shared_ptr<const RecordedPoints>)> done) {
        (void)spacing, (void)size, (void)done;
    }
};

}  // namespace tensordict
