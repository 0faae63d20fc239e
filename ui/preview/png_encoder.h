#pragma once

#include <QByteArray>
#include <QImage>

namespace png_encoder {

// Whether encode() keeps every bit of an image of this format: channels of
// 8 bits or fewer (a window's grab, say). Deeper ones need another writer.
bool keepsEveryBit(QImage::Format format);

// A PNG file of `image` (8-bit grayscale, RGB, or RGBA when the image has
// an alpha channel), deflated in memory with libdeflate at `level` (1 to
// 12) and each row filtered as libpng's default chooses (the filter whose
// bytes sum smallest as signed values): the pixels only, no resolution,
// colour profile or text. The whole file is built in memory, in one IDAT
// chunk, so it is meant for images of a window's size. Empty when it
// cannot be made (no image, no memory). Decoded by any PNG reader;
// tst_preview checks Qt's libpng reads every pixel back.
QByteArray encode(const QImage& image, int level);

}  // namespace png_encoder
