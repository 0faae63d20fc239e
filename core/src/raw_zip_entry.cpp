#include "raw_zip_entry.h"

#include <lzma.h>
#include <zip.h>

#include <cstdlib>

#include "tensordict/error.h"

namespace tensordict {

std::string libzipVersion() {
    return zip_libzip_version();
}

std::string readCompressedEntry(const std::string& archivePath, const std::string& name,
                                std::uint64_t compressedSize) {
    const std::string where = archivePath + ":" + name;
    int err = 0;
    zip_t* za = zip_open(archivePath.c_str(), ZIP_RDONLY, &err);
    if (!za)
        throw Error(archivePath, "cannot open archive (libzip error " + std::to_string(err) + ")");
    const zip_int64_t index = zip_name_locate(za, name.c_str(), ZIP_FL_ENC_RAW);
    zip_file_t* zf = index < 0
                         ? nullptr
                         : zip_fopen_index(za, static_cast<zip_uint64_t>(index), ZIP_FL_COMPRESSED);
    if (!zf) {
        std::string why = zip_strerror(za);
        zip_discard(za);
        throw Error(where, "cannot open entry: " + why);
    }
    struct Close {
        zip_t* za;
        zip_file_t* zf;
        ~Close() {
            zip_fclose(zf);
            zip_discard(za);
        }
    } close{za, zf};
    std::string raw(compressedSize, '\0');
    const zip_int64_t n = zip_fread(zf, raw.data(), raw.size());
    if (n != static_cast<zip_int64_t>(raw.size()))
        throw Error(where, "compressed data truncated");
    return raw;
}

// APPNOTE 5.8.8: 2 version bytes, a 2-byte properties size, the LZMA1
// properties, then the raw LZMA1 stream (with or without an end marker).
void decodeZipLzma(const std::string& payload, std::byte* out, std::size_t outSize,
                   const std::string& where) {
    if (payload.size() < 4)
        throw Error(where, "LZMA entry too short");
    const std::size_t propsSize =
        static_cast<unsigned char>(payload[2]) | (static_cast<unsigned char>(payload[3]) << 8);
    if (payload.size() < 4 + propsSize)
        throw Error(where, "LZMA entry header truncated");
    const auto* in = reinterpret_cast<const std::uint8_t*>(payload.data());
    lzma_filter filters[2] = {{LZMA_FILTER_LZMA1, nullptr}, {LZMA_VLI_UNKNOWN, nullptr}};
    if (lzma_properties_decode(&filters[0], nullptr, in + 4, propsSize) != LZMA_OK)
        throw Error(where, "invalid LZMA properties");
    lzma_stream strm = LZMA_STREAM_INIT;
    const lzma_ret init = lzma_raw_decoder(&strm, filters);
    std::free(filters[0].options);
    if (init != LZMA_OK)
        throw Error(where, "cannot start the LZMA decoder");
    strm.next_in = in + 4 + propsSize;
    strm.avail_in = payload.size() - 4 - propsSize;
    strm.next_out = reinterpret_cast<std::uint8_t*>(out);
    strm.avail_out = outSize;
    lzma_ret ret = LZMA_OK;
    while (ret == LZMA_OK && strm.avail_out > 0) {
        const std::size_t before = strm.avail_in + strm.avail_out;
        ret = lzma_code(&strm, LZMA_RUN);
        if (ret == LZMA_OK && strm.avail_in + strm.avail_out == before)
            break;  // no progress
    }
    const std::size_t produced = outSize - strm.avail_out;
    lzma_end(&strm);
    if ((ret != LZMA_OK && ret != LZMA_STREAM_END) || produced != outSize)
        throw Error(where, "corrupt LZMA data (" + std::to_string(produced) + " of " +
                               std::to_string(outSize) + " bytes decoded)");
}

}  // namespace tensordict
