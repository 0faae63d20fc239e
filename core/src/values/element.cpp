#include "tensordict/element.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>

namespace tensordict {
namespace {

template <typename T>
T load(const std::byte* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// An 8-bit float with `expBits` exponent bits. fnuz: no negative zero, NaN is
// 0x80. fn (e4m3fn): no infinity, NaN is all ones. Otherwise IEEE-like.
double minifloat(std::uint8_t v, int expBits, int bias, bool fn, bool fnuz) {
    const int manBits = 7 - expBits;
    const bool negative = v & 0x80;
    const int exp = (v >> manBits) & ((1 << expBits) - 1);
    const int man = v & ((1 << manBits) - 1);
    if (fnuz && v == 0x80)
        return std::numeric_limits<double>::quiet_NaN();
    const int maxExp = (1 << expBits) - 1;
    if (!fnuz && fn && exp == maxExp && man == (1 << manBits) - 1)
        return std::numeric_limits<double>::quiet_NaN();
    if (!fnuz && !fn && exp == maxExp)
        return man ? std::numeric_limits<double>::quiet_NaN() : (negative ? -INFINITY : INFINITY);
    double value = exp == 0 ? std::ldexp(man, 1 - bias - manBits)
                            : std::ldexp((1 << manBits) + man, exp - bias - manBits);
    return negative ? -value : value;
}

// A sub-byte float's code (sign, exponent, mantissa in its low bits; no
// NaN, no Inf, subnormals at exponent 0), as the OCP MX formats define them.
double subByteFloat(std::uint8_t code, int expBits, int manBits, int bias) {
    const bool negative = (code >> (expBits + manBits)) & 1;
    const int exp = (code >> manBits) & ((1 << expBits) - 1);
    const int man = code & ((1 << manBits) - 1);
    const double value = exp == 0 ? std::ldexp(man, 1 - bias - manBits)
                                  : std::ldexp((1 << manBits) + man, exp - bias - manBits);
    return negative ? -value : value;
}

// `single`: the value is a float32 or narrower, so its shortest text is
// that of a float (0.1f prints as 0.1, not 0.10000000149011612).
// `point`: integral values keep numpy's trailing point ("3."), which the
// parts of a complex number drop as Python does ("1-2j").
std::string formatDouble(double d, FloatFormat format, int precision, Notation notation,
                         bool single, bool point = true) {
    if (std::isnan(d))
        return "nan";
    if (std::isinf(d))
        return d < 0 ? "-inf" : "inf";
    char buf[400];  // the longest positional double, DBL_MAX, has 309 digits
    if (format == FloatFormat::Fixed) {
        std::snprintf(buf, sizeof buf, "%.*f", precision, d);
        return buf;
    }
    if (format == FloatFormat::Scientific) {
        std::snprintf(buf, sizeof buf, "%.*e", precision, d);
        return buf;
    }
    const bool scientific =
        notation == Notation::Auto ? reprIsScientific(d) : notation == Notation::Scientific;
    const auto style = scientific ? std::chars_format::scientific : std::chars_format::fixed;
    auto res = single ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(d), style)
                      : std::to_chars(buf, buf + sizeof buf, d, style);
    std::string s(buf, res.ptr);
    if (point && s.find_first_of(".e") == std::string::npos)
        s += ".";
    return s;
}

}  // namespace

bool reprIsScientific(double v) {
    const double m = std::fabs(v);
    return std::isfinite(m) && m != 0 && (m < 1e-4 || m >= 1e16);
}

float halfToFloat(std::uint16_t h) {
    const std::uint32_t sign = (h & 0x8000u) << 16;
    const std::uint32_t exp = (h >> 10) & 0x1F;
    const std::uint32_t man = h & 0x3FF;
    float f;
    if (exp == 0) {
        f = std::ldexp(static_cast<float>(man), -24);
        return sign ? -f : f;
    }
    std::uint32_t bits;
    if (exp == 31)
        bits = sign | 0x7F800000u | (man << 13);
    else
        bits = sign | ((exp + 112) << 23) | (man << 13);
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

float bfloat16ToFloat(std::uint16_t b) {
    const std::uint32_t bits = std::uint32_t(b) << 16;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

ComplexValue elementAsComplex(const std::byte* p, DType dtype) {
    switch (dtype) {
        case DType::Complex32:
            return {halfToFloat(load<std::uint16_t>(p)), halfToFloat(load<std::uint16_t>(p + 2))};
        case DType::Complex64:
            return {load<float>(p), load<float>(p + 4)};
        case DType::Complex128:
            return {load<double>(p), load<double>(p + 8)};
        default:
            return {elementAsDouble(p, dtype), 0};
    }
}

double elementAsDouble(const std::byte* p, DType dtype) {
    switch (dtype) {
        case DType::Bool:
            return load<std::uint8_t>(p) ? 1 : 0;
        case DType::UInt8:
            return load<std::uint8_t>(p);
        case DType::Int8:
            return load<std::int8_t>(p);
        case DType::Int16:
            return load<std::int16_t>(p);
        case DType::Int32:
            return load<std::int32_t>(p);
        case DType::Int64:
            return static_cast<double>(load<std::int64_t>(p));
        case DType::UInt16:
            return load<std::uint16_t>(p);
        case DType::UInt32:
            return load<std::uint32_t>(p);
        case DType::UInt64:
            return static_cast<double>(load<std::uint64_t>(p));
        case DType::Float16:
            return halfToFloat(load<std::uint16_t>(p));
        case DType::BFloat16:
            return bfloat16ToFloat(load<std::uint16_t>(p));
        case DType::Float32:
            return load<float>(p);
        case DType::Float64:
            return load<double>(p);
        case DType::Complex32:
        case DType::Complex64:
        case DType::Complex128:
            return elementAsComplex(p, dtype).re;
        case DType::Float8_e4m3fn:
            return minifloat(load<std::uint8_t>(p), 4, 7, true, false);
        case DType::Float8_e4m3fnuz:
            return minifloat(load<std::uint8_t>(p), 4, 8, true, true);
        case DType::Float8_e5m2:
            return minifloat(load<std::uint8_t>(p), 5, 15, false, false);
        case DType::Float8_e5m2fnuz:
            return minifloat(load<std::uint8_t>(p), 5, 16, false, true);
        case DType::Float8_e8m0fnu: {
            const auto e = load<std::uint8_t>(p);
            return e == 0xFF ? std::numeric_limits<double>::quiet_NaN() : std::ldexp(1.0, e - 127);
        }
        case DType::Float4_e2m1fn:
            return subByteFloat(load<std::uint8_t>(p), 2, 1, 1);
        case DType::Float6_e2m3fn:
            return subByteFloat(load<std::uint8_t>(p), 2, 3, 1);
        case DType::Float6_e3m2fn:
            return subByteFloat(load<std::uint8_t>(p), 3, 2, 3);
    }
    return 0;
}

Value elementValue(const std::byte* p, DType dtype) {
    switch (dtypeInfo(dtype).category) {
        case DTypeCategory::Bool:
            return Value(load<std::uint8_t>(p) != 0);
        case DTypeCategory::Signed:
        case DTypeCategory::Unsigned:
            if (dtype == DType::UInt64) {
                const auto u = load<std::uint64_t>(p);
                if (u > static_cast<std::uint64_t>(INT64_MAX))
                    return Value(static_cast<double>(u));
                return Value(static_cast<std::int64_t>(u));
            }
            if (dtype == DType::Int64)
                return Value(load<std::int64_t>(p));
            return Value(static_cast<std::int64_t>(elementAsDouble(p, dtype)));
        case DTypeCategory::Float:
            return Value(elementAsDouble(p, dtype));
        case DTypeCategory::Complex: {
            const ComplexValue c = elementAsComplex(p, dtype);
            return Value(Value::List{Value(c.re), Value(c.im)});
        }
    }
    return Value();
}

std::string formatElement(const std::byte* p, DType dtype, FloatFormat format, int precision,
                          Notation notation) {
    switch (dtypeInfo(dtype).category) {
        case DTypeCategory::Bool:
            return load<std::uint8_t>(p) ? "True" : "False";
        case DTypeCategory::Signed:
            if (dtype == DType::Int64)
                return std::to_string(load<std::int64_t>(p));
            return std::to_string(static_cast<std::int64_t>(elementAsDouble(p, dtype)));
        case DTypeCategory::Unsigned:
            if (dtype == DType::UInt64)
                return std::to_string(load<std::uint64_t>(p));
            return std::to_string(static_cast<std::uint64_t>(elementAsDouble(p, dtype)));
        case DTypeCategory::Float:
            return formatDouble(elementAsDouble(p, dtype), format, precision, notation,
                                dtype != DType::Float64);
        case DTypeCategory::Complex: {
            const ComplexValue c = elementAsComplex(p, dtype);
            const bool single = dtype != DType::Complex128;
            const std::string im =
                formatDouble(std::fabs(c.im), format, precision, notation, single, false);
            const bool negIm = std::signbit(c.im) && !std::isnan(c.im);
            return formatDouble(c.re, format, precision, notation, single, false) +
                   (negIm ? "-" : "+") + im + "j";
        }
    }
    return {};
}

}  // namespace tensordict
