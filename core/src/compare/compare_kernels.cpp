#include "compare/compare_kernels.h"

#include <complex>
#include <cstring>
#include <limits>

#include "tensordict/element.h"

namespace tensordict {
namespace {

// How a pair of dtypes is compared after promotion.
enum class Domain {
    Integer,  // both bool or integer: exact in 64 bits
    Double,   // as assert_close, which compares floating point in float64
    Complex,
};

Domain domainOf(DType a, DType b) {
    if (dtypeInfo(a).category == DTypeCategory::Complex ||
        dtypeInfo(b).category == DTypeCategory::Complex)
        return Domain::Complex;
    if (dtypeInfo(a).isIntegral() && dtypeInfo(b).isIntegral())
        return Domain::Integer;
    return Domain::Double;
}

template <typename T>
T loadRaw(const std::byte* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// Integers compare exactly in 128 bits: every int64 and uint64 value, and
// their differences, fit.
__extension__ typedef __int128 Wide;

Wide loadInteger(const std::byte* p, DType d) {
    switch (d) {
        case DType::Bool:
            return loadRaw<std::uint8_t>(p) != 0;
        case DType::UInt8:
            return loadRaw<std::uint8_t>(p);
        case DType::Int8:
            return loadRaw<std::int8_t>(p);
        case DType::Int16:
            return loadRaw<std::int16_t>(p);
        case DType::Int32:
            return loadRaw<std::int32_t>(p);
        case DType::Int64:
            return loadRaw<std::int64_t>(p);
        case DType::UInt16:
            return loadRaw<std::uint16_t>(p);
        case DType::UInt32:
            return loadRaw<std::uint32_t>(p);
        case DType::UInt64:
            return loadRaw<std::uint64_t>(p);
        default:
            return static_cast<Wide>(elementAsDouble(p, d));
    }
}

double loadReal(const std::byte* p, DType d) {
    switch (d) {
        case DType::Float32:
            return loadRaw<float>(p);
        case DType::Float64:
            return loadRaw<double>(p);
        case DType::Float16:
            return halfToFloat(loadRaw<std::uint16_t>(p));
        case DType::BFloat16:
            return bfloat16ToFloat(loadRaw<std::uint16_t>(p));
        default:
            return elementAsDouble(p, d);
    }
}

std::complex<double> loadComplex(const std::byte* p, DType d) {
    const ComplexValue v = elementAsComplex(p, d);
    return {v.re, v.im};
}

// torch.isclose for a pair already known to be unequal (x == y is close).
bool closeUnequal(double x, double y, const Tolerance& t) {
    if (std::isnan(x) || std::isnan(y))
        return t.equalNan && std::isnan(x) && std::isnan(y);
    if (t.rtol == 0 && t.atol == 0)
        return false;
    const double diff = std::abs(x - y);
    return std::isfinite(diff) && diff <= t.atol + std::abs(t.rtol * y);
}

// |x - y| without overflow or the rounding of large values through double.
double exactAbsDiff(Wide x, Wide y) {
    return static_cast<double>(x > y ? x - y : y - x);
}

bool closeUnequal(Wide x, Wide y, const Tolerance& t) {
    if (t.rtol == 0 && t.atol == 0)
        return false;
    return exactAbsDiff(x, y) <= t.atol + std::abs(t.rtol * static_cast<double>(y));
}

bool isNan(const std::complex<double>& z) {
    return std::isnan(z.real()) || std::isnan(z.imag());
}

bool closeUnequal(std::complex<double> x, std::complex<double> y, const Tolerance& t) {
    if (isNan(x) || isNan(y))
        return t.equalNan && isNan(x) && isNan(y);
    if (t.rtol == 0 && t.atol == 0)
        return false;
    const double diff = std::abs(x - y);
    return std::isfinite(diff) && diff <= t.atol + std::abs(t.rtol) * std::abs(y);
}

void record(Tally& tally, std::int64_t index, double x, double y) {
    const double absDiff = std::abs(x - y);
    tally.add(index, absDiff, absDiff / std::abs(y), std::isnan(x) || std::isnan(y));
}

void record(Tally& tally, std::int64_t index, Wide x, Wide y) {
    const double absDiff = exactAbsDiff(x, y);
    tally.add(index, absDiff, absDiff / std::abs(static_cast<double>(y)), false);
}

void record(Tally& tally, std::int64_t index, std::complex<double> x, std::complex<double> y) {
    const double absDiff = std::abs(x - y);
    tally.add(index, absDiff, absDiff / std::abs(y), isNan(x) || isNan(y));
}

// Compares n elements; `base` is the flat index of the first. Returns true
// when it stopped at a difference because `firstOnly`.
template <typename V, typename LoadA, typename LoadB>
bool scan(const std::byte* a, std::size_t aStep, const std::byte* b, std::size_t bStep,
          std::size_t n, std::int64_t base, const Tolerance& t, bool firstOnly, Tally& tally,
          LoadA loadA, LoadB loadB) {
    for (std::size_t i = 0; i < n; ++i) {
        const V x = loadA(a + i * aStep);
        const V y = loadB(b + i * bStep);
        if (x == y || closeUnequal(x, y, t))
            continue;
        record(tally, base + static_cast<std::int64_t>(i), x, y);
        if (firstOnly)
            return true;
    }
    return false;
}

// Raw bits identical and no NaN among them, in one pass that vectorizes:
// the fast path for the equal parts of two floating-point leaves.
template <typename Bits>
bool identicalWithoutNan(const std::byte* a, const std::byte* b, std::size_t n, Bits absMask,
                         Bits infBits) {
    Bits diff = 0, largest = 0;  // integer OR and max reductions: both vectorize
    for (std::size_t i = 0; i < n; ++i) {
        const Bits x = loadRaw<Bits>(a + i * sizeof(Bits));
        const Bits y = loadRaw<Bits>(b + i * sizeof(Bits));
        diff |= x ^ y;
        largest = std::max<Bits>(largest, x & absMask);
    }
    return diff == 0 && largest <= infBits;
}

// True when the chunk needs no element-wise look: its bytes are identical
// and identical bytes mean equal values (no NaN, or NaN equal to NaN).
bool identicalChunk(const std::byte* a, const std::byte* b, std::size_t n, DType d,
                    const Tolerance& t) {
    const std::size_t bytes = n * itemSize(d);
    const DTypeCategory category = dtypeInfo(d).category;
    const bool nanMatters =
        !t.equalNan && (category == DTypeCategory::Float || category == DTypeCategory::Complex);
    if (!nanMatters)
        return std::memcmp(a, b, bytes) == 0;
    switch (d) {
        case DType::Float32:
        case DType::Complex64:
            return identicalWithoutNan<std::uint32_t>(a, b, bytes / 4, 0x7fffffffu, 0x7f800000u);
        case DType::Float64:
        case DType::Complex128:
            return identicalWithoutNan<std::uint64_t>(a, b, bytes / 8, 0x7fffffffffffffffull,
                                                      0x7ff0000000000000ull);
        case DType::Float16:
        case DType::Complex32:
            return identicalWithoutNan<std::uint16_t>(a, b, bytes / 2, std::uint16_t(0x7fff),
                                                      std::uint16_t(0x7c00));
        case DType::BFloat16:
            return identicalWithoutNan<std::uint16_t>(a, b, bytes / 2, std::uint16_t(0x7fff),
                                                      std::uint16_t(0x7f80));
        default:
            return false;  // float8: compared element by element
    }
}

}  // namespace

bool compareRange(const std::byte* a, DType aType, const std::byte* b, DType bType, std::size_t n,
                  std::int64_t base, const Tolerance& t, bool firstOnly, Tally& tally) {
    if (aType == bType && identicalChunk(a, b, n, aType, t))
        return false;
    const std::size_t aStep = itemSize(aType), bStep = itemSize(bType);
    if (aType == bType) {
        // The common dtypes with the loads inlined.
        switch (aType) {
            case DType::Float32: {
                auto load = [](const std::byte* p) -> double { return loadRaw<float>(p); };
                return scan<double>(a, 4, b, 4, n, base, t, firstOnly, tally, load, load);
            }
            case DType::Float64:
                return scan<double>(a, 8, b, 8, n, base, t, firstOnly, tally, loadRaw<double>,
                                    loadRaw<double>);
            case DType::Int64: {
                auto load = [](const std::byte* p) -> Wide { return loadRaw<std::int64_t>(p); };
                return scan<Wide>(a, 8, b, 8, n, base, t, firstOnly, tally, load, load);
            }
            case DType::Int32: {
                auto load = [](const std::byte* p) -> Wide { return loadRaw<std::int32_t>(p); };
                return scan<Wide>(a, 4, b, 4, n, base, t, firstOnly, tally, load, load);
            }
            case DType::UInt8: {
                auto load = [](const std::byte* p) -> Wide { return loadRaw<std::uint8_t>(p); };
                return scan<Wide>(a, 1, b, 1, n, base, t, firstOnly, tally, load, load);
            }
            default:
                break;
        }
    }
    switch (domainOf(aType, bType)) {
        case Domain::Integer:
            return scan<Wide>(
                a, aStep, b, bStep, n, base, t, firstOnly, tally,
                [aType](const std::byte* p) { return loadInteger(p, aType); },
                [bType](const std::byte* p) { return loadInteger(p, bType); });
        case Domain::Double:
            return scan<double>(
                a, aStep, b, bStep, n, base, t, firstOnly, tally,
                [aType](const std::byte* p) { return loadReal(p, aType); },
                [bType](const std::byte* p) { return loadReal(p, bType); });
        case Domain::Complex:
            return scan<std::complex<double>>(
                a, aStep, b, bStep, n, base, t, firstOnly, tally,
                [aType](const std::byte* p) { return loadComplex(p, aType); },
                [bType](const std::byte* p) { return loadComplex(p, bType); });
    }
    return false;
}

}  // namespace tensordict
