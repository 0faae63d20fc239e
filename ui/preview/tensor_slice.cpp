#include "tensor_slice.h"

#include <algorithm>

TensorSlice TensorSlice::defaultFor(const std::vector<std::int64_t>& shape) {
    TensorSlice s;
    s.shape = shape;
    s.index.assign(shape.size(), 0);
    const int n = static_cast<int>(shape.size());
    if (n == 1)
        s.rowDim = 0;
    if (n >= 2)
        s.rowDim = n - 2, s.colDim = n - 1;
    return s;
}

std::int64_t TensorSlice::numel() const {
    std::int64_t n = 1;
    for (auto d : shape)
        n *= d;
    return n;
}

TensorSlice::Layout TensorSlice::layout() const {
    Layout l;
    std::int64_t stride = 1;  // C order: the last dimension is contiguous
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
        const auto u = static_cast<std::size_t>(d);
        if (d == rowDim)
            l.rowStride = stride;
        else if (d == colDim)
            l.colStride = stride;
        else
            l.base += (u < index.size() ? index[u] : 0) * stride;
        stride *= shape[u];
    }
    return l;
}

std::vector<int> TensorSlice::fixedDims() const {
    std::vector<int> dims;
    for (int d = 0; d < static_cast<int>(shape.size()); ++d)
        if (d != rowDim && d != colDim)
            dims.push_back(d);
    return dims;
}

void TensorSlice::setDims(int rows, int cols) {
    const int n = static_cast<int>(shape.size());
    rowDim = rows >= 0 && rows < n ? rows : -1;
    colDim = cols >= 0 && cols < n && cols != rowDim ? cols : -1;
    index.resize(shape.size(), 0);
}
