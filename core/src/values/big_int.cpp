#include "values/big_int.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace tensordict::bigint {
namespace {

using Limbs = std::vector<std::uint32_t>;  // little-endian, base 2^32

void trim(Limbs& v) {
    while (!v.empty() && v.back() == 0)
        v.pop_back();
}

// v = v * factor + add
void multiplyAdd(Limbs& v, std::uint32_t factor, std::uint32_t add) {
    std::uint64_t carry = add;
    for (std::uint32_t& limb : v) {
        const std::uint64_t t = std::uint64_t(limb) * factor + carry;
        limb = static_cast<std::uint32_t>(t);
        carry = t >> 32;
    }
    if (carry)
        v.push_back(static_cast<std::uint32_t>(carry));
}

// v /= divisor; returns the remainder.
std::uint32_t divide(Limbs& v, std::uint32_t divisor) {
    std::uint64_t rest = 0;
    for (std::size_t i = v.size(); i-- > 0;) {
        const std::uint64_t t = (rest << 32) | v[i];
        v[i] = static_cast<std::uint32_t>(t / divisor);
        rest = t % divisor;
    }
    trim(v);
    return static_cast<std::uint32_t>(rest);
}

// Little-endian bytes negated in two's complement (invert, add one), in place.
void negate(std::string& bytes) {
    bool carry = true;
    for (char& b : bytes) {
        unsigned v = static_cast<unsigned char>(~static_cast<unsigned char>(b));
        if (carry)
            ++v, carry = v > 0xff;
        b = static_cast<char>(v & 0xff);
    }
}

}  // namespace

bool isCanonicalDecimal(std::string_view text) {
    const bool negative = !text.empty() && text[0] == '-';
    if (negative)
        text.remove_prefix(1);
    if (text.empty() || (text[0] == '0' && (text.size() > 1 || negative)))
        return false;
    return std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string decimalFromTwosComplement(std::string_view littleEndian) {
    std::string bytes(littleEndian);
    const bool negative = !bytes.empty() && (static_cast<unsigned char>(bytes.back()) & 0x80);
    if (negative)  // the magnitude
        negate(bytes);
    Limbs magnitude((bytes.size() + 3) / 4, 0);
    for (std::size_t i = 0; i < bytes.size(); ++i)
        magnitude[i / 4] |= std::uint32_t(static_cast<unsigned char>(bytes[i])) << (8 * (i % 4));
    trim(magnitude);
    if (magnitude.empty())
        return "0";
    std::string digits;  // reversed, nine at a time
    while (!magnitude.empty()) {
        std::uint32_t chunk = divide(magnitude, 1000000000u);
        for (int k = 0; k < 9 && (chunk || !magnitude.empty()); ++k) {
            digits += static_cast<char>('0' + chunk % 10);
            chunk /= 10;
        }
    }
    if (negative)
        digits += '-';
    std::reverse(digits.begin(), digits.end());
    return digits;
}

std::string twosComplementFromDecimal(std::string_view decimal) {
    const bool negative = !decimal.empty() && decimal[0] == '-';
    if (negative)
        decimal.remove_prefix(1);
    Limbs magnitude;
    for (char c : decimal)
        multiplyAdd(magnitude, 10, static_cast<std::uint32_t>(c - '0'));
    trim(magnitude);
    if (magnitude.empty())
        return {};
    std::string bytes;
    for (std::uint32_t limb : magnitude)
        for (int k = 0; k < 4; ++k)
            bytes += static_cast<char>((limb >> (8 * k)) & 0xff);
    while (bytes.size() > 1 && bytes.back() == 0)
        bytes.pop_back();
    // One byte more than the magnitude's bits need (pickle's encode_long):
    // the sign bit is then free.
    int bits = 0;
    for (unsigned top = static_cast<unsigned char>(bytes.back()); top; top >>= 1)
        ++bits;
    const std::size_t bitLength = (bytes.size() - 1) * 8 + std::size_t(bits);
    bytes.resize((bitLength >> 3) + 1, '\0');
    if (negative) {
        negate(bytes);
        // -128 is 0x80, not 0x80 0xff: encode_long drops a redundant sign byte.
        if (bytes.size() > 1 && static_cast<unsigned char>(bytes.back()) == 0xff &&
            (static_cast<unsigned char>(bytes[bytes.size() - 2]) & 0x80))
            bytes.pop_back();
    }
    return bytes;
}

}  // namespace tensordict::bigint
