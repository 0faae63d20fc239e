#pragma once

#include <QImage>
#include <QString>
#include <QVector>
#include <atomic>

#include "tensor_slice.h"
#include "tensordict/node.h"

// BlueWhiteRed is diverging: white in the middle, for differences around 0.
enum class Colormap { Gray, Viridis, Magma, Inferno, Coolwarm, BlueWhiteRed };
enum class ImageScale { MinMax, Percentile };  // percentile: 1st to 99th

QStringList colormapNames();
// 256 colours of a colormap, low to high.
QVector<QRgb> colormapTable(Colormap map);

// What to draw: the slice's rows and columns are the image's height and
// width; channelDim (-1: none) holds 3 or 4 colour channels.
struct ImageRequest {
    tensordict::DType dtype = tensordict::DType::Float32;
    tensordict::LeafBytes bytes;
    TensorSlice slice;
    int channelDim = -1;
    Colormap colormap = Colormap::Gray;
    ImageScale scale = ImageScale::MinMax;
    int maxSide = 4096;  // larger slices are drawn with a stride
};

struct ImageResult {
    QImage image;
    double low = 0, high = 0;    // the values mapped to the ends of the colormap
    int stride = 1;              // image pixel = `stride` slice rows/columns
    bool sourceChanged = false;  // the mapped file lost pages while it was read
};

// Renders on the calling thread (call it from a worker); checks `cancel`.
ImageResult renderImage(const ImageRequest& request, const std::atomic<bool>* cancel = nullptr);

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
                                  const std::atomic<bool>* cancel = nullptr);
