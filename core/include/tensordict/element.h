#pragma once

#include <cstddef>
#include <string>

#include "tensordict/dtype.h"
#include "tensordict/value.h"

namespace tensordict {

// Decoding single elements from raw little-endian bytes, for every dtype of
// the format (including those libtorch 1.13 lacks), without libtorch.

struct ComplexValue {
    double re = 0;
    double im = 0;
};

// The element's value as a double (real part for complex; 0/1 for bool).
double elementAsDouble(const std::byte* p, DType dtype);
ComplexValue elementAsComplex(const std::byte* p, DType dtype);
// As plain data: bool, integer, float, or [re, im] for complex.
Value elementValue(const std::byte* p, DType dtype);

enum class FloatFormat { Shortest, Fixed, Scientific };

// Text for one element: "True", "-7", "0.5", "1.5+2j". `precision` applies
// to Fixed and Scientific.
std::string formatElement(const std::byte* p, DType dtype,
                          FloatFormat format = FloatFormat::Shortest, int precision = 6);

float halfToFloat(std::uint16_t h);
float bfloat16ToFloat(std::uint16_t b);

}  // namespace tensordict
