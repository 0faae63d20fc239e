#pragma once

// The dtypes of safetensors files, shared by the reader (safetensors_format)
// and the writer (safetensors_writer).

#include <optional>
#include <string_view>

#include "tensordict/dtype.h"

namespace tensordict {

// "F32" -> Float32, "F4" -> Float4_e2m1fn (dtypeInfo().packedBits: packed
// in the file); nullopt for a name tdstudio does not read.
std::optional<DType> safetensorsDType(std::string_view name);
// Float32 -> "F32"; nullopt for a dtype safetensors cannot hold.
std::optional<std::string_view> safetensorsName(DType dtype);
// The rank of a dtype in the safetensors library's Dtype enum (its
// serializer lays tensors out by descending rank, then by name).
int safetensorsRank(DType dtype);

}  // namespace tensordict
