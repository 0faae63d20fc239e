// libFuzzer target: the zip container of .tdz archives (zip_layout.h: end
// records, ZIP64, central directory, local headers) and the streaming
// decompressors of its entries (codec.h: deflate, bzip2, LZMA).
//
// The input is the whole archive file. Reads past its end throw Error, as a
// short file does. Every entry whose payload offset resolves is checked to
// lie inside the input and then decompressed (methods 8, 12, 14) into a fixed
// buffer, at most kMaxOutput bytes per input so that zip bombs stay fast;
// stored payloads get their CRC-32 computed. Corrupt input must throw
// tensordict::Error, nothing else.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "codec/codec.h"
#include "containers/zip_layout.h"
#include "tensordict/error.h"

namespace {

namespace zip = tensordict::zip;

constexpr std::size_t kBufferSize = 64u << 10;
constexpr std::size_t kMaxOutput = 16u << 20;
const std::string kWhere = "fuzz.tdz";

[[noreturn]] void fail(const char* what, const zip::CentralEntry& entry, std::uint64_t payload,
                       std::size_t size) {
    std::fprintf(stderr,
                 "fuzz_zip: %s: entry of %zu name bytes, local header at %llu, payload at "
                 "%llu, %llu compressed bytes, archive of %zu bytes\n",
                 what, entry.name.size(), static_cast<unsigned long long>(entry.localHeaderOffset),
                 static_cast<unsigned long long>(payload),
                 static_cast<unsigned long long>(entry.compressedSize), size);
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const zip::ReadAt read = [data, size](std::uint64_t offset, void* out, std::size_t n) {
        if (offset > size || n > size - offset)
            throw tensordict::Error::truncated(kWhere,
                                               "the archive ends before the data it describes");
        if (n)
            std::memcpy(out, data + offset, n);
    };

    std::vector<zip::CentralEntry> entries;
    try {
        entries = zip::readCentralDirectory(read, size, kWhere);
    } catch (const tensordict::Error&) {
        return 0;
    }

    static std::vector<std::byte> buffer(kBufferSize);
    std::size_t budget = kMaxOutput;
    for (const zip::CentralEntry& entry : entries) {
        if (entry.localHeaderOffset > size)
            fail("readCentralDirectory gave a local header offset past the end", entry, 0, size);
        std::uint64_t payload = 0;
        try {
            payload = zip::readPayloadOffset(read, size, entry, kWhere + ":" + entry.name);
        } catch (const tensordict::Error&) {
            continue;
        }
        if (payload > size || entry.compressedSize > size - payload)
            fail("readPayloadOffset gave a payload that does not fit in the archive", entry,
                 payload, size);
        const auto* compressed = reinterpret_cast<const std::byte*>(data) + payload;
        const auto compressedSize = static_cast<std::size_t>(entry.compressedSize);
        if (entry.method == zip::kStored) {
            (void)tensordict::crc32Of(compressed, compressedSize);
            continue;
        }
        if (entry.method != zip::kDeflate && entry.method != zip::kBzip2 &&
            entry.method != zip::kLzma)
            continue;
        try {
            auto decoder =
                tensordict::Decompressor::create(entry.method, compressed, compressedSize, kWhere);
            std::uint32_t crc = 0;
            while (budget > 0) {
                const std::size_t want = std::min(budget, buffer.size());
                const std::size_t got = decoder->read(buffer.data(), want);
                if (got > want)
                    fail("Decompressor::read returned more than asked", entry, payload, size);
                crc = tensordict::crc32(crc, buffer.data(), got);
                budget -= got;
                if (got < want)
                    break;  // the end of the stream
            }
            (void)crc;
        } catch (const tensordict::Error&) {
        }
    }
    return 0;
}
