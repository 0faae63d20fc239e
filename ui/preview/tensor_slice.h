#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "tensordict/bytes.h"
#include "tensordict/dtype.h"
#include "tensordict/error.h"

// Which 2-D slice of an N-D tensor is on screen: one dimension runs down the
// rows, one across the columns, every other one is fixed at an index (h5web's
// dimension mapper). Elements are addressed in C order over the leaf's bytes.
struct TensorSlice {
    std::vector<std::int64_t> shape;
    int rowDim = -1;                  // -1: a single row
    int colDim = -1;                  // -1: a single column
    std::vector<std::int64_t> index;  // per dimension; used for the fixed ones

    // The default view of `shape`: the last two dimensions (a column for 1-D).
    static TensorSlice defaultFor(const std::vector<std::int64_t>& shape);

    std::int64_t rows() const { return rowDim >= 0 ? shape[static_cast<std::size_t>(rowDim)] : 1; }
    std::int64_t cols() const { return colDim >= 0 ? shape[static_cast<std::size_t>(colDim)] : 1; }
    std::int64_t numel() const;  // of the whole tensor
    std::int64_t sliceSize() const { return rows() * cols(); }
    // Flat C-order index of the element at (row, col) of the slice.
    std::int64_t elementIndex(std::int64_t row, std::int64_t col) const {
        return layout().at(row, col);
    }
    // The slice as an affine map over the flat index: computed once, then
    // each element costs two multiply-adds (no per-element allocation).
    struct Layout {
        std::int64_t base = 0;       // flat index of (0, 0)
        std::int64_t rowStride = 0;  // flat step from one row to the next
        std::int64_t colStride = 0;
        std::int64_t at(std::int64_t row, std::int64_t col) const {
            return base + row * rowStride + col * colStride;
        }
    };
    Layout layout() const;
    // The flat element range [first, end) that holds rows [firstRow,
    // endRow) of the slice at every column, and every index of `alsoDim`
    // (-1: none; the image's colour channels): what a reader must have.
    struct Span {
        std::int64_t first = 0, end = 0;
    };
    Span span(std::int64_t firstRow = 0, std::int64_t endRow = -1, int alsoDim = -1) const;
    // The spans that hold columns [firstCol, endCol) of rows [firstRow,
    // endRow), every `rowStep`th of them, and every index of `alsoDim`: a
    // span per row. What a reader of a few columns of long rows, or of
    // every 30th row, needs of a leaf read page by page.
    std::vector<Span> rowSpans(std::int64_t firstRow, std::int64_t endRow, std::int64_t rowStep,
                               std::int64_t firstCol, std::int64_t endCol, int alsoDim = -1) const;
    // The dimensions fixed at an index (neither rows nor columns).
    std::vector<int> fixedDims() const;
    // Moves rows/cols to other dimensions, keeping them distinct and valid.
    void setDims(int rows, int cols);
    bool operator==(const TensorSlice& o) const {
        return shape == o.shape && rowDim == o.rowDim && colDim == o.colDim && index == o.index;
    }
};

// Reading a slice of a leaf read page by page (LeafBytes::pages: a large
// compressed leaf): its pages are filled on a worker and stay while held.
// For bytes that are all there, nothing to do.
struct SliceHold {
    std::shared_ptr<const void> hold;
    std::optional<tensordict::Failure> failure;  // why the read failed
    bool cancelled = false;                      // `cancel` was set
    bool failed() const { return failure.has_value(); }
    bool ok() const { return !failure && !cancelled; }
};
// Fills the bytes of `span` (call it on a worker; it may inflate).
SliceHold requireSpan(const tensordict::LeafBytes& bytes, tensordict::DType dtype,
                      TensorSlice::Span span, const tensordict::CancelToken* cancel = nullptr);
// The same for several spans, their pages read concurrently.
SliceHold requireSpans(const tensordict::LeafBytes& bytes, tensordict::DType dtype,
                       const std::vector<TensorSlice::Span>& spans,
                       const tensordict::CancelToken* cancel = nullptr);
// The hold of bytes already filled, or nothing (no wait: for the GUI thread).
std::shared_ptr<const void> holdIfFilled(const tensordict::LeafBytes& bytes,
                                         tensordict::DType dtype, TensorSlice::Span span);
std::shared_ptr<const void> holdIfFilled(const tensordict::LeafBytes& bytes,
                                         tensordict::DType dtype,
                                         const std::vector<TensorSlice::Span>& spans);
