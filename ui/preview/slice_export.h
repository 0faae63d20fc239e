#pragma once

#include <QString>

#include "tensor_slice.h"
#include "tensordict/element.h"
#include "tensordict/node.h"

// Writing the current slice of a leaf to files other tools read.
namespace slice_export {

// Comma-separated values, one line per row. Returns "" or the error.
QString writeCsv(const QString& path, tensordict::DType dtype, const tensordict::LeafBytes& bytes,
                 const TensorSlice& slice);
// NumPy's .npy (format 1.0): shape (rows, cols) of the slice. Dtypes numpy
// lacks are widened: bfloat16, float8 -> float32, complex32 -> complex64.
QString writeNpy(const QString& path, tensordict::DType dtype, const tensordict::LeafBytes& bytes,
                 const TensorSlice& slice);

}  // namespace slice_export
