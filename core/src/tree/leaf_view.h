#pragma once

// Reading a view's elements (tree/leaf_view.cpp) from bytes in memory.

#include <cstdint>
#include <vector>

#include "tensordict/bytes.h"
#include "tensordict/node.h"

namespace tensordict {

// A copy of the elements of `leaf` (its shape, dtype and storage.bigEndian)
// laid out from `first` with element `strides`, as C-ordered little-endian
// bytes.
LeafBytes gatheredBytes(const std::byte* first, const TensorLeaf& leaf,
                        const std::vector<std::int64_t>& strides);

}  // namespace tensordict
