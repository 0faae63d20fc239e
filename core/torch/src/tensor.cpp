// The torch part of libtensordict: the only source that includes ATen.
// Leaves become at::Tensor views of their mapped bytes, without a copy.

#include "tensordict/torch.h"

#include <torch/version.h>

#include "tensordict/error.h"
#include "tensordict/keys.h"
#include "tensordict/store.h"

namespace tensordict {
namespace torch {

std::optional<at::ScalarType> scalarType(DType dtype) {
    switch (dtype) {
        case DType::Bool:
            return at::kBool;
        case DType::UInt8:
            return at::kByte;
        case DType::Int8:
            return at::kChar;
        case DType::Int16:
            return at::kShort;
        case DType::Int32:
            return at::kInt;
        case DType::Int64:
            return at::kLong;
        case DType::Float16:
            return at::kHalf;
        case DType::BFloat16:
            return at::kBFloat16;
        case DType::Float32:
            return at::kFloat;
        case DType::Float64:
            return at::kDouble;
        case DType::Complex32:
            return at::kComplexHalf;
        case DType::Complex64:
            return at::kComplexFloat;
        case DType::Complex128:
            return at::kComplexDouble;
        default:
            return std::nullopt;  // no ScalarType in libtorch 1.13
    }
}

std::optional<DType> dtypeOf(at::ScalarType type) {
    for (int i = 0; i < kDTypeCount; ++i) {
        const auto d = static_cast<DType>(i);
        if (scalarType(d) == type)
            return d;
    }
    return std::nullopt;
}

std::string libtorchVersion() {
    return TORCH_VERSION;
}

at::Tensor tensor(const Node& node) {
    const std::string where = formatKeyPath(node.keyPath());
    if (!node.isTensor())
        throw Error::invalid(where, "not a tensor leaf");
    const TensorLeaf& leaf = node.leaf();
    const auto type = scalarType(leaf.dtype);
    if (!type)
        throw Error::unsupported(
            where, std::string(dtypeName(leaf.dtype)) +
                       " has no libtorch type in this build; read its raw bytes instead");
    if (leaf.isNested)
        throw Error::invalid(
            where, "nested (ragged) leaf: read its components through nestedShapes and bytes()");
    const auto options = at::TensorOptions().dtype(*type).device(at::kCPU);
    if (leaf.numel == 0)
        return at::empty(leaf.shape, options);
    const StorageInfo& storage = leaf.storage;
    if (!storage.strides.empty() && !storage.bigEndian && node.store()) {
        // A checkpoint's strided view (a transpose, a step): the tensor keeps
        // the strides over its storage's bytes, mapped in place, as torch.load
        // gives it; views of one storage share its memory.
        const std::size_t item = itemSize(leaf.dtype);
        std::uint64_t last = 0;
        for (std::size_t d = 0; d < leaf.shape.size(); ++d)
            if (leaf.shape[d] > 1)
                last += std::uint64_t(leaf.shape[d] - 1) * std::uint64_t(storage.strides[d]);
        // The tree's builder checked that the view lies inside its storage.
        const LeafBytes whole =
            node.store()->container().leafBytes(storage, storage.offset + (last + 1) * item, 1);
        std::byte* first = whole.data.get() + storage.offset;
        if (reinterpret_cast<std::uintptr_t>(first) % item == 0) {
            auto keepAlive = whole.data;
            return at::from_blob(
                first, leaf.shape, storage.strides,
                [keepAlive](void*) mutable { keepAlive.reset(); }, options);
        }
    }
    LeafBytes b = node.pinnedBytes();
    auto keepAlive = b.data;
    return at::from_blob(
        b.data.get(), leaf.shape, [keepAlive](void*) mutable { keepAlive.reset(); }, options);
}

Node& addTensor(Node& parent, const std::string& key, const at::Tensor& tensor) {
    const auto dtype = dtypeOf(tensor.scalar_type());
    if (!dtype)
        throw Error::unsupported(key, std::string("dtype ") + c10::toString(tensor.scalar_type()) +
                                          " cannot be stored in the tensordict format");
    if (tensor.is_quantized() || tensor.is_sparse() || tensor.is_nested())
        throw Error::unsupported(key, "only dense tensors can be stored");
    // C order on the CPU; the holder keeps the storage alive as long as the bytes.
    auto holder = std::make_shared<at::Tensor>(tensor.detach().to(at::kCPU).contiguous());
    const std::size_t nbytes = static_cast<std::size_t>(holder->numel()) * itemSize(*dtype);
    LeafBytes bytes;
    if (nbytes)
        bytes = {std::shared_ptr<std::byte>(holder, static_cast<std::byte*>(holder->data_ptr())),
                 nbytes};
    return parent.addBytes(key, *dtype, tensor.sizes().vec(), std::move(bytes));
}

}  // namespace torch
}  // namespace tensordict
