#include "cell_selection.h"

#include <algorithm>
#include <limits>

std::uint64_t CellSelection::Range::cellCount() const {
    if (isEmpty())
        return 0;
    const auto r = static_cast<std::uint64_t>(rowCount());
    const auto c = static_cast<std::uint64_t>(colCount());
    if (c != 0 && r > std::numeric_limits<std::uint64_t>::max() / c)
        return std::numeric_limits<std::uint64_t>::max();
    return r * c;
}

CellSelection::Range CellSelection::Range::intersected(const Range& other) const {
    return {std::max(top, other.top), std::max(left, other.left), std::min(bottom, other.bottom),
            std::min(right, other.right)};
}

void CellSelection::clear() {
    ranges_.clear();
    anchor_.reset();
}

void CellSelection::select(Cell cell) {
    ranges_ = {{cell.row, cell.col, cell.row, cell.col}};
    anchor_ = cell;
}

void CellSelection::extendTo(Cell cell) {
    if (!anchor_)
        return select(cell);
    const Range extended{std::min(anchor_->row, cell.row), std::min(anchor_->col, cell.col),
                         std::max(anchor_->row, cell.row), std::max(anchor_->col, cell.col)};
    if (ranges_.empty())
        ranges_.push_back(extended);
    else
        ranges_.back() = extended;
}

void CellSelection::add(Cell cell) {
    ranges_.push_back({cell.row, cell.col, cell.row, cell.col});
    anchor_ = cell;
}

void CellSelection::selectAll(std::int64_t rows, std::int64_t cols) {
    if (rows <= 0 || cols <= 0)
        return clear();
    ranges_ = {{0, 0, rows - 1, cols - 1}};
    anchor_ = Cell{0, 0};
}

bool CellSelection::contains(std::int64_t row, std::int64_t col) const {
    return std::any_of(ranges_.begin(), ranges_.end(),
                       [&](const Range& r) { return r.contains(row, col); });
}

CellSelection::Range CellSelection::bounds() const {
    if (ranges_.empty())
        return {};
    Range b = ranges_.front();
    for (const Range& r : ranges_) {
        b.top = std::min(b.top, r.top);
        b.left = std::min(b.left, r.left);
        b.bottom = std::max(b.bottom, r.bottom);
        b.right = std::max(b.right, r.right);
    }
    return b;
}
