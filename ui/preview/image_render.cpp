#include "image_render.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <mutex>

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
    return {"gray", "viridis", "magma", "inferno", "coolwarm", "bwr"};
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
        case Colormap::BlueWhiteRed: {
            // Linear from white to each end, so that 0 (the middle) is white.
            QVector<QRgb> table(256);
            const QRgb blue = qRgb(0x21, 0x66, 0xac), red = qRgb(0xb2, 0x18, 0x2b);
            for (int i = 0; i < 256; ++i) {
                const double t = (i - 127.5) / 127.5;
                const QRgb end = t < 0 ? blue : red;
                const double f = std::abs(t);
                auto mix = [f](int e) {
                    return static_cast<int>(std::lround(255 + (e - 255) * f));
                };
                table[i] = qRgb(mix(qRed(end)), mix(qGreen(end)), mix(qBlue(end)));
            }
            return table;
        }
        case Colormap::Gray:
        default: {
            QVector<QRgb> table(256);
            for (int i = 0; i < 256; ++i)
                table[i] = qRgb(i, i, i);
            return table;
        }
    }
}

namespace {

// The drawn pixels' values of a slice, channel-major.
struct Samples {
    std::vector<double> values;
    int w = 0, h = 0, channels = 1;
    Strides stride;
    bool lost = false, cancelled = false;
};

// The value of the element at `p`; the common dtypes without the generic switch.
double valueAt(const std::byte* p, tensordict::DType dtype) {
    switch (dtype) {
        case tensordict::DType::Float32:
            return *reinterpret_cast<const float*>(p);
        case tensordict::DType::UInt8:
            return *reinterpret_cast<const std::uint8_t*>(p);
        default:
            return tensordict::elementAsDouble(p, dtype);
    }
}

// Every `stride`th row of a decimated picture is a short run of the file: asks
// the kernel for all of them at once, so that a cold page cache reads them in
// parallel rather than one page fault after another.
void adviseRows(const ImageRequest& r, const TensorSlice::Layout& at, std::int64_t top,
                std::int64_t left, const Samples& s, std::size_t item) {
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    for (int y = 0; y < s.h; ++y) {
        const std::int64_t row = top + std::int64_t(y) * s.stride.rows;
        const auto begin = reinterpret_cast<std::uintptr_t>(
            r.bytes.data.get() + static_cast<std::size_t>(at.at(row, left)) * item);
        const auto end = reinterpret_cast<std::uintptr_t>(
            r.bytes.data.get() +
            static_cast<std::size_t>(at.at(row, left + std::int64_t(s.w - 1) * s.stride.cols) + 1) *
                item);
        const std::uintptr_t first = begin / page * page;
        ::madvise(reinterpret_cast<void*>(first), end - first, MADV_WILLNEED);
    }
}

// The request's region: rows and columns from (top, left).
std::pair<std::int64_t, std::int64_t> regionOf(const ImageRequest& r) {
    const std::int64_t top = std::clamp<std::int64_t>(r.top, 0, r.slice.rows());
    const std::int64_t left = std::clamp<std::int64_t>(r.left, 0, r.slice.cols());
    return {r.height < 0 ? r.slice.rows() - top : std::min(r.height, r.slice.rows() - top),
            r.width < 0 ? r.slice.cols() - left : std::min(r.width, r.slice.cols() - left)};
}

// The strides the picture is drawn at: the request's, or on each axis the
// smallest that fits maxSide.
Strides strideOf(const ImageRequest& r) {
    const auto [rows, cols] = regionOf(r);
    const auto fitting = [&r](std::int64_t n) {
        return static_cast<int>(std::max<std::int64_t>(1, (n + r.maxSide - 1) / r.maxSide));
    };
    return {r.stride.rows > 0 ? r.stride.rows : fitting(rows),
            r.stride.cols > 0 ? r.stride.cols : fitting(cols)};
}

Samples sample(const ImageRequest& r, const tensordict::CancelToken* cancel) {
    Samples s;
    const std::int64_t top = std::clamp<std::int64_t>(r.top, 0, r.slice.rows());
    const std::int64_t left = std::clamp<std::int64_t>(r.left, 0, r.slice.cols());
    const auto [rows, cols] = regionOf(r);
    s.stride = strideOf(r);
    s.h = static_cast<int>((rows + s.stride.rows - 1) / s.stride.rows);
    s.w = static_cast<int>((cols + s.stride.cols - 1) / s.stride.cols);
    const std::size_t item = tensordict::itemSize(r.dtype);
    s.channels = r.channelDim >= 0
                     ? static_cast<int>(r.slice.shape[static_cast<std::size_t>(r.channelDim)])
                     : 1;
    s.values.resize(static_cast<std::size_t>(s.h) * s.w * s.channels);
    TensorSlice slice = r.slice;
    // Reads the mapping in place, guarded: a file truncated meanwhile ends
    // the render with sourceChanged instead of SIGBUS.
    const bool read = tensordict::tryGuardedRun([&] {
        for (int c = 0; c < s.channels; ++c) {
            if (r.channelDim >= 0)
                slice.index[static_cast<std::size_t>(r.channelDim)] = c;
            // The slice as an affine map: two additions per pixel, nothing allocated.
            const TensorSlice::Layout at = slice.layout();
            if (s.stride.rows > 1 && at.colStride == 1)
                adviseRows(r, at, top, left, s, item);
            const std::int64_t step = std::int64_t(s.stride.cols) * at.colStride;
            for (int y = 0; y < s.h; ++y) {
                if (cancel && cancel->isCancelled()) {
                    s.cancelled = true;
                    return;
                }
                std::int64_t flat = at.at(top + std::int64_t(y) * s.stride.rows, left);
                double* out = s.values.data() + (static_cast<std::size_t>(c) * s.h + y) * s.w;
                for (int x = 0; x < s.w; ++x, flat += step)
                    out[x] = valueAt(r.bytes.data.get() + static_cast<std::size_t>(flat) * item,
                                     r.dtype);
            }
        }
    });
    s.lost = !read;
    return s;
}

// The range of the finite values: min to max, or the 1st to the 99th percentile.
void finiteRange(const std::vector<double>& values, ImageScale scale, double* low, double* high) {
    std::vector<double> finite;
    finite.reserve(values.size());
    for (double v : values)
        if (std::isfinite(v))
            finite.push_back(v);
    if (finite.empty())
        return;
    if (scale == ImageScale::Percentile) {
        auto lo = finite.begin() + static_cast<std::ptrdiff_t>(0.01 * double(finite.size() - 1));
        auto hi = finite.begin() + static_cast<std::ptrdiff_t>(0.99 * double(finite.size() - 1));
        std::nth_element(finite.begin(), lo, finite.end());
        *low = *lo;
        std::nth_element(finite.begin(), hi, finite.end());
        *high = *hi;
    } else {
        const auto [mn, mx] = std::minmax_element(finite.begin(), finite.end());
        *low = *mn, *high = *mx;
    }
}

// Colour images of bytes are shown as they are, colour images within [0, 1]
// as such; others are scaled to [low, high].
std::pair<double, double> colourRange(const Samples& s, bool bytes, ImageScale scale, double low,
                                      double high) {
    const bool rawBytes = s.channels >= 3 && bytes;
    const bool unitRange = s.channels >= 3 && low >= 0 && high <= 1 && scale == ImageScale::MinMax;
    if (rawBytes)
        return {0, 255};
    if (unitRange)
        return {0, 1};
    return {low, high};
}

QImage paint(const Samples& s, double low, double high, const QVector<QRgb>& table) {
    const double span = high > low ? high - low : 1;
    auto level = [&](double v) {
        if (!std::isfinite(v))
            return 0;
        return static_cast<int>(std::clamp((v - low) / span * 255.0, 0.0, 255.0) + 0.5);
    };
    QImage image(s.w, s.h, s.channels == 4 ? QImage::Format_ARGB32 : QImage::Format_RGB32);
    for (int y = 0; y < s.h; ++y) {
        auto* line = reinterpret_cast<QRgb*>(image.scanLine(y));
        for (int x = 0; x < s.w; ++x) {
            auto at = [&](int c) {
                return s.values[(static_cast<std::size_t>(c) * s.h + y) * s.w + x];
            };
            if (s.channels >= 3) {
                line[x] = qRgba(level(at(0)), level(at(1)), level(at(2)),
                                s.channels == 4 ? level(at(3)) : 255);
            } else {
                const double v = at(0);
                line[x] = std::isnan(v) ? qRgb(255, 0, 255) : table[level(v)];  // NaN in magenta
            }
        }
    }
    return image;
}

}  // namespace

namespace {

// The rows of the slice the picture samples, every channel, made readable
// (a leaf read page by page inflates or fetches them here, on the worker):
// every stride.rows-th row only, so that the fit picture of a 1 GiB leaf on
// a web server fetches a few percent of it.
SliceHold requireRows(const ImageRequest& r, Strides stride,
                      const tensordict::CancelToken* cancel) {
    if (!r.bytes.pages)
        return {};
    const std::int64_t top = std::clamp<std::int64_t>(r.top, 0, r.slice.rows());
    const std::int64_t left = std::clamp<std::int64_t>(r.left, 0, r.slice.cols());
    const auto [rows, cols] = regionOf(r);
    return requireSpans(
        r.bytes, r.dtype,
        r.slice.rowSpans(top, top + rows, stride.rows, left, left + cols, r.channelDim), cancel);
}

}  // namespace

ImageResult renderImage(const ImageRequest& r, const tensordict::CancelToken* cancel) {
    if (r.hooks && r.hooks->renderStarted)
        r.hooks->renderStarted(r);
    ImageResult out = [&] {
        ImageResult out;
        if (!r.bytes.data)
            return out;
        const SliceHold held = requireRows(r, strideOf(r), cancel);
        if (!held.ok()) {
            out.sourceChanged = held.failed(), out.cancelled = held.cancelled;
            return out;
        }
        const Samples s = sample(r, cancel);
        if (s.lost) {
            out.sourceChanged = true;
            return out;
        }
        if (s.cancelled) {
            out.cancelled = true;
            return out;
        }
        out.stride = s.stride;
        out.top = std::clamp<std::int64_t>(r.top, 0, r.slice.rows());
        out.left = std::clamp<std::int64_t>(r.left, 0, r.slice.cols());
        if (r.fixedRange)
            out.low = r.low, out.high = r.high;
        else
            finiteRange(s.values, r.scale, &out.low, &out.high);
        const bool bytes = r.dtype == tensordict::DType::UInt8;
        const auto [low, high] = colourRange(s, bytes, r.scale, out.low, out.high);
        out.image = paint(s, low, high, colormapTable(r.colormap));
        out.hasNan = s.channels < 3 && std::any_of(s.values.begin(), s.values.end(),
                                                   [](double v) { return std::isnan(v); });
        if (s.channels >= 3 && bytes)
            out.low = 0, out.high = 255;
        return out;
    }();
    if (r.hooks && r.hooks->renderFinished)
        r.hooks->renderFinished(out);
    return out;
}

namespace {

// Calls `f` on the value of every element of the whole slice, every channel,
// reading the mapping in place, guarded. `f` must not allocate (a fault
// leaves by a jump). Checks `cancel` every row and every 64Ki elements of it.
template <typename F>
void scanSlice(const ImageRequest& r, const tensordict::CancelToken* cancel, RangeResult* out,
               F&& f) {
    const std::size_t item = tensordict::itemSize(r.dtype);
    const int channels =
        r.channelDim >= 0 ? static_cast<int>(r.slice.shape[static_cast<std::size_t>(r.channelDim)])
                          : 1;
    const std::int64_t rows = r.slice.rows(), cols = r.slice.cols();
    constexpr std::int64_t chunk = 1 << 16;
    TensorSlice slice = r.slice;
    const bool read = tensordict::tryGuardedRun([&] {
        for (int c = 0; c < channels; ++c) {
            if (r.channelDim >= 0)
                slice.index[static_cast<std::size_t>(r.channelDim)] = c;
            const TensorSlice::Layout at = slice.layout();
            for (std::int64_t y = 0; y < rows; ++y)
                for (std::int64_t x0 = 0; x0 < cols; x0 += chunk) {
                    if (cancel && cancel->isCancelled()) {
                        out->cancelled = true;
                        return;
                    }
                    const std::int64_t end = std::min(cols, x0 + chunk);
                    std::int64_t flat = at.at(y, x0);
                    for (std::int64_t x = x0; x < end; ++x, flat += at.colStride)
                        f(valueAt(r.bytes.data.get() + static_cast<std::size_t>(flat) * item,
                                  r.dtype));
                }
        }
    });
    out->sourceChanged = !read;
}

// Doubles as unsigned keys in the same order (-0 as +0), for a radix select.
std::uint64_t orderedKey(double v) {
    if (v == 0)
        v = 0;
    std::uint64_t u;
    std::memcpy(&u, &v, sizeof u);
    return u >> 63 ? ~u : u | (std::uint64_t(1) << 63);
}

double fromKey(std::uint64_t key) {
    const std::uint64_t u = key >> 63 ? key & ~(std::uint64_t(1) << 63) : ~key;
    double v;
    std::memcpy(&v, &u, sizeof v);
    return v;
}

// The value of rank `rank` (0-based, as nth_element) among the finite values,
// found 16 bits of its key a pass: at most four passes over the slice, 512 KiB
// of counts, however large the slice.
struct RadixTarget {
    std::uint64_t rank = 0;
    std::uint64_t prefix = 0;  // the key's leading `bits` bits, once known
    int bits = 0;
    bool done = false;
    double value = 0;
    std::uint64_t matched = 0, minKey = 0, maxKey = 0;  // of the keys with that prefix
    std::vector<std::uint64_t> counts = std::vector<std::uint64_t>(1 << 16);

    bool matches(std::uint64_t key) const { return bits == 0 || key >> (64 - bits) == prefix; }
    void add(std::uint64_t key) {
        if (matched++ == 0)
            minKey = maxKey = key;
        minKey = std::min(minKey, key), maxKey = std::max(maxKey, key);
        ++counts[(key >> (48 - bits)) & 0xffff];
    }
    // After a pass: the value if the keys seen decide it, else 16 more bits.
    void settle() {
        if (rank == 0 || minKey == maxKey || rank + 1 == matched) {
            value = fromKey(rank == 0 || minKey == maxKey ? minKey : maxKey);
            done = true;
            return;
        }
        std::size_t bucket = 0;
        while (rank >= counts[bucket])
            rank -= counts[bucket++];
        prefix = prefix << 16 | bucket;
        bits += 16;
        if (bits == 64) {
            value = fromKey(prefix);
            done = true;
        }
        std::fill(counts.begin(), counts.end(), 0);
        matched = 0;
    }
};

}  // namespace

RangeResult sliceRange(const ImageRequest& r, const tensordict::CancelToken* cancel) {
    if (r.hooks && r.hooks->rangeStarted)
        r.hooks->rangeStarted(r);
    RangeResult out = [&] {
        RangeResult out;
        if (!r.bytes.data)
            return out;
        const SliceHold held =
            requireSpan(r.bytes, r.dtype, r.slice.span(0, -1, r.channelDim), cancel);
        if (!held.ok()) {
            out.sourceChanged = held.failed(), out.cancelled = held.cancelled;
            return out;
        }
        if (r.scale == ImageScale::MinMax) {
            double low = INFINITY, high = -INFINITY;
            scanSlice(r, cancel, &out, [&](double v) {
                if (std::isfinite(v))
                    low = std::min(low, v), high = std::max(high, v);
            });
            if (low <= high)
                out.low = low, out.high = high;
            return out;
        }
        // The first pass counts the finite values, so both ranks are known after it.
        std::array<RadixTarget, 2> targets;
        std::uint64_t finite = 0;
        scanSlice(r, cancel, &out, [&](double v) {
            if (std::isfinite(v)) {
                ++finite;
                targets[0].add(orderedKey(v));
            }
        });
        if (out.cancelled || out.sourceChanged || finite == 0)
            return out;
        targets[1].counts = targets[0].counts;
        targets[1].matched = targets[0].matched;
        targets[1].minKey = targets[0].minKey, targets[1].maxKey = targets[0].maxKey;
        targets[0].rank = static_cast<std::uint64_t>(0.01 * double(finite - 1));
        targets[1].rank = static_cast<std::uint64_t>(0.99 * double(finite - 1));
        for (RadixTarget& t : targets)
            t.settle();
        while (!targets[0].done || !targets[1].done) {
            scanSlice(r, cancel, &out, [&](double v) {
                if (!std::isfinite(v))
                    return;
                const std::uint64_t key = orderedKey(v);
                for (RadixTarget& t : targets)
                    if (!t.done && t.matches(key))
                        t.add(key);
            });
            if (out.cancelled || out.sourceChanged)
                return out;
            for (RadixTarget& t : targets)
                if (!t.done)
                    t.settle();
        }
        out.low = targets[0].value, out.high = targets[1].value;
        return out;
    }();
    if (r.hooks && r.hooks->rangeFinished)
        r.hooks->rangeFinished(out);
    return out;
}

namespace {

// Keeps in `best` the larger of its difference and x - y (NaN on one side
// wins: drawn in magenta); false once NaN is kept (nothing can beat it).
bool largerDifference(double x, double y, double& best) {
    if (x == y || (std::isnan(x) && std::isnan(y)))
        return true;
    const double d = x - y;
    if (std::isnan(d)) {
        best = d;
        return false;
    }
    if (!std::isnan(best) && std::abs(d) > std::abs(best))
        best = d;
    return true;
}

// The difference image of `a` and `b` at `stride`, every element of each
// pixel's block considered (guarded; checks `cancel` every row of pixels).
bool poolDifferences(const ImageRequest& a, const ImageRequest& b, Strides stride, Samples& sd,
                     const tensordict::CancelToken* cancel) {
    const std::int64_t top = std::clamp<std::int64_t>(a.top, 0, a.slice.rows());
    const std::int64_t left = std::clamp<std::int64_t>(a.left, 0, a.slice.cols());
    const auto [rows, cols] = regionOf(a);
    const int channels =
        a.channelDim >= 0 ? static_cast<int>(a.slice.shape[std::size_t(a.channelDim)]) : 1;
    const std::size_t ia = tensordict::itemSize(a.dtype), ib = tensordict::itemSize(b.dtype);
    bool cancelled = false;
    const bool read = tensordict::tryGuardedRun([&] {
        for (int y = 0; y < sd.h && !cancelled; ++y) {
            if (cancel && cancel->isCancelled()) {
                cancelled = true;
                return;
            }
            for (int x = 0; x < sd.w; ++x) {
                double best = 0;
                bool open = true;
                TensorSlice slice = a.slice;
                for (int c = 0; c < channels && open; ++c) {
                    if (a.channelDim >= 0)
                        slice.index[std::size_t(a.channelDim)] = c;
                    const TensorSlice::Layout at = slice.layout();
                    const std::int64_t r0 = top + std::int64_t(y) * stride.rows;
                    const std::int64_t c0 = left + std::int64_t(x) * stride.cols;
                    for (std::int64_t r = r0; r < std::min(r0 + stride.rows, top + rows) && open;
                         ++r)
                        for (std::int64_t k = c0;
                             k < std::min(c0 + stride.cols, left + cols) && open; ++k) {
                            const std::size_t flat = static_cast<std::size_t>(at.at(r, k));
                            open = largerDifference(
                                valueAt(a.bytes.data.get() + flat * ia, a.dtype),
                                valueAt(b.bytes.data.get() + flat * ib, b.dtype), best);
                        }
                }
                sd.values[static_cast<std::size_t>(y) * sd.w + x] = best;
            }
        }
    });
    return read && !cancelled;
}

}  // namespace

ComparisonImages renderComparison(const ImageRequest& a, const ImageRequest& b,
                                  const tensordict::CancelToken* cancel) {
    ComparisonImages out;
    if (!a.bytes.data || !b.bytes.data)
        return out;
    ImageRequest rb = a;  // the same slice, channels and size
    rb.dtype = b.dtype;
    rb.bytes = b.bytes;
    const SliceHold heldA = requireRows(a, strideOf(a), cancel),
                    heldB = requireRows(rb, strideOf(rb), cancel);
    if (!heldA.ok() || !heldB.ok()) {
        out.sourceChanged = heldA.failed() || heldB.failed();  // else cancelled: dropped unseen
        return out;
    }
    const Samples sa = sample(a, cancel);
    const Samples sb = sa.lost || sa.cancelled ? Samples{} : sample(rb, cancel);
    if (sa.lost || sb.lost) {
        out.sourceChanged = true;
        return out;
    }
    if (sa.cancelled || sb.cancelled)
        return {};

    // A and B through one range: the same value has the same colour in both.
    std::vector<double> both;
    both.reserve(sa.values.size() * 2);
    both.insert(both.end(), sa.values.begin(), sa.values.end());
    both.insert(both.end(), sb.values.begin(), sb.values.end());
    double low = 0, high = 0;
    finiteRange(both, a.scale, &low, &high);
    const bool bytes = a.dtype == tensordict::DType::UInt8 && b.dtype == tensordict::DType::UInt8;
    const auto [lo, hi] = colourRange(sa, bytes, a.scale, low, high);
    const QVector<QRgb> table = colormapTable(a.colormap);
    for (ImageResult* r : {&out.a, &out.b}) {
        r->image = paint(r == &out.a ? sa : sb, lo, hi, table);
        r->low = lo, r->high = hi, r->stride = sa.stride;
    }

    // A - B: per pixel the channel whose difference is largest, with its sign.
    Samples sd;
    sd.w = sa.w, sd.h = sa.h, sd.stride = sa.stride;
    sd.values.assign(static_cast<std::size_t>(sa.w) * sa.h, 0.0);
    const std::size_t pixels = sd.values.size();
    for (std::size_t i = 0; i < pixels; ++i) {
        double best = 0;
        for (int c = 0; c < sa.channels; ++c)
            if (!largerDifference(sa.values[static_cast<std::size_t>(c) * pixels + i],
                                  sb.values[static_cast<std::size_t>(c) * pixels + i], best))
                break;
        sd.values[i] = best;
    }
    // Sampled pictures of leaves in memory or mapped: each pixel of A - B is
    // the largest difference of all the elements it stands for, so that a
    // change between the sampled rows and columns still shows.
    if (!sa.stride.isOne() && !a.bytes.pages && !b.bytes.pages &&
        !poolDifferences(a, rb, sa.stride, sd, cancel)) {
        out.sourceChanged = !(cancel && cancel->isCancelled());
        return out.sourceChanged ? out : ComparisonImages{};
    }
    std::vector<double> magnitudes;
    magnitudes.reserve(pixels);
    for (double d : sd.values)
        if (std::isfinite(d))
            magnitudes.push_back(std::abs(d));
    double mLow = 0, mHigh = 0;
    finiteRange(magnitudes, a.scale, &mLow, &mHigh);
    out.maxAbsDiff = mHigh;
    const double m = mHigh > 0 ? mHigh : 1;
    out.difference.image = paint(sd, -m, m, colormapTable(Colormap::BlueWhiteRed));
    out.difference.low = -m, out.difference.high = m, out.difference.stride = sa.stride;
    return out;
}
