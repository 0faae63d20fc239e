#pragma once

// libtensordict's torch part (CMake: tensordict::torch): leaves as libtorch
// tensors and tensors to save. The core library knows no ATen, so programs
// that only browse or convert data (tdstudio among them) never load libtorch.
//

#include <ATen/ATen.h>

#include <optional>
#include <string>

#include "tensordict/save.h"
#include "tensordict/tensordict.h"

namespace tensordict::torch {

// The libtorch type of a format dtype; nullopt for dtypes the linked libtorch
// lacks (uint16/32/64 and float8 in 1.13): read those leaves as raw bytes.
std::optional<at::ScalarType> scalarType(DType dtype);
// The format dtype of a libtorch type; nullopt if the format has none.
std::optional<DType> dtypeOf(at::ScalarType type);

// The leaf as an at::Tensor over its bytes (Node::pinnedBytes()), without
// a copy. A checkpoint's strided view (a transpose, a step) keeps its
// strides over its storage's mapped bytes, so views of one storage share
// memory as torch.load's do (writes to it are not seen by bytes(), which
// reads such a view in C order). Throws Error for dtypes libtorch cannot
// represent, for nested leaves and for nodes that are not tensors.
at::Tensor tensor(const Node& leaf);

// Adds or replaces child `key` of `parent` (an unlocked collection): the
// tensor copied to C order on the CPU if needed. Throws Error for dtypes the
// format has no name for and for sparse, quantized or nested tensors.
Node& addTensor(Node& parent, const std::string& key, const at::Tensor& tensor);

// The version of the libtorch this part was built against, as its headers
// say ("1.13.0" for Debian 12's 1.13.1): the torch part's addition to
// tensordict::libraryVersions(), which lists the core's libraries only.
std::string libtorchVersion();

}  // namespace tensordict::torch
