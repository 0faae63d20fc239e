#include "image_render.h"

#include <algorithm>
#include <cmath>

#include "tensordict/element.h"
#include "tensordict/guarded_read.h"

namespace {

struct Anchor {
    double at;
    QRgb color;
};

// Matplotlib's colormaps by ten evenly spaced samples, linearly interpolated.
QVector<QRgb> interpolate(const std::vector<QRgb>& samples) {
    QVector<QRgb> table(256);
    for (int i = 0; i < 256; ++i) {
        const double t = i / 255.0 * double(samples.size() - 1);
        const std::size_t k =
            std::min<std::size_t>(static_cast<std::size_t>(t), samples.size() - 2);
        const double f = t - double(k);
        const QRgb a = samples[k], b = samples[k + 1];
        auto mix = [f](int x, int y) { return static_cast<int>(std::lround(x + (y - x) * f)); };
        table[i] = qRgb(mix(qRed(a), qRed(b)), mix(qGreen(a), qGreen(b)), mix(qBlue(a), qBlue(b)));
    }
    return table;
}

}  // namespace

QStringList colormapNames() {
    return {"gray", "viridis", "magma", "inferno", "coolwarm"};
}

QVector<QRgb> colormapTable(Colormap map) {
    switch (map) {
        case Colormap::Viridis:
            return interpolate({0x440154, 0x482878, 0x3e4989, 0x31688e, 0x26828e, 0x1f9e89,
                                0x35b779, 0x6ece58, 0xb5de2b, 0xfde725});
        case Colormap::Magma:
            return interpolate({0x000004, 0x180f3d, 0x440f76, 0x721f81, 0x9e2f7f, 0xcd4071,
                                0xf1605d, 0xfd9668, 0xfeca8d, 0xfcfdbf});
        case Colormap::Inferno:
            return interpolate({0x000004, 0x1b0c41, 0x4a0c6b, 0x781c6d, 0xa52c60, 0xcf4446,
                                0xed6925, 0xfb9b06, 0xf7d13d, 0xfcffa4});
        case Colormap::Coolwarm:
            return interpolate({0x3b4cc0, 0x6282ea, 0x8db0fe, 0xb8d0f9, 0xdddcdc, 0xf5c4ad,
                                0xf49a7b, 0xde604d, 0xb40426, 0xb40426});
        case Colormap::Gray:
        default: {
            QVector<QRgb> table(256);
            for (int i = 0; i < 256; ++i)
                table[i] = qRgb(i, i, i);
            return table;
        }
    }
}

ImageResult renderImage(const ImageRequest& r, const std::atomic<bool>* cancel) {
    ImageResult out;
    if (!r.bytes.data)
        return out;
    const std::int64_t rows = r.slice.rows(), cols = r.slice.cols();
    out.stride = static_cast<int>(
        std::max<std::int64_t>(1, (std::max(rows, cols) + r.maxSide - 1) / r.maxSide));
    const int h = static_cast<int>((rows + out.stride - 1) / out.stride);
    const int w = static_cast<int>((cols + out.stride - 1) / out.stride);
    const std::size_t item = tensordict::itemSize(r.dtype);
    const int channels =
        r.channelDim >= 0 ? static_cast<int>(r.slice.shape[static_cast<std::size_t>(r.channelDim)])
                          : 1;

    // Values of the drawn pixels, channel-major.
    std::vector<double> values(static_cast<std::size_t>(h) * w * channels);
    TensorSlice s = r.slice;
    bool cancelled = false;
    // Reads the mapping in place, guarded: a file truncated meanwhile ends
    // the render with sourceChanged instead of SIGBUS.
    const bool read = tensordict::tryGuardedRun([&] {
        for (int c = 0; c < channels; ++c) {
            if (r.channelDim >= 0)
                s.index[static_cast<std::size_t>(r.channelDim)] = c;
            for (int y = 0; y < h; ++y) {
                if (cancel && *cancel) {
                    cancelled = true;
                    return;
                }
                for (int x = 0; x < w; ++x) {
                    const std::int64_t flat =
                        s.elementIndex(std::int64_t(y) * out.stride, std::int64_t(x) * out.stride);
                    const std::byte* p = r.bytes.data.get() + static_cast<std::size_t>(flat) * item;
                    values[(static_cast<std::size_t>(c) * h + y) * w + x] =
                        tensordict::elementAsDouble(p, r.dtype);
                }
            }
        }
    });
    if (!read) {
        ImageResult lost;
        lost.sourceChanged = true;
        return lost;
    }
    if (cancelled)
        return {};
    std::vector<double> finite;
    finite.reserve(values.size());
    for (double v : values)
        if (std::isfinite(v))
            finite.push_back(v);
    if (!finite.empty()) {
        if (r.scale == ImageScale::Percentile) {
            auto lo =
                finite.begin() + static_cast<std::ptrdiff_t>(0.01 * double(finite.size() - 1));
            auto hi =
                finite.begin() + static_cast<std::ptrdiff_t>(0.99 * double(finite.size() - 1));
            std::nth_element(finite.begin(), lo, finite.end());
            out.low = *lo;
            std::nth_element(finite.begin(), hi, finite.end());
            out.high = *hi;
        } else {
            const auto [mn, mx] = std::minmax_element(finite.begin(), finite.end());
            out.low = *mn, out.high = *mx;
        }
    }
    // Colour images of bytes are shown as they are; others are scaled.
    const bool rawBytes = channels >= 3 && r.dtype == tensordict::DType::UInt8;
    const bool unitRange =
        channels >= 3 && out.low >= 0 && out.high <= 1 && r.scale == ImageScale::MinMax;
    const double low = rawBytes ? 0 : unitRange ? 0 : out.low;
    const double high = rawBytes ? 255 : unitRange ? 1 : out.high;
    const double span = high > low ? high - low : 1;
    auto level = [&](double v) {
        if (!std::isfinite(v))
            return 0;
        return static_cast<int>(std::clamp((v - low) / span * 255.0, 0.0, 255.0) + 0.5);
    };
    const QVector<QRgb> table = colormapTable(r.colormap);
    QImage image(w, h, channels == 4 ? QImage::Format_ARGB32 : QImage::Format_RGB32);
    for (int y = 0; y < h; ++y) {
        auto* line = reinterpret_cast<QRgb*>(image.scanLine(y));
        for (int x = 0; x < w; ++x) {
            auto at = [&](int c) { return values[(static_cast<std::size_t>(c) * h + y) * w + x]; };
            if (channels >= 3) {
                line[x] = qRgba(level(at(0)), level(at(1)), level(at(2)),
                                channels == 4 ? level(at(3)) : 255);
            } else {
                const double v = at(0);
                line[x] = std::isnan(v) ? qRgb(255, 0, 255) : table[level(v)];  // NaN in magenta
            }
        }
    }
    out.image = image;
    if (rawBytes)
        out.low = 0, out.high = 255;
    return out;
}
