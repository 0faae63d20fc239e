#include "compress.h"

#include <bzlib.h>
#include <lzma.h>
#include <zlib.h>

#include <algorithm>

#include "tensordict/error.h"

namespace tensordict {
namespace {

constexpr std::size_t kChunk = 1u << 20;

// Runs a codec's cleanup however the function is left (cancel and bad_alloc throw).
template <typename F>
struct AtExit {
    F f;
    ~AtExit() { f(); }
};
template <typename F>
AtExit(F) -> AtExit<F>;

void checkInput(const std::function<bool(std::uint64_t)>& onInput, std::uint64_t n) {
    if (onInput && !onInput(n))
        throw Error("", "cancelled");
}

std::string deflateRaw(const std::byte* data, std::size_t size, int level,
                       const std::function<bool(std::uint64_t)>& onInput) {
    z_stream z{};
    if (deflateInit2(&z, level < 0 ? Z_DEFAULT_COMPRESSION : std::min(level, 9), Z_DEFLATED,
                     -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        throw Error("", "cannot start deflate");
    AtExit end{[&z] { deflateEnd(&z); }};
    std::string out;
    out.resize(deflateBound(&z, static_cast<uLong>(std::min<std::size_t>(size, kChunk))) + 64);
    std::size_t done = 0;
    int rc = Z_OK;
    do {
        const std::size_t n = std::min(kChunk, size - done);
        z.next_in = const_cast<Bytef*>(reinterpret_cast<const Bytef*>(data + done));
        z.avail_in = static_cast<uInt>(n);
        done += n;
        const int flush = done == size ? Z_FINISH : Z_NO_FLUSH;
        do {
            if (z.total_out + kChunk > out.size())
                out.resize(out.size() * 2 + kChunk);
            z.next_out = reinterpret_cast<Bytef*>(out.data() + z.total_out);
            z.avail_out =
                static_cast<uInt>(std::min<std::size_t>(out.size() - z.total_out, 1u << 30));
            rc = deflate(&z, flush);
        } while (z.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
        checkInput(onInput, n);
    } while (done < size);
    out.resize(z.total_out);
    if (rc != Z_STREAM_END)
        throw Error("", "deflate failed");
    return out;
}

std::string bzip2(const std::byte* data, std::size_t size, int level,
                  const std::function<bool(std::uint64_t)>& onInput) {
    bz_stream bz{};
    if (BZ2_bzCompressInit(&bz, level < 1 ? 9 : std::min(level, 9), 0, 0) != BZ_OK)
        throw Error("", "cannot start bzip2");
    AtExit end{[&bz] { BZ2_bzCompressEnd(&bz); }};
    std::string out(size / 2 + kChunk, '\0');
    std::uint64_t produced = 0;
    std::size_t done = 0;
    int rc = BZ_RUN_OK;
    for (;;) {
        const std::size_t n = std::min(kChunk, size - done);
        bz.next_in = const_cast<char*>(reinterpret_cast<const char*>(data + done));
        bz.avail_in = static_cast<unsigned>(n);
        done += n;
        const int action = done == size ? BZ_FINISH : BZ_RUN;
        do {
            if (produced + kChunk > out.size())
                out.resize(out.size() * 2);
            bz.next_out = out.data() + produced;
            bz.avail_out =
                static_cast<unsigned>(std::min<std::uint64_t>(out.size() - produced, 1u << 30));
            const unsigned before = bz.avail_out;
            rc = BZ2_bzCompress(&bz, action);
            produced += before - bz.avail_out;
        } while (bz.avail_in > 0 || (action == BZ_FINISH && rc == BZ_FINISH_OK));
        checkInput(onInput, n);
        if (action == BZ_FINISH)
            break;
    }
    if (rc != BZ_STREAM_END)
        throw Error("", "bzip2 failed");
    out.resize(produced);
    return out;
}

std::string lzmaZip(const std::byte* data, std::size_t size, int level,
                    const std::function<bool(std::uint64_t)>& onInput) {
    lzma_options_lzma opt;
    if (lzma_lzma_preset(
            &opt, level < 0 ? LZMA_PRESET_DEFAULT : static_cast<std::uint32_t>(std::min(level, 9))))
        throw Error("", "bad LZMA level");
    lzma_filter filters[2] = {{LZMA_FILTER_LZMA1, &opt}, {LZMA_VLI_UNKNOWN, nullptr}};
    std::uint32_t propsSize = 0;
    lzma_properties_size(&propsSize, &filters[0]);
    std::string out(4 + propsSize, '\0');
    out[0] = 9;  // the LZMA SDK version Python's zipfile records
    out[1] = 4;
    out[2] = static_cast<char>(propsSize & 0xFF);
    out[3] = static_cast<char>(propsSize >> 8);
    lzma_properties_encode(&filters[0], reinterpret_cast<std::uint8_t*>(out.data() + 4));
    lzma_stream strm = LZMA_STREAM_INIT;
    if (lzma_raw_encoder(&strm, filters) != LZMA_OK)
        throw Error("", "cannot start LZMA");
    AtExit end{[&strm] { lzma_end(&strm); }};
    std::size_t produced = out.size();
    out.resize(produced + size / 2 + kChunk);
    std::size_t done = 0;
    lzma_ret rc = LZMA_OK;
    for (;;) {
        const std::size_t n = std::min(kChunk, size - done);
        strm.next_in = reinterpret_cast<const std::uint8_t*>(data + done);
        strm.avail_in = n;
        done += n;
        const lzma_action action = done == size ? LZMA_FINISH : LZMA_RUN;
        do {
            if (produced + kChunk > out.size())
                out.resize(out.size() * 2);
            strm.next_out = reinterpret_cast<std::uint8_t*>(out.data() + produced);
            strm.avail_out = out.size() - produced;
            const std::size_t before = strm.avail_out;
            rc = lzma_code(&strm, action);
            produced += before - strm.avail_out;
        } while (rc == LZMA_OK && (strm.avail_in > 0 || action == LZMA_FINISH));
        checkInput(onInput, n);
        if (action == LZMA_FINISH || rc != LZMA_OK)
            break;
    }
    if (rc != LZMA_STREAM_END)
        throw Error("", "LZMA compression failed");
    out.resize(produced);
    return out;
}

}  // namespace

std::uint32_t crc32Of(const std::byte* data, std::size_t size) {
    return static_cast<std::uint32_t>(crc32_z(0, reinterpret_cast<const Bytef*>(data), size));
}

std::string compressPayload(const std::byte* data, std::size_t size, int method, int level,
                            const std::function<bool(std::uint64_t)>& onInput) {
    switch (method) {
        case 8:
            return deflateRaw(data, size, level, onInput);
        case 12:
            return bzip2(data, size, level, onInput);
        case 14:
            return lzmaZip(data, size, level, onInput);
        default:
            throw Error("", "no compressor for zip method " + std::to_string(method));
    }
}

}  // namespace tensordict
