#include "tensor_slice.h"

#include <algorithm>

#include "tensordict/cancel.h"
#include "tensordict/leaf_pages.h"

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

TensorSlice::Span TensorSlice::span(std::int64_t firstRow, std::int64_t endRow, int alsoDim) const {
    if (endRow < 0)
        endRow = rows();
    if (numel() == 0 || firstRow >= endRow || cols() == 0)
        return {};
    // C order: the flat index grows with every coordinate, so the first and
    // the last element bound the span.
    TensorSlice low = *this, high = *this;
    if (alsoDim >= 0 && alsoDim != rowDim && alsoDim != colDim &&
        std::size_t(alsoDim) < index.size()) {
        low.index[std::size_t(alsoDim)] = 0;
        high.index[std::size_t(alsoDim)] = shape[std::size_t(alsoDim)] - 1;
    }
    return {low.layout().at(firstRow, 0), high.layout().at(endRow - 1, cols() - 1) + 1};
}

std::vector<TensorSlice::Span> TensorSlice::rowSpans(std::int64_t firstRow, std::int64_t endRow,
                                                     std::int64_t rowStep, std::int64_t firstCol,
                                                     std::int64_t endCol, int alsoDim) const {
    firstRow = std::max<std::int64_t>(firstRow, 0), endRow = std::min(endRow, rows());
    firstCol = std::max<std::int64_t>(firstCol, 0), endCol = std::min(endCol, cols());
    std::vector<Span> spans;
    if (numel() == 0 || firstRow >= endRow || firstCol >= endCol)
        return spans;
    TensorSlice low = *this, high = *this;
    if (alsoDim >= 0 && alsoDim != rowDim && alsoDim != colDim &&
        std::size_t(alsoDim) < index.size()) {
        low.index[std::size_t(alsoDim)] = 0;
        high.index[std::size_t(alsoDim)] = shape[std::size_t(alsoDim)] - 1;
    }
    const Layout first = low.layout(), last = high.layout();
    for (std::int64_t row = firstRow; row < endRow; row += std::max<std::int64_t>(rowStep, 1))
        spans.push_back({first.at(row, firstCol), last.at(row, endCol - 1) + 1});
    return spans;
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

SliceHold requireSpan(const tensordict::LeafBytes& bytes, tensordict::DType dtype,
                      TensorSlice::Span span, const tensordict::CancelToken* cancel) {
    return requireSpans(bytes, dtype, {span}, cancel);
}

SliceHold requireSpans(const tensordict::LeafBytes& bytes, tensordict::DType dtype,
                       const std::vector<TensorSlice::Span>& spans,
                       const tensordict::CancelToken* cancel) {
    SliceHold out;
    if (!bytes.pages)
        return out;
    const std::uint64_t item = tensordict::itemSize(dtype);
    std::vector<tensordict::LeafPages::Range> ranges;
    ranges.reserve(spans.size());
    for (const TensorSlice::Span& s : spans)
        if (s.end > s.first)
            ranges.push_back(
                {std::uint64_t(s.first) * item, std::uint64_t(s.end - s.first) * item});
    try {
        out.hold = bytes.pages->requireAll(ranges, cancel);
    } catch (const tensordict::Cancelled&) {
        out.cancelled = true;
    } catch (const std::exception& e) {
        out.failure = tensordict::failureOf(e);
    }
    return out;
}

std::shared_ptr<const void> holdIfFilled(const tensordict::LeafBytes& bytes,
                                         tensordict::DType dtype,
                                         const std::vector<TensorSlice::Span>& spans) {
    if (!bytes.pages)
        return std::make_shared<int>(0);
    auto holds = std::make_shared<std::vector<std::shared_ptr<const void>>>();
    for (const TensorSlice::Span& s : spans) {
        auto hold = holdIfFilled(bytes, dtype, s);
        if (!hold)
            return nullptr;
        holds->push_back(std::move(hold));
    }
    return holds;
}

std::shared_ptr<const void> holdIfFilled(const tensordict::LeafBytes& bytes,
                                         tensordict::DType dtype, TensorSlice::Span span) {
    if (!bytes.pages || span.end <= span.first)
        return std::make_shared<int>(0);
    const std::uint64_t item = tensordict::itemSize(dtype);
    return bytes.pages->holdIfFilled(std::uint64_t(span.first) * item,
                                     std::uint64_t(span.end - span.first) * item);
}
