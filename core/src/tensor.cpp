// The only libtensordict source that includes ATen: leaves as at::Tensor.

#include <ATen/ATen.h>

#include "tensordict/error.h"
#include "tensordict/keys.h"
#include "tensordict/node.h"

namespace tensordict {
namespace {

std::optional<at::ScalarType> scalarType(DType dtype) {
    switch (dtype) {
        case DType::Bool: return at::kBool;
        case DType::UInt8: return at::kByte;
        case DType::Int8: return at::kChar;
        case DType::Int16: return at::kShort;
        case DType::Int32: return at::kInt;
        case DType::Int64: return at::kLong;
        case DType::Float16: return at::kHalf;
        case DType::BFloat16: return at::kBFloat16;
        case DType::Float32: return at::kFloat;
        case DType::Float64: return at::kDouble;
        case DType::Complex32: return at::kComplexHalf;
        case DType::Complex64: return at::kComplexFloat;
        case DType::Complex128: return at::kComplexDouble;
        default: return std::nullopt;  // no ScalarType in libtorch 1.13
    }
}

}  // namespace

at::Tensor Node::tensor() const {
    const std::string where = formatKeyPath(keyPath());
    if (kind != NodeKind::Tensor) throw Error(where, "not a tensor leaf");
    const auto type = scalarType(dtype);
    if (!type)
        throw Error(where, std::string(dtypeName(dtype)) +
                               " has no libtorch type in this build; read its raw bytes instead");
    if (isNested)
        throw Error(where, "nested (ragged) leaf: read its components through nestedShapes and bytes()");
    const auto options = at::TensorOptions().dtype(*type).device(at::kCPU);
    if (numel == 0) return at::empty(shape, options);
    LeafBytes b = bytes();
    auto keepAlive = b.data;
    return at::from_blob(
        b.data.get(), shape, [keepAlive](void*) mutable { keepAlive.reset(); }, options);
}

}  // namespace tensordict
