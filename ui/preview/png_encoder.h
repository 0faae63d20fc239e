#pragma once

#include <QByteArray>
#include <QImage>

namespace png_encoder {

// A PNG file of `image` (8-bit grayscale, RGB, or RGBA when the image has
// an alpha channel), deflated in memory with libdeflate at `level` (1 to
// 12) and each row filtered as libpng's default chooses (the filter whose
// bytes sum smallest as signed values). Lossless; the whole file is built
// in memory, so it is meant for images of a window's size. Decoded by any
// PNG reader; tst_preview checks Qt's libpng reads every pixel back.
QByteArray encode(const QImage& image, int level);

}  // namespace png_encoder
