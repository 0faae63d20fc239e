#include "tensordict/statistics.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <thread>
#include <vector>

#include "tensordict/element.h"
#include "tensordict/guarded_read.h"
#include "tensordict/keys.h"
#include "tensordict/node.h"
#include "tensordict/worker_threads.h"

namespace tensordict {
namespace {

constexpr std::uint64_t kPiece = 4u << 20;  // bytes a task reads and sums

// Contiguous floats: 8 independent lanes over blocks, no NaN/Inf test per
// element; a block whose sums are not finite holds NaN or Inf and is
// summed again exactly by momentsOf().
template <typename T>
Moments momentsOfFloats(const T* p, std::int64_t count) {
    constexpr int kLanes = 8;
    constexpr std::int64_t kBlock = 4096;
    Moments total;
    for (std::int64_t b = 0; b < count; b += kBlock) {
        const std::int64_t e = std::min(count, b + kBlock);
        const double shift = double(p[b]);
        double sum[kLanes] = {}, sumsq[kLanes] = {};
        T mn[kLanes], mx[kLanes];
        std::int64_t zeros[kLanes] = {};
        for (int j = 0; j < kLanes; ++j)
            mn[j] = mx[j] = p[b];
        std::int64_t i = b;
        for (; i + kLanes <= e; i += kLanes) {
            for (int j = 0; j < kLanes; ++j) {
                const T x = p[i + j];
                const double d = double(x) - shift;
                sum[j] += d;
                sumsq[j] += d * d;
                mn[j] = x < mn[j] ? x : mn[j];
                mx[j] = x > mx[j] ? x : mx[j];
                zeros[j] += x == T(0);
            }
        }
        double s = 0, q = 0;
        Moments block;
        for (int j = 0; j < kLanes; ++j) {
            s += sum[j], q += sumsq[j], block.zeros += zeros[j];
            block.min = std::min(block.min, double(mn[j]));
            block.max = std::max(block.max, double(mx[j]));
        }
        for (; i < e; ++i) {
            const double d = double(p[i]) - shift;
            s += d, q += d * d;
            block.zeros += p[i] == T(0);
            block.min = std::min(block.min, double(p[i]));
            block.max = std::max(block.max, double(p[i]));
        }
        if (!std::isfinite(s + q) || !std::isfinite(shift)) {
            total.merge(momentsOf(b, e, [p](std::int64_t k) { return double(p[k]); }));
            continue;
        }
        const auto n = double(e - b);
        block.count = block.finite = e - b;
        block.mean = shift + s / n;
        block.m2 = std::max(0.0, q - s * s / n);
        total.merge(block);
    }
    return total;
}

// A one-byte dtype: every code's value once, then counts of each code in
// the data; the moments come from the 256 counts.
Moments momentsOfBytes(const std::byte* data, DType dtype, std::int64_t count) {
    std::array<std::uint64_t, 256 * 4> counts{};  // four lanes: no store waits on the last
    const auto* p = reinterpret_cast<const std::uint8_t*>(data);
    std::int64_t i = 0;
    for (; i + 4 <= count; i += 4) {
        ++counts[p[i]];
        ++counts[256 + p[i + 1]];
        ++counts[512 + p[i + 2]];
        ++counts[768 + p[i + 3]];
    }
    for (; i < count; ++i)
        ++counts[p[i]];
    // Each code is a run of equal values, merged as such (no n·x² to round).
    Moments total;
    for (int code = 0; code < 256; ++code) {
        const std::uint64_t n =
            counts[code] + counts[256 + code] + counts[512 + code] + counts[768 + code];
        if (n == 0)
            continue;
        const auto byte = static_cast<std::byte>(code);
        const double x = elementAsDouble(&byte, dtype);
        Moments run;
        run.count = static_cast<std::int64_t>(n);
        if (std::isnan(x)) {
            run.nans = run.count;
        } else if (std::isinf(x)) {
            run.infs = run.count;
        } else {
            run.finite = run.count;
            run.min = run.max = run.mean = x;
            run.zeros = x == 0 ? run.count : 0;
        }
        total.merge(run);
    }
    return total;
}

}  // namespace

void Moments::merge(const Moments& o) {
    count += o.count, nans += o.nans, infs += o.infs, zeros += o.zeros;
    min = std::min(min, o.min), max = std::max(max, o.max);
    if (o.finite == 0)
        return;
    if (finite == 0) {
        finite = o.finite, mean = o.mean, m2 = o.m2;
        return;
    }
    const double n = double(finite) + double(o.finite);
    const double delta = o.mean - mean;
    mean += delta * double(o.finite) / n;
    m2 += o.m2 + delta * delta * double(finite) * double(o.finite) / n;
    finite += o.finite;
}

Moments momentsOfElements(const std::byte* data, DType dtype, std::int64_t count) {
    if (count <= 0)
        return {};
    switch (dtype) {
        case DType::Float32:
            return momentsOfFloats(reinterpret_cast<const float*>(data), count);
        case DType::Float64:
            return momentsOfFloats(reinterpret_cast<const double*>(data), count);
        default:
            break;
    }
    if (itemSize(dtype) == 1)
        return momentsOfBytes(data, dtype, count);
    const std::size_t item = itemSize(dtype);
    if (dtypeInfo(dtype).category == DTypeCategory::Complex)
        return momentsOf(0, count, [&](std::int64_t i) {
            const ComplexValue c = elementAsComplex(data + std::size_t(i) * item, dtype);
            return std::hypot(c.re, c.im);
        });
    return momentsOf(0, count, [&](std::int64_t i) {
        return elementAsDouble(data + std::size_t(i) * item, dtype);
    });
}

LeafStatistics leafStatistics(const Node& leaf, int threads, const CancelToken* cancel) {
    const TensorLeaf& l = leaf.leaf();
    const std::size_t item = itemSize(l.dtype);
    const std::string where = formatKeyPath(leaf.keyPath());
    if (threads <= 0)
        threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    Moments all;
    if (leaf.readsAnyRange()) {
        // Pieces summed on every core, merged in order: the same figures
        // however many threads took part.
        const std::uint64_t piece = kPiece / item * item;
        const std::size_t pieces = static_cast<std::size_t>((l.nbytes + piece - 1) / piece);
        std::vector<Moments> parts(pieces);
        parallelFor(
            pieces, threads, [] { return std::vector<std::byte>(kPiece); },
            [&](std::vector<std::byte>& buffer, std::size_t i) {
                const std::uint64_t offset = i * piece;
                const std::size_t n = static_cast<std::size_t>(std::min(piece, l.nbytes - offset));
                leaf.readInto(offset, buffer.data(), n);
                parts[i] = momentsOfElements(buffer.data(), l.dtype, std::int64_t(n / item));
            },
            cancel, where);
        for (const Moments& m : parts)
            all.merge(m);
    } else {
        // Inflated front to back: one reader, whole elements at a time.
        LeafReader reader(leaf);
        std::vector<std::byte> buffer(kPiece / item * item + item);
        std::size_t held = 0;
        while (const std::size_t got = reader.read(buffer.data() + held, kPiece / item * item)) {
            held += got;
            const std::size_t whole = held / item * item;
            all.merge(momentsOfElements(buffer.data(), l.dtype, std::int64_t(held / item)));
            std::memmove(buffer.data(), buffer.data() + whole, held - whole);
            held -= whole;
            if (cancel)
                cancel->throwIfCancelled(where);
        }
    }
    LeafStatistics out;
    out.count = all.count, out.finite = all.finite, out.nans = all.nans, out.infs = all.infs;
    if (all.finite) {
        out.min = all.min, out.max = all.max, out.mean = all.mean;
        out.std = all.populationStd();
    }
    return out;
}

}  // namespace tensordict
