#pragma once

#include <QImage>
#include <QString>
#include <QVector>
#include <functional>
#include <memory>

#include "tensor_slice.h"
#include "tensordict/cancel.h"
#include "tensordict/node.h"

// BlueWhiteRed is diverging: white in the middle, for differences around 0.
enum class Colormap { Gray, Viridis, Magma, Inferno, Coolwarm, BlueWhiteRed };
enum class ImageScale { MinMax, Percentile };  // percentile: 1st to 99th

QStringList colormapNames();
// 256 colours of a colormap, low to high.
QVector<QRgb> colormapTable(Colormap map);

// How many slice rows and columns one image pixel stands for. Equal in the
// usual picture; a leaf far wider than tall (a Linear layer's weight,
// [10, 7200]) keeps every row (rows 1) while its columns are sampled.
struct Strides {
    int rows = 1, cols = 1;
    bool operator==(const Strides& o) const { return rows == o.rows && cols == o.cols; }
    bool operator!=(const Strides& o) const { return !(*this == o); }
    bool isOne() const { return rows == 1 && cols == 1; }
};

struct ImageRequest;
struct ImageResult;
struct RangeResult;

// Hooks a test gives a view (ImageView::setHooks) to count its work or to
// hold it at a chosen point while the test acts: called on the worker at the
// start and the end of each renderImage() and sliceRange() of that view's
// requests.
struct ImageHooks {
    std::function<void(const ImageRequest&)> renderStarted;
    std::function<void(const ImageResult&)> renderFinished;
    std::function<void(const ImageRequest&)> rangeStarted;
    std::function<void(const RangeResult&)> rangeFinished;
};

// What to draw: the slice's rows and columns are the image's height and
// width; channelDim (-1: none) holds 3 or 4 colour channels.
struct ImageRequest {
    tensordict::DType dtype = tensordict::DType::Float32;
    tensordict::LeafBytes bytes;
    TensorSlice slice;
    int channelDim = -1;
    Colormap colormap = Colormap::Gray;
    ImageScale scale = ImageScale::MinMax;
    int maxSide = 4096;  // longer sides are drawn with a stride (unless `stride` is given)
    // Level of detail: only rows [top, top + height) and columns [left,
    // left + width) of the slice (-1: to the end), every stride.rows-th row
    // and stride.cols-th column of them (0: the smallest stride that fits
    // maxSide on that axis). Image pixel (x, y) is slice element
    // (top + y * stride.rows, left + x * stride.cols).
    std::int64_t top = 0, left = 0, height = -1, width = -1;
    Strides stride{0, 0};
    // The colour range to use, so that every region of a slice looks alike;
    // without it the range comes from the drawn pixels themselves.
    bool fixedRange = false;
    double low = 0, high = 0;
    std::shared_ptr<const ImageHooks> hooks;  // none outside tests
};

struct ImageResult {
    QImage image;
    double low = 0, high = 0;        // the values mapped to the ends of the colormap
    Strides stride;                  // image pixel = stride.rows x stride.cols slice elements
    std::int64_t top = 0, left = 0;  // the slice element of the image's pixel (0, 0)
    bool hasNan = false;             // a drawn pixel is NaN (shown in magenta)
    bool sourceChanged = false;      // the mapped file lost pages while it was read
    bool cancelled = false;          // stopped early: `cancel` was set
};

// Renders on the calling thread (call it from a worker); checks `cancel`.
ImageResult renderImage(const ImageRequest& request,
                        const tensordict::CancelToken* cancel = nullptr);

// The exact colour range of the whole slice (every row, column and channel;
// `request`'s region, stride and fixed range are ignored): min to max, or the
// 1st to the 99th percentile, of the finite values, as renderImage() takes it
// from the pixels it draws. Reads the slice a few times in place, guarded,
// in bounded memory (a radix select, never a copy of the slice); checks
// `cancel` every chunk. low = high = 0 without any finite value.
struct RangeResult {
    double low = 0, high = 0;
    bool sourceChanged = false;
    bool cancelled = false;
};
RangeResult sliceRange(const ImageRequest& request,
                       const tensordict::CancelToken* cancel = nullptr);

// Two leaves of the same shape (the same slice and channels) and their difference.
struct ComparisonImages {
    ImageResult a, b;        // through one colour range, so equal values look equal
    ImageResult difference;  // A - B (per pixel the channel that differs most), blue-white-red
                             // symmetric around 0: white where they agree
    double maxAbsDiff = 0;   // the largest finite |A - B| drawn
    bool sourceChanged = false;
};

// Renders A (`a`), B (`b`: its slice and channels are a's) and A - B on the
// calling thread; checks `cancel`.
ComparisonImages renderComparison(const ImageRequest& a, const ImageRequest& b,
                                  const tensordict::CancelToken* cancel = nullptr);
