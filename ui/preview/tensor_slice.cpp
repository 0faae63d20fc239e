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

std::vector<std::int64_t> TensorSlice::strides() const {
    std::vector<std::int64_t> st(shape.size(), 1);
    for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d)
        st[static_cast<std::size_t>(d)] =
            st[static_cast<std::size_t>(d) + 1] * shape[static_cast<std::size_t>(d) + 1];
    return st;
}

std::int64_t TensorSlice::elementIndex(std::int64_t row, std::int64_t col) const {
    const auto st = strides();
    std::int64_t flat = 0;
    for (std::size_t d = 0; d < shape.size(); ++d) {
        const int dim = static_cast<int>(d);
        const std::int64_t i = dim == rowDim ? row : dim == colDim ? col : index[d];
        flat += i * st[d];
    }
    return flat;
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
