#include "tensordict/dtype.h"

#include <array>

namespace tensordict {
namespace {

using C = DTypeCategory;

// Every dtype string Python's _TORCH_DTYPES can name, plus the float8 types
// newer torch writes. hasTorchType: libtorch 1.13 has a ScalarType for it.
constexpr std::array<DTypeInfo, kDTypeCount> kTable{{
    {DType::Bool, "torch.bool", 1, C::Bool, true},
    {DType::UInt8, "torch.uint8", 1, C::Unsigned, true},
    {DType::Int8, "torch.int8", 1, C::Signed, true},
    {DType::Int16, "torch.int16", 2, C::Signed, true},
    {DType::Int32, "torch.int32", 4, C::Signed, true},
    {DType::Int64, "torch.int64", 8, C::Signed, true},
    {DType::UInt16, "torch.uint16", 2, C::Unsigned, false},
    {DType::UInt32, "torch.uint32", 4, C::Unsigned, false},
    {DType::UInt64, "torch.uint64", 8, C::Unsigned, false},
    {DType::Float16, "torch.float16", 2, C::Float, true},
    {DType::BFloat16, "torch.bfloat16", 2, C::Float, true},
    {DType::Float32, "torch.float32", 4, C::Float, true},
    {DType::Float64, "torch.float64", 8, C::Float, true},
    {DType::Complex32, "torch.complex32", 4, C::Complex, true},
    {DType::Complex64, "torch.complex64", 8, C::Complex, true},
    {DType::Complex128, "torch.complex128", 16, C::Complex, true},
    {DType::Float8_e4m3fn, "torch.float8_e4m3fn", 1, C::Float, false},
    {DType::Float8_e4m3fnuz, "torch.float8_e4m3fnuz", 1, C::Float, false},
    {DType::Float8_e5m2, "torch.float8_e5m2", 1, C::Float, false},
    {DType::Float8_e5m2fnuz, "torch.float8_e5m2fnuz", 1, C::Float, false},
    {DType::Float8_e8m0fnu, "torch.float8_e8m0fnu", 1, C::Float, false},
    // Named as ml_dtypes names them: torch has no unpacked sub-byte dtype.
    {DType::Float4_e2m1fn, "float4_e2m1fn", 1, C::Float, false, 4},
    {DType::Float6_e2m3fn, "float6_e2m3fn", 1, C::Float, false, 6},
    {DType::Float6_e3m2fn, "float6_e3m2fn", 1, C::Float, false, 6},
}};

}  // namespace

const DTypeInfo& dtypeInfo(DType dtype) {
    return kTable[static_cast<std::size_t>(dtype)];
}

std::optional<DType> dtypeFromString(std::string_view name) {
    for (const auto& info : kTable) {
        // Packed sub-byte dtypes come from safetensors' names only: no
        // tensordict or torch file names them.
        if (info.name == name && !info.packedBits) {
            return info.dtype;
        }
    }
    // Python aliases that str(torch.dtype) never prints but users may write.
    if (name == "torch.float")
        return DType::Float32;
    if (name == "torch.double")
        return DType::Float64;
    if (name == "torch.half")
        return DType::Float16;
    if (name == "torch.long")
        return DType::Int64;
    if (name == "torch.int")
        return DType::Int32;
    if (name == "torch.short")
        return DType::Int16;
    if (name == "torch.cfloat")
        return DType::Complex64;
    if (name == "torch.cdouble")
        return DType::Complex128;
    return std::nullopt;
}

}  // namespace tensordict
