#include "formats/safetensors.h"

namespace tensordict {
namespace {

struct Entry {
    std::string_view name;
    DType dtype;
};
// In the order of the safetensors library's Dtype enum (safetensors/src/
// tensor.rs: BOOL, F4, F6_E2M3, F6_E3M2, U8, I8, F8_E5M2, F8_E4M3, F8_E8M0,
// F8_E4M3FNUZ, F8_E5M2FNUZ, I16, U16, F16, BF16, I32, U32, F32, C64, F64,
// I64, U64). F4 and F6 are read (unpacked) but not written.
constexpr Entry kTable[] = {
    {"BOOL", DType::Bool},
    {"F4", DType::Float4_e2m1fn},
    {"F6_E2M3", DType::Float6_e2m3fn},
    {"F6_E3M2", DType::Float6_e3m2fn},
    {"U8", DType::UInt8},
    {"I8", DType::Int8},
    {"F8_E5M2", DType::Float8_e5m2},
    {"F8_E4M3", DType::Float8_e4m3fn},
    {"F8_E8M0", DType::Float8_e8m0fnu},
    {"F8_E4M3FNUZ", DType::Float8_e4m3fnuz},
    {"F8_E5M2FNUZ", DType::Float8_e5m2fnuz},
    {"I16", DType::Int16},
    {"U16", DType::UInt16},
    {"F16", DType::Float16},
    {"BF16", DType::BFloat16},
    {"I32", DType::Int32},
    {"U32", DType::UInt32},
    {"F32", DType::Float32},
    {"C64", DType::Complex64},
    {"F64", DType::Float64},
    {"I64", DType::Int64},
    {"U64", DType::UInt64},
};

}  // namespace

std::optional<DType> safetensorsDType(std::string_view name) {
    for (const Entry& e : kTable)
        if (e.name == name)
            return e.dtype;
    return std::nullopt;
}

std::optional<std::string_view> safetensorsName(DType dtype) {
    for (const Entry& e : kTable)
        if (e.dtype == dtype)
            return e.name;
    return std::nullopt;
}

int safetensorsRank(DType dtype) {
    for (std::size_t i = 0; i < std::size(kTable); ++i)
        if (kTable[i].dtype == dtype)
            return static_cast<int>(i);
    return -1;
}

}  // namespace tensordict
