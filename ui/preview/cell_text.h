#pragma once

#include <QString>
#include <cstdint>
#include <functional>

#include "cell_selection.h"
#include "tensor_slice.h"
#include "tensordict/bytes.h"
#include "tensordict/cancel.h"
#include "tensordict/compare.h"
#include "tensordict/element.h"

// How the cells of one slice read: the leaf's elements (in a comparison,
// the other leaf's or their difference) as text, every column in one
// notation. A plain value over shared bytes: a copy of it builds the text
// of a large selection on a worker while the table goes on.
//
// Reads go through the guarded path: when the leaf's file lost the bytes
// (it shrank under its mapping) a cell reads "?" and `*lost` is set.
struct CellText {
    enum class Shown { Leaf, Other, Difference };

    tensordict::DType dtype = tensordict::DType::Float32;
    tensordict::LeafBytes bytes;
    tensordict::DType otherDtype = tensordict::DType::Float32;
    tensordict::LeafBytes other;  // empty: no comparison
    tensordict::Tolerance tolerance;
    TensorSlice::Layout layout;
    std::int64_t rows = 0, cols = 0;
    tensordict::FloatFormat format = tensordict::FloatFormat::Shortest;
    int precision = 6;
    Shown shown = Shown::Leaf;

    bool hasOther() const { return other.data != nullptr; }
    bool isCell(std::int64_t row, std::int64_t col) const {
        return bytes.data && row >= 0 && col >= 0 && row < rows && col < cols;
    }
    // (row, col) as `which` shows it (Leaf without another leaf), in `notation`.
    QString text(std::int64_t row, std::int64_t col, Shown which, tensordict::Notation notation,
                 bool* lost) const;
    // The notation that rows first..first + count - 1 of column `col` share
    // as `which` shows them: scientific when one of them needs it (as
    // Python's repr decides), else positional. Auto unless the format is
    // Shortest and the values are floats.
    tensordict::Notation columnNotation(std::int64_t col, std::int64_t first, std::int64_t count,
                                        Shown which, bool* lost) const;
    // Whether the two leaves' elements at (row, col) are not close.
    bool differs(std::int64_t row, std::int64_t col, bool* lost) const;

    // The selected cells as tab-separated lines, as shown: the selection's
    // bounding rectangle, unselected cells empty, each column in one
    // notation. `progress` (0..1) is told now and then; empty when cancelled.
    QString tsv(const CellSelection& selection, const tensordict::CancelToken& cancel, bool* lost,
                const std::function<void(double)>& progress = {}) const;

private:
    // Both elements at (row, col) as needed by `which`; false when lost.
    bool read(std::int64_t row, std::int64_t col, Shown which, std::byte* a, std::byte* b,
              bool* lost) const;
    tensordict::DTypeCategory category(Shown which) const;
};
