#include "codec/codec.h"

#include <bzlib.h>
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#include <libdeflate.h>
#include <lzma.h>
#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "base/at_exit.h"
#include "codec/deflate_blocks.h"
#include "tensordict/cancel.h"
#include "tensordict/error.h"

namespace tensordict {

std::uint32_t isalLevelBufferSize(int isalLevel) {
    static constexpr std::uint32_t kLevelBuffer[] = {ISAL_DEF_LVL0_DEFAULT, ISAL_DEF_LVL1_DEFAULT,
                                                     ISAL_DEF_LVL2_DEFAULT, ISAL_DEF_LVL3_DEFAULT};
    return kLevelBuffer[std::clamp(isalLevel, 0, 3)];
}

int isalLevelFor(int zipLevel) {
    return zipLevel <= 1 ? 2 : 3;
}

int libdeflateLevelFor(int zipLevel) {
    switch (zipLevel) {
        case 4:
            return 4;
        case 5:
            return 6;
        case 6:
        case 7:
            return 7;
        default:
            return 0;  // not libdeflate's
    }
}

namespace {

constexpr std::size_t kChunk = 1u << 20;
constexpr int kDefaultDeflateLevel = 6;  // what zlib's Z_DEFAULT_COMPRESSION means

void checkInput(const std::function<bool(std::uint64_t)>& onInput, std::uint64_t n) {
    if (onInput && !onInput(n))
        throw Cancelled("");
}

// Deflates `data` with ISA-L at zip level `level` (1 to 3). Primed
// with `dictionary` (the 32 KiB before), it ends with a sync flush (on a
// byte boundary, the stream open) unless `finish`, as deflateChunk needs.
std::string deflateIsal(const std::byte* data, std::size_t size, const std::byte* dictionary,
                        std::size_t dictionarySize, bool finish, int level,
                        const std::function<bool(std::uint64_t)>& onInput) {
    // The stream state, hash tables and output buffer of each thread, kept
    // between chunks: made afresh, zeroing them cost as much as the deflate.
    struct Scratch {
        isal_zstream z;
        std::unique_ptr<std::uint8_t[]> levelBuffer{new std::uint8_t[std::max(
            {isalLevelBufferSize(1), isalLevelBufferSize(2), isalLevelBufferSize(3)})]};
        std::unique_ptr<std::uint8_t[]> out;
        std::size_t outSize = 0;
    };
    thread_local std::unique_ptr<Scratch> scratch;
    if (!scratch)
        scratch = std::make_unique<Scratch>();
    isal_zstream* z = &scratch->z;
    isal_deflate_init(z);
    const int isal = isalLevelFor(level);
    z->level = static_cast<std::uint32_t>(isal);
    z->level_buf = scratch->levelBuffer.get();
    z->level_buf_size = isalLevelBufferSize(isal);
    if (dictionarySize > 0 &&
        isal_deflate_set_dict(
            z,
            const_cast<std::uint8_t*>(reinterpret_cast<const std::uint8_t*>(dictionary) +
                                      (dictionarySize > 32768 ? dictionarySize - 32768 : 0)),
            static_cast<std::uint32_t>(std::min<std::size_t>(dictionarySize, 32768))) != COMP_OK)
        throw Error::corrupt("", "cannot prime deflate");
    std::size_t produced = 0;  // z->total_out is 32 bits
    const auto reserve = [&](std::size_t n) {
        if (scratch->outSize >= n)
            return;
        std::unique_ptr<std::uint8_t[]> bigger(new std::uint8_t[n]);
        std::copy_n(scratch->out.get(), produced, bigger.get());
        scratch->out = std::move(bigger);
        scratch->outSize = n;
    };
    reserve(std::min<std::size_t>(size, kChunk) + kChunk / 8 + 65536);
    std::size_t given = 0;
    for (;;) {
        if (z->avail_in == 0 && given < size) {
            const std::size_t n = std::min(kChunk, size - given);
            z->next_in =
                const_cast<std::uint8_t*>(reinterpret_cast<const std::uint8_t*>(data + given));
            z->avail_in = static_cast<std::uint32_t>(n);
            given += n;
            checkInput(onInput, n);
        }
        const bool all = given == size;
        z->end_of_stream = finish && all ? 1 : 0;
        z->flush = !finish && all ? SYNC_FLUSH : NO_FLUSH;
        if (produced + kChunk > scratch->outSize)
            reserve(scratch->outSize * 2 + kChunk);
        z->next_out = scratch->out.get() + produced;
        z->avail_out = static_cast<std::uint32_t>(
            std::min<std::size_t>(scratch->outSize - produced, 1u << 30));
        const std::uint32_t room = z->avail_out;
        if (isal_deflate(z) != COMP_OK)
            throw Error::corrupt("", "deflate failed");
        produced += room - z->avail_out;
        // Done: all input given and taken, and flushed (ISA-L: the state is
        // back to a new block's header) or the stream ended.
        if (all && z->avail_in == 0 &&
            (finish ? z->internal_state.state == ZSTATE_END
                    : z->internal_state.state == ZSTATE_NEW_HDR))
            break;
    }
    std::string out(reinterpret_cast<const char*>(scratch->out.get()), produced);
    if (scratch->outSize > (16u << 20)) {  // one large payload: not kept
        scratch->out.reset();
        scratch->outSize = 0;
    }
    return out;
}

bool isalLevel(int level) {
    return level >= 1 && level <= 3;
}

// libdeflate's level for zip level `level` (-1: the default), 0 when zlib or ISA-L takes it.
int libdeflateLevelOf(int level) {
    return libdeflateLevelFor(level < 0 ? kDefaultDeflateLevel : level);
}

// Deflates `data` with libdeflate at zip level `level` (4 to 7), unprimed:
// libdeflate takes no dictionary. Unless `finish`, the stream is left open
// on a byte boundary, as Z_SYNC_FLUSH leaves it: the final block's flag is
// cleared and an empty stored block follows it.
std::string deflateLibdeflate(const std::byte* data, std::size_t size, bool finish, int level) {
    struct Free {
        void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
    };
    thread_local std::unique_ptr<libdeflate_compressor, Free> compressors[13];
    const int ours = libdeflateLevelOf(level);
    auto& compressor = compressors[ours];
    if (!compressor) {
        compressor.reset(libdeflate_alloc_compressor(ours));
        if (!compressor)
            throw std::bad_alloc();
    }
    std::string out(libdeflate_deflate_compress_bound(compressor.get(), size) + 5, '\0');
    const std::size_t n =
        libdeflate_deflate_compress(compressor.get(), data, size, out.data(), out.size());
    if (n == 0)
        throw Error::corrupt("", "deflate failed");
    out.resize(n);
    if (finish)
        return out;
    // The walk answers for the streams libdeflate makes (tst_deflate_blocks)
    // in about half the time of zlib's inflate; inflating decides where it declines.
    const auto* stream = reinterpret_cast<const std::byte*>(out.data());
    const std::optional<StreamEnd> walked = walkToStreamEnd(stream, n, size);
    const StreamEnd e = walked ? *walked : inflateToStreamEnd(stream, n);
    auto byteOf = [&out](std::uint64_t at) -> std::uint8_t& {
        return reinterpret_cast<std::uint8_t&>(out[std::size_t(at / 8)]);
    };
    if ((e.end + 7) / 8 != n || !(byteOf(e.finalBlock) >> (e.finalBlock % 8) & 1))
        throw Error::corrupt("", "deflate made a stream that cannot be continued");
    byteOf(e.finalBlock) &= std::uint8_t(~(1u << (e.finalBlock % 8)));
    if (e.end % 8)  // the padding after the end: zero, as the stored block's header
        byteOf(e.end) &= std::uint8_t((1u << (e.end % 8)) - 1);
    out.resize(std::size_t((e.end + 3 + 7) / 8), '\0');  // its 3 header bits, then a byte boundary
    out.append("\0\0\xff\xff", 4);                       // LEN 0, NLEN
    return out;
}

std::string deflateRaw(const std::byte* data, std::size_t size, int level,
                       const std::function<bool(std::uint64_t)>& onInput) {
    if (isalLevel(level))
        return deflateIsal(data, size, nullptr, 0, true, level, onInput);
    if (libdeflateLevelOf(level) != 0) {  // in chunks, joined, to report progress as it goes
        std::string out;
        std::size_t done = 0;
        do {
            const std::size_t n = std::min(kChunk, size - done);
            out += deflateLibdeflate(data + done, n, done + n == size, level);
            done += n;
            checkInput(onInput, n);
        } while (done < size);
        return out;
    }
    z_stream z{};
    if (deflateInit2(&z, level < 0 ? Z_DEFAULT_COMPRESSION : std::min(level, 9), Z_DEFLATED,
                     -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        throw Error::corrupt("", "cannot start deflate");
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
        throw Error::corrupt("", "deflate failed");
    return out;
}

std::string bzip2(const std::byte* data, std::size_t size, int level,
                  const std::function<bool(std::uint64_t)>& onInput) {
    bz_stream bz{};
    if (BZ2_bzCompressInit(&bz, level < 1 ? 9 : std::min(level, 9), 0, 0) != BZ_OK)
        throw Error::corrupt("", "cannot start bzip2");
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
        throw Error::corrupt("", "bzip2 failed");
    out.resize(produced);
    return out;
}

std::string lzmaZip(const std::byte* data, std::size_t size, int level,
                    const std::function<bool(std::uint64_t)>& onInput) {
    lzma_options_lzma opt;
    if (lzma_lzma_preset(
            &opt, level < 0 ? LZMA_PRESET_DEFAULT : static_cast<std::uint32_t>(std::min(level, 9))))
        throw Error::corrupt("", "bad LZMA level");
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
        throw Error::corrupt("", "cannot start LZMA");
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
        throw Error::corrupt("", "LZMA compression failed");
    out.resize(produced);
    return out;
}

}  // namespace

std::uint32_t crc32(std::uint32_t crc, const std::byte* data, std::size_t size) {
    return crc32_gzip_refl(crc, reinterpret_cast<const unsigned char*>(data), size);
}

std::uint32_t crc32Combine(std::uint32_t crcA, std::uint32_t crcB, std::uint64_t lengthB) {
    return static_cast<std::uint32_t>(crc32_combine64(crcA, crcB, static_cast<z_off64_t>(lengthB)));
}

std::string deflateChunk(const std::byte* data, std::size_t size, const std::byte* dictionary,
                         std::size_t dictionarySize, bool last, int level) {
    if (isalLevel(level))
        return deflateIsal(data, size, dictionary, dictionarySize, last, level, {});
    if (libdeflateLevelOf(level) != 0)
        return deflateLibdeflate(data, size, last, level);
    z_stream z{};
    if (deflateInit2(&z, level < 0 ? Z_DEFAULT_COMPRESSION : std::min(level, 9), Z_DEFLATED,
                     -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        throw Error::corrupt("", "cannot start deflate");
    AtExit end{[&z] { deflateEnd(&z); }};
    if (dictionarySize && deflateSetDictionary(&z, reinterpret_cast<const Bytef*>(dictionary),
                                               static_cast<uInt>(std::min<std::size_t>(
                                                   dictionarySize, 32768))) != Z_OK)
        throw Error::corrupt("", "cannot prime deflate");
    std::string out(deflateBound(&z, static_cast<uLong>(size)) + 16, '\0');
    z.next_in = const_cast<Bytef*>(reinterpret_cast<const Bytef*>(data));
    z.avail_in = static_cast<uInt>(size);
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    // Z_SYNC_FLUSH ends on a byte boundary without ending the stream.
    const int rc = deflate(&z, last ? Z_FINISH : Z_SYNC_FLUSH);
    if (last ? rc != Z_STREAM_END : (rc != Z_OK || z.avail_in != 0))
        throw Error::corrupt("", "deflate failed");
    out.resize(z.total_out);
    return out;
}

struct InflatePoint {
    inflate_state state;     // its stream pointers are set again on resuming
    std::uint64_t consumed;  // input bytes taken (those in its bit buffer included)
};

std::uint64_t RecordedPoints::memoryBytes() const {
    return points.size() * sizeof(InflatePoint) + crcs.size() * sizeof(std::uint32_t);
}

namespace {

// Raw deflate inflated by ISA-L: about three times zlib's speed (bench_compare).
class IsalInflateDecompressor final : public Decompressor {
public:
    IsalInflateDecompressor(const std::byte* in, std::size_t size, std::string where)
        : state_(std::make_unique<inflate_state>()), where_(std::move(where)) {
        isal_inflate_init(state_.get());
        state_->crc_flag = ISAL_DEFLATE;
        base_ = in_ = in;
        left_ = size;
    }
    // Decodes on from `point` of the stream `in` (all of it).
    IsalInflateDecompressor(const InflatePoint& point, const std::byte* in, std::size_t size,
                            std::string where)
        : state_(std::make_unique<inflate_state>(point.state)), where_(std::move(where)) {
        if (point.consumed > size)
            throw Error::corrupt(where_, "an access point past the end of the compressed data");
        state_->next_in = nullptr;
        state_->avail_in = 0;
        base_ = in;
        in_ = in + point.consumed;
        left_ = size - point.consumed;
    }

    void recordPoints(std::uint64_t spacing, std::uint64_t size,
                      std::function<void(std::shared_ptr<const RecordedPoints>)> done) override {
        if (out_ != 0 || spacing == 0 || size == 0)
            return;  // only from the start
        recording_ = std::make_unique<Recording>();
        recording_->points.spacing = spacing;
        recording_->points.size = size;
        recording_->points.points.push_back(nullptr);  // the start
        recording_->done = std::move(done);
    }

    std::size_t read(std::byte* out, std::size_t n) override {
        std::size_t done = 0;
        while (done < n && state_->block_state != ISAL_BLOCK_FINISH) {
            if (state_->avail_in == 0 && left_) {
                const std::size_t take = std::min<std::size_t>(left_, 1u << 30);
                state_->next_in =
                    const_cast<std::uint8_t*>(reinterpret_cast<const std::uint8_t*>(in_));
                state_->avail_in = static_cast<std::uint32_t>(take);
                in_ += take;
                left_ -= take;
            }
            std::size_t room = std::min<std::size_t>(n - done, 1u << 30);
            if (recording_)  // stop at the next point
                room = static_cast<std::size_t>(
                    std::min<std::uint64_t>(room, recording_->next(out_) - out_));
            state_->next_out = reinterpret_cast<std::uint8_t*>(out + done);
            state_->avail_out = static_cast<std::uint32_t>(room);
            const int rc = isal_inflate(state_.get());
            const std::size_t produced = room - state_->avail_out;
            if (recording_ && rc >= 0)
                record(out + done, produced);
            done += produced;
            out_ += produced;
            if (rc < 0)
                throw Error::corrupt(
                    where_, "corrupt deflate data (" +
                                std::string(rc == ISAL_INVALID_BLOCK    ? "invalid block"
                                            : rc == ISAL_INVALID_SYMBOL ? "invalid symbol"
                                                                        : "invalid distance") +
                                ")");
            if (state_->block_state != ISAL_BLOCK_FINISH && produced == 0 &&
                state_->avail_in == 0 && left_ == 0)
                throw Error::truncated(where_, "compressed data ends early (truncated entry)");
        }
        return done;
    }

private:
    struct Recording {
        RecordedPoints points;
        std::uint32_t crc = 0;  // of the segment so far
        std::function<void(std::shared_ptr<const RecordedPoints>)> done;
        // The output offset of the next point (or the end).
        std::uint64_t next(std::uint64_t at) const {
            return std::min(points.size, (at / points.spacing + 1) * points.spacing);
        }
    };

    // Output [out_, out_ + n) just decoded, at `data`.
    void record(const std::byte* data, std::size_t n) {
        Recording& r = *recording_;
        const std::uint64_t end = out_ + n;
        r.crc = crc32(r.crc, data, n);
        if (end != r.next(out_))
            return;
        r.points.crcs.push_back(r.crc);
        r.crc = 0;
        if (end == r.points.size) {
            auto done = std::move(r.done);
            auto points = std::make_shared<const RecordedPoints>(std::move(r.points));
            recording_.reset();
            done(std::move(points));
            return;
        }
        const std::uint64_t consumed = static_cast<std::uint64_t>(in_ - base_) - state_->avail_in;
        r.points.points.push_back(
            std::make_shared<const InflatePoint>(InflatePoint{*state_, consumed}));
    }

    std::unique_ptr<inflate_state> state_;
    const std::byte* base_ = nullptr;
    const std::byte* in_ = nullptr;
    std::size_t left_ = 0;
    std::uint64_t out_ = 0;  // bytes decoded so far
    std::unique_ptr<Recording> recording_;
    std::string where_;
};

// Raw deflate by zlib: streams ISA-L rejects, and TENSORDICT_INFLATE=zlib.
class ZlibInflateDecompressor final : public Decompressor {
public:
    ZlibInflateDecompressor(const std::byte* in, std::size_t size, std::string where)
        : where_(std::move(where)) {
        if (inflateInit2(&z_, -MAX_WBITS) != Z_OK)
            throw Error::corrupt(where_, "cannot start inflate");
        in_ = in;
        left_ = size;
    }
    ~ZlibInflateDecompressor() override { inflateEnd(&z_); }

    std::size_t read(std::byte* out, std::size_t n) override {
        std::size_t done = 0;
        while (done < n && !ended_) {
            if (z_.avail_in == 0 && left_) {
                const std::size_t take = std::min<std::size_t>(left_, 1u << 30);
                z_.next_in = const_cast<Bytef*>(reinterpret_cast<const Bytef*>(in_));
                z_.avail_in = static_cast<uInt>(take);
                in_ += take;
                left_ -= take;
            }
            z_.next_out = reinterpret_cast<Bytef*>(out + done);
            z_.avail_out = static_cast<uInt>(std::min<std::size_t>(n - done, 1u << 30));
            const uInt before = z_.avail_out;
            const int rc = inflate(&z_, Z_NO_FLUSH);
            done += before - z_.avail_out;
            if (rc == Z_STREAM_END)
                ended_ = true;
            else if (rc == Z_BUF_ERROR && z_.avail_in == 0 && left_ == 0)
                throw Error::truncated(where_, "compressed data ends early (truncated entry)");
            else if (rc != Z_OK && rc != Z_BUF_ERROR)
                throw Error::corrupt(where_, std::string("corrupt deflate data: ") +
                                                 (z_.msg ? z_.msg : "inflate error"));
        }
        return done;
    }

private:
    z_stream z_{};
    const std::byte* in_ = nullptr;
    std::size_t left_ = 0;
    bool ended_ = false;
    std::string where_;
};

// ISA-L first; a stream it rejects is inflated again by zlib, which either
// reads it (the bytes already delivered skipped) or gives its own reason.
class InflateDecompressor final : public Decompressor {
public:
    InflateDecompressor(const std::byte* in, std::size_t size, std::string where)
        : in_(in), size_(size), where_(std::move(where)) {
        static const bool zlibOnly = [] {
            const char* choice = std::getenv("TENSORDICT_INFLATE");
            return choice && std::string_view(choice) == "zlib";
        }();
        if (zlibOnly)
            zlib_ = std::make_unique<ZlibInflateDecompressor>(in_, size_, where_);
        else
            isal_ = std::make_unique<IsalInflateDecompressor>(in_, size_, where_);
    }

    void recordPoints(std::uint64_t spacing, std::uint64_t size,
                      std::function<void(std::shared_ptr<const RecordedPoints>)> done) override {
        if (isal_)
            isal_->recordPoints(spacing, size, std::move(done));
    }

    std::size_t read(std::byte* out, std::size_t n) override {
        if (isal_) {
            try {
                const std::size_t got = isal_->read(out, n);
                delivered_ += got;
                return got;
            } catch (const Error&) {
                isal_.reset();
                zlib_ = std::make_unique<ZlibInflateDecompressor>(in_, size_, where_);
                std::unique_ptr<std::byte[]> skip(new std::byte[1u << 20]);
                for (std::uint64_t left = delivered_; left > 0;) {
                    const std::size_t want = std::min<std::uint64_t>(left, 1u << 20);
                    if (zlib_->read(skip.get(), want) != want)
                        throw Error::truncated(where_,
                                               "compressed data ends early (truncated entry)");
                    left -= want;
                }
            }
        }
        const std::size_t got = zlib_->read(out, n);
        delivered_ += got;
        return got;
    }

private:
    const std::byte* in_;
    std::size_t size_;
    std::string where_;
    std::unique_ptr<IsalInflateDecompressor> isal_;
    std::unique_ptr<ZlibInflateDecompressor> zlib_;
    std::uint64_t delivered_ = 0;
};

class Bzip2Decompressor final : public Decompressor {
public:
    Bzip2Decompressor(const std::byte* in, std::size_t size, std::string where)
        : in_(in), left_(size), where_(std::move(where)) {
        if (BZ2_bzDecompressInit(&bz_, 0, 0) != BZ_OK)
            throw Error::corrupt(where_, "cannot start bzip2");
    }
    ~Bzip2Decompressor() override { BZ2_bzDecompressEnd(&bz_); }

    std::size_t read(std::byte* out, std::size_t n) override {
        std::size_t done = 0;
        while (done < n && !ended_) {
            if (bz_.avail_in == 0 && left_) {
                const std::size_t take = std::min<std::size_t>(left_, 1u << 30);
                bz_.next_in = const_cast<char*>(reinterpret_cast<const char*>(in_));
                bz_.avail_in = static_cast<unsigned>(take);
                in_ += take;
                left_ -= take;
            }
            bz_.next_out = reinterpret_cast<char*>(out + done);
            bz_.avail_out = static_cast<unsigned>(std::min<std::size_t>(n - done, 1u << 30));
            const unsigned before = bz_.avail_out;
            const int rc = BZ2_bzDecompress(&bz_);
            done += before - bz_.avail_out;
            if (rc == BZ_STREAM_END)
                ended_ = true;
            else if (rc != BZ_OK)
                throw Error::corrupt(where_,
                                     "corrupt bzip2 data (bzip2 error " + std::to_string(rc) + ")");
            else if (before == bz_.avail_out && bz_.avail_in == 0 && left_ == 0)
                throw Error::truncated(where_, "compressed data ends early (truncated entry)");
        }
        return done;
    }

private:
    bz_stream bz_{};
    const std::byte* in_;
    std::size_t left_;
    bool ended_ = false;
    std::string where_;
};

// APPNOTE 5.8.8: 2 version bytes, a 2-byte properties size, the LZMA1
// properties, then the raw LZMA1 stream (with or without an end marker).
class LzmaDecompressor final : public Decompressor {
public:
    LzmaDecompressor(const std::byte* in, std::size_t size, std::string where)
        : where_(std::move(where)) {
        const auto* p = reinterpret_cast<const std::uint8_t*>(in);
        if (size < 4)
            throw Error::corrupt(where_, "LZMA entry too short");
        const std::size_t propsSize = p[2] | p[3] << 8;
        if (size < 4 + propsSize)
            throw Error::truncated(where_, "LZMA entry header truncated");
        lzma_filter filters[2] = {{LZMA_FILTER_LZMA1, nullptr}, {LZMA_VLI_UNKNOWN, nullptr}};
        if (lzma_properties_decode(&filters[0], nullptr, p + 4, propsSize) != LZMA_OK)
            throw Error::corrupt(where_, "invalid LZMA properties");
        // The properties choose the dictionary size, up to 4 GiB: never let a
        // header make the decoder allocate that much. LZMA's own presets use
        // at most 64 MiB.
        constexpr std::uint64_t kMaxDecoderMemory = 512ull << 20;
        const std::uint64_t memory = lzma_raw_decoder_memusage(filters);
        if (memory == UINT64_MAX || memory > kMaxDecoderMemory) {
            std::free(filters[0].options);
            throw Error::corrupt(where_, "LZMA dictionary too large (the decoder would need " +
                                             std::to_string(memory >> 20) + " MiB; at most " +
                                             std::to_string(kMaxDecoderMemory >> 20) +
                                             " MiB is allowed)");
        }
        const lzma_ret init = lzma_raw_decoder(&strm_, filters);
        std::free(filters[0].options);
        if (init != LZMA_OK)
            throw Error::corrupt(where_, "cannot start the LZMA decoder");
        strm_.next_in = p + 4 + propsSize;
        strm_.avail_in = size - 4 - propsSize;
    }
    ~LzmaDecompressor() override { lzma_end(&strm_); }

    std::size_t read(std::byte* out, std::size_t n) override {
        std::size_t done = 0;
        while (done < n && !ended_) {
            strm_.next_out = reinterpret_cast<std::uint8_t*>(out + done);
            strm_.avail_out = n - done;
            const std::size_t before = strm_.avail_in + strm_.avail_out;
            const lzma_ret rc = lzma_code(&strm_, LZMA_RUN);
            done = n - strm_.avail_out;
            if (rc == LZMA_STREAM_END)
                ended_ = true;
            else if (rc != LZMA_OK)
                throw Error::corrupt(where_, "corrupt LZMA data (" + std::to_string(total_ + done) +
                                                 " bytes decoded)");
            else if (strm_.avail_in + strm_.avail_out == before)
                ended_ = true;  // input used up: a stream without an end marker
        }
        total_ += done;
        return done;
    }

private:
    lzma_stream strm_ = LZMA_STREAM_INIT;
    bool ended_ = false;
    std::uint64_t total_ = 0;
    std::string where_;
};

}  // namespace

std::unique_ptr<Decompressor> Decompressor::create(int method, const std::byte* compressed,
                                                   std::size_t size, const std::string& where) {
    switch (method) {
        case 8:
            return std::make_unique<InflateDecompressor>(compressed, size, where);
        case 12:
            return std::make_unique<Bzip2Decompressor>(compressed, size, where);
        case 14:
            return std::make_unique<LzmaDecompressor>(compressed, size, where);
        default:
            throw Error::unsupported(where,
                                     "unsupported compression method " + std::to_string(method));
    }
}

std::unique_ptr<Decompressor> Decompressor::resume(const InflatePoint& point,
                                                   const std::byte* compressed, std::size_t size,
                                                   const std::string& where) {
    return std::make_unique<IsalInflateDecompressor>(point, compressed, size, where);
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
            throw Error::unsupported("", "no compressor for zip method " + std::to_string(method));
    }
}

}  // namespace tensordict
