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

// How FloatFormat::Shortest writes a float: the fewest digits that read
// back as the same value, positional ("10000000000.001") or scientific
// ("1e+16"). Auto picks per value as Python's repr does; a table column
// picks one for all its values (columnNotation) so they read alike.
enum class Notation { Auto, Positional, Scientific };

// Whether Python's repr writes a float of magnitude |v| in scientific
// notation: below 1e-4 or from 1e16 (zero, NaN and infinities: no).
bool reprIsScientific(double v);

// Text for one element: "True", "-7", "0.5", "3.", "1.5-2j" (a complex
// number as Python writes it, without a trailing point). `precision`
// applies to Fixed and Scientific, `notation` to Shortest.
std::string formatElement(const std::byte* p, DType dtype,
                          FloatFormat format = FloatFormat::Shortest, int precision = 6,
                          Notation notation = Notation::Auto);

float halfToFloat(std::uint16_t h);
float bfloat16ToFloat(std::uint16_t b);

}  // namespace tensordict
