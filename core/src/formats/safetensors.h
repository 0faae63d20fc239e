#pragma once

// The dtypes of safetensors files, shared by the reader (safetensors_format)
// and the writer (safetensors_writer).

#include <memory>
#include <optional>
#include <string_view>

#include "tensordict/dtype.h"

namespace tensordict {

class ByteSource;
class Store;

// "F32" -> Float32, "F4" -> Float4_e2m1fn (dtypeInfo().packedBits: packed
// in the file); nullopt for a name tdstudio does not read.
std::optional<DType> safetensorsDType(std::string_view name);
// Float32 -> "F32"; nullopt for a dtype safetensors cannot hold.
std::optional<std::string_view> safetensorsName(DType dtype);
// The rank of a dtype in the safetensors library's Dtype enum (its
// serializer lays tensors out by descending rank, then by name).
int safetensorsRank(DType dtype);

// The safetensors data that `source` holds from its first byte: one leaf a
// tensor, keyed by its name as written (dots kept), the header's
// __metadata__ as the root's attributes. Data after the last tensor is
// left alone (DCP's safetensors chunks end their .distcp file).
std::shared_ptr<const Store> openSafetensorsStore(std::shared_ptr<const ByteSource> source);

}  // namespace tensordict
