#pragma once

#include <cstdint>
#include <optional>
#include <vector>

// The selected cells of a table's slice, in slice coordinates (rows and
// columns of the whole slice, not of the window on screen), so that a
// selection stays on its data while the window scrolls, pages or jumps to
// a row. Rectangles, as a spreadsheet makes them: a click starts one,
// Shift extends the last one from its anchor, Ctrl adds another.
class CellSelection {
public:
    struct Cell {
        std::int64_t row = 0, col = 0;
        bool operator==(const Cell& o) const { return row == o.row && col == o.col; }
    };
    // Rows top..bottom and columns left..right, inclusive.
    struct Range {
        std::int64_t top = 0, left = 0, bottom = -1, right = -1;
        bool isEmpty() const { return bottom < top || right < left; }
        bool contains(std::int64_t row, std::int64_t col) const {
            return row >= top && row <= bottom && col >= left && col <= right;
        }
        std::int64_t rowCount() const { return isEmpty() ? 0 : bottom - top + 1; }
        std::int64_t colCount() const { return isEmpty() ? 0 : right - left + 1; }
        // Saturates rather than wraps: a slice can have 2^62 rows.
        std::uint64_t cellCount() const;
        // The part of this range inside `other` (empty when none).
        Range intersected(const Range& other) const;
    };

    void clear();
    // A click on `cell`: only it is selected, and it anchors what Shift extends.
    void select(Cell cell);
    // Shift-click, a drag or Shift+arrow to `cell`: the last range runs from its anchor to it.
    void extendTo(Cell cell);
    // Ctrl-click on `cell`: one more range, anchored there.
    void add(Cell cell);
    // Every cell of a slice of `rows` x `cols`.
    void selectAll(std::int64_t rows, std::int64_t cols);

    bool isEmpty() const { return ranges_.empty(); }
    bool contains(std::int64_t row, std::int64_t col) const;
    const std::vector<Range>& ranges() const { return ranges_; }
    std::optional<Cell> anchor() const { return anchor_; }
    // The smallest range that holds every selected cell (empty when none is).
    Range bounds() const;

private:
    std::vector<Range> ranges_;
    std::optional<Cell> anchor_;
};
