#include "png_encoder.h"

#include <libdeflate.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <memory>
#include <vector>

namespace png_encoder {
namespace {

// PNG's row filters (the PNG specification, 9.2).
enum Filter : std::uint8_t { None, Sub, Up, Average, Paeth };

std::uint8_t paeth(int a, int b, int c) {
    const int p = a + b - c;
    const int pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
    return static_cast<std::uint8_t>(pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
}

// `row` filtered by `filter` into `out`; `above` is the row before (zeros
// for the first), `bpp` the bytes of a pixel. One loop a filter, so that
// the compiler vectorizes the simple ones.
void filterRow(Filter filter, const std::uint8_t* row, const std::uint8_t* above, int bytes,
               int bpp, std::uint8_t* out) {
    const int head = std::min(bpp, bytes);  // the first pixel has no left neighbour
    switch (filter) {
        case None:
            std::copy(row, row + bytes, out);
            break;
        case Sub:
            std::copy(row, row + head, out);
            for (int i = head; i < bytes; ++i)
                out[i] = static_cast<std::uint8_t>(row[i] - row[i - bpp]);
            break;
        case Up:
            for (int i = 0; i < bytes; ++i)
                out[i] = static_cast<std::uint8_t>(row[i] - above[i]);
            break;
        case Average:
            for (int i = 0; i < head; ++i)
                out[i] = static_cast<std::uint8_t>(row[i] - above[i] / 2);
            for (int i = head; i < bytes; ++i)
                out[i] = static_cast<std::uint8_t>(row[i] - (row[i - bpp] + above[i]) / 2);
            break;
        case Paeth:
            for (int i = 0; i < head; ++i)
                out[i] = static_cast<std::uint8_t>(row[i] - above[i]);
            for (int i = head; i < bytes; ++i)
                out[i] = static_cast<std::uint8_t>(row[i] -
                                                   paeth(row[i - bpp], above[i], above[i - bpp]));
            break;
    }
}

// libpng's heuristic: the filtered bytes, read as signed, whose absolute
// values sum smallest deflate best.
std::uint64_t cost(const std::uint8_t* filtered, int bytes) {
    std::uint64_t sum = 0;
    for (int i = 0; i < bytes; ++i)
        sum += static_cast<std::uint64_t>(std::abs(static_cast<std::int8_t>(filtered[i])));
    return sum;
}

void putBigEndian(char* at, std::uint32_t v) {
    at[0] = char(v >> 24), at[1] = char(v >> 16), at[2] = char(v >> 8), at[3] = char(v);
}

// A chunk of `size` bytes of data whose data is already in place at
// `at` + 8: its length, type and CRC-32 around it. Returns the chunk's end.
char* closeChunk(char* at, const char type[4], std::size_t size) {
    putBigEndian(at, static_cast<std::uint32_t>(size));
    std::copy(type, type + 4, at + 4);
    putBigEndian(at + 8 + size, libdeflate_crc32(0, at + 4, size + 4));
    return at + 12 + size;
}

// The image's rows as PNG samples (gray, RGB or RGBA bytes), one at a time.
class Rows {
public:
    explicit Rows(const QImage& source) {
        if (source.format() == QImage::Format_Grayscale8) {
            image_ = source, colorType_ = 0, bpp_ = 1;
        } else if (source.hasAlphaChannel()) {
            image_ = source.convertToFormat(QImage::Format_ARGB32), colorType_ = 6, bpp_ = 4;
        } else {
            image_ = source.convertToFormat(QImage::Format_RGB32), colorType_ = 2, bpp_ = 3;
        }
        row_.resize(std::size_t(bytes()));
    }
    int colorType() const { return colorType_; }
    int bpp() const { return bpp_; }
    int bytes() const { return image_.width() * bpp_; }  // 0 when the conversion failed
    // Row y's samples, valid until the next call.
    const std::uint8_t* row(int y) {
        if (colorType_ == 0)
            return image_.constScanLine(y);
        const auto* pixels = reinterpret_cast<const QRgb*>(image_.constScanLine(y));
        std::uint8_t* out = row_.data();
        const int width = image_.width();
        for (int x = 0; x < width; ++x) {
            const QRgb p = pixels[x];
            *out++ = static_cast<std::uint8_t>(qRed(p));
            *out++ = static_cast<std::uint8_t>(qGreen(p));
            *out++ = static_cast<std::uint8_t>(qBlue(p));
            if (colorType_ == 6)
                *out++ = static_cast<std::uint8_t>(qAlpha(p));
        }
        return row_.data();
    }

private:
    QImage image_;  // shares the source's pixels when no conversion is needed
    int colorType_, bpp_;
    std::vector<std::uint8_t> row_;
};

}  // namespace

bool keepsEveryBit(QImage::Format format) {
    switch (format) {
        case QImage::Format_Mono:
        case QImage::Format_MonoLSB:
        case QImage::Format_Indexed8:
        case QImage::Format_RGB32:
        case QImage::Format_ARGB32:
        case QImage::Format_ARGB32_Premultiplied:
        case QImage::Format_RGB16:
        case QImage::Format_ARGB8565_Premultiplied:
        case QImage::Format_RGB666:
        case QImage::Format_ARGB6666_Premultiplied:
        case QImage::Format_ARGB8555_Premultiplied:
        case QImage::Format_RGB555:
        case QImage::Format_RGB444:
        case QImage::Format_ARGB4444_Premultiplied:
        case QImage::Format_RGB888:
        case QImage::Format_BGR888:
        case QImage::Format_RGBX8888:
        case QImage::Format_RGBA8888:
        case QImage::Format_RGBA8888_Premultiplied:
        case QImage::Format_Alpha8:
        case QImage::Format_Grayscale8:
            return true;
        default:
            return false;
    }
}

QByteArray encode(const QImage& source, int level) {
    if (source.isNull())
        return {};
    Rows rows(source);
    if (rows.bytes() != source.width() * rows.bpp())  // the conversion failed
        return {};
    const int width = source.width(), height = source.height(), bytes = rows.bytes(),
              bpp = rows.bpp();
    // Fast levels try the filters that cost a pass of subtractions (a
    // window's flat colours need no more); others try all five, as libpng.
    static constexpr Filter kFast[] = {None, Sub, Up};
    static constexpr Filter kAll[] = {None, Sub, Up, Average, Paeth};
    const Filter* const filters = level <= 3 ? kFast : kAll;
    const std::size_t filterCount = level <= 3 ? std::size(kFast) : std::size(kAll);

    // Each row: its filter's byte, then its bytes filtered by it.
    const std::size_t stride = std::size_t(bytes) + 1;
    const std::unique_ptr<std::uint8_t[]> filtered(new std::uint8_t[std::size_t(height) * stride]);
    std::vector<std::uint8_t> above(static_cast<std::size_t>(bytes), 0);
    std::vector<std::uint8_t> trial(static_cast<std::size_t>(bytes));
    for (int y = 0; y < height; ++y) {
        const std::uint8_t* row = rows.row(y);
        std::uint8_t* out = filtered.get() + std::size_t(y) * stride;
        std::uint64_t bestCost = std::numeric_limits<std::uint64_t>::max();
        for (std::size_t k = 0; k < filterCount; ++k) {
            const Filter f = filters[k];
            filterRow(f, row, above.data(), bytes, bpp, trial.data());
            const std::uint64_t c = cost(trial.data(), bytes);
            if (c < bestCost) {
                bestCost = c, out[0] = f;
                std::copy(trial.begin(), trial.end(), out + 1);
            }
        }
        std::copy(row, row + bytes, above.begin());
    }

    const std::unique_ptr<libdeflate_compressor, decltype(&libdeflate_free_compressor)> compressor(
        libdeflate_alloc_compressor(level), &libdeflate_free_compressor);
    if (!compressor)
        return {};
    const std::size_t input = std::size_t(height) * stride;
    const std::size_t bound = libdeflate_zlib_compress_bound(compressor.get(), input);
    constexpr std::size_t kSignature = 8, kHeader = 13, kChunk = 12;
    QByteArray png(qsizetype(kSignature + kHeader + 3 * kChunk + bound), Qt::Uninitialized);
    char* at = png.data();
    at = std::copy_n("\x89PNG\r\n\x1a\n", kSignature, at);
    char* header = at + 8;
    putBigEndian(header, std::uint32_t(width));
    putBigEndian(header + 4, std::uint32_t(height));
    header[8] = 8;  // bits a sample
    header[9] = char(rows.colorType());
    header[10] = header[11] = header[12] = 0;  // deflate, adaptive filters, not interlaced
    at = closeChunk(at, "IHDR", kHeader);
    // One IDAT chunk, deflated in place: a window's image is far below its
    // limit of 2^31 - 1 bytes.
    const std::size_t deflated =
        libdeflate_zlib_compress(compressor.get(), filtered.get(), input, at + 8, bound);
    if (deflated == 0 || deflated > std::size_t(std::numeric_limits<std::int32_t>::max()))
        return {};
    at = closeChunk(at, "IDAT", deflated);
    at = closeChunk(at, "IEND", 0);
    png.truncate(at - png.constData());
    return png;
}

}  // namespace png_encoder
