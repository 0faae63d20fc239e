#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace tensordict {

// The dtypes of the on-disk format, named as Python's str(torch.dtype).
// The table is the library's own: it also holds dtypes that libtorch 1.13
// cannot represent (unsigned 16/32/64 bit, float8), whose leaves still load
// as raw bytes.
enum class DType {
    Bool,
    UInt8,
    Int8,
    Int16,
    Int32,
    Int64,
    UInt16,
    UInt32,
    UInt64,
    Float16,
    BFloat16,
    Float32,
    Float64,
    Complex32,
    Complex64,
    Complex128,
    Float8_e4m3fn,
    Float8_e4m3fnuz,
    Float8_e5m2,
    Float8_e5m2fnuz,
    Float8_e8m0fnu,  // scales: 2^(e - 127), no sign, no zero, 0xFF NaN
    // Sub-byte floats (safetensors' F4, F6_E2M3, F6_E3M2; OCP MX), held one
    // code a byte in its low bits: files pack them (F4 two a byte, F6 four
    // in three bytes) and are unpacked as read. No NaN, no Inf.
    Float4_e2m1fn,
    Float6_e2m3fn,
    Float6_e3m2fn,
};
// How many dtypes there are, for loops over all of them.
constexpr int kDTypeCount = static_cast<int>(DType::Float6_e3m2fn) + 1;

enum class DTypeCategory { Bool, Unsigned, Signed, Float, Complex };

struct DTypeInfo {
    DType dtype;
    std::string_view name;  // "torch.float32"
    std::size_t itemSize;
    DTypeCategory category;
    bool hasTorchType;   // representable as an at::ScalarType in the libtorch we link
    int packedBits = 0;  // sub-byte dtypes: bits a code takes in files (4, 6); 0 otherwise

    // Whole numbers (bool, signed, unsigned): exact as int64 differences and bins.
    bool isIntegral() const {
        return category == DTypeCategory::Bool || category == DTypeCategory::Signed ||
               category == DTypeCategory::Unsigned;
    }
};

const DTypeInfo& dtypeInfo(DType dtype);
std::optional<DType> dtypeFromString(std::string_view name);
inline std::string_view dtypeName(DType dtype) {
    return dtypeInfo(dtype).name;
}
inline std::size_t itemSize(DType dtype) {
    return dtypeInfo(dtype).itemSize;
}
// The bytes `numel` elements take as stored (torch's nbytes): numel x bits /
// 8 for a packed sub-byte dtype, numel x itemSize otherwise.
inline std::uint64_t storedBytes(DType dtype, std::uint64_t numel) {
    const DTypeInfo& info = dtypeInfo(dtype);
    return info.packedBits ? numel * std::uint64_t(info.packedBits) / 8 : numel * info.itemSize;
}

}  // namespace tensordict
