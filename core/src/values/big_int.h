#pragma once

// Python ints of any size, as exact decimal text: what JSON holds them as
// and what people read. Pickles keep them as little-endian two's-complement
// bytes (LONG1, LONG4); these convert between the two, exactly.

#include <optional>
#include <string>
#include <string_view>

namespace tensordict::bigint {

// "-?[1-9][0-9]*" or "0": the canonical decimal text of an integer, as
// Python's str() writes it; false for anything else (leading zeros, "+",
// "-0", an empty string).
bool isCanonicalDecimal(std::string_view text);

// The decimal text of a little-endian two's-complement integer (pickle's
// LONG1/LONG4 payload; empty bytes are 0).
std::string decimalFromTwosComplement(std::string_view littleEndian);

// The shortest little-endian two's-complement bytes of a canonical decimal
// integer (what pickle's encode_long writes). Empty for 0.
std::string twosComplementFromDecimal(std::string_view decimal);

}  // namespace tensordict::bigint
