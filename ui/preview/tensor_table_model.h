#pragma once

#include <QAbstractTableModel>
#include <vector>

#include "cell_text.h"
#include "job_tracker.h"
#include "tensor_slice.h"
#include "tensordict/compare.h"
#include "tensordict/datasets.h"
#include "tensordict/element.h"
#include "tensordict/node.h"

// The values of one 2-D slice of a tensor leaf, seen through a window: the
// model holds only the rows and columns on screen (firstRow.., firstCol..),
// so a slice of billions of rows costs nothing to show. Cells are decoded
// from the mapped bytes when painted; nothing is copied. Each column on
// screen reads in one notation (CellText::columnNotation).
class TensorTableModel : public QAbstractTableModel {
    Q_OBJECT

public:
    explicit TensorTableModel(QObject* parent = nullptr);

    void setLeaf(tensordict::DType dtype, tensordict::LeafBytes bytes, const TensorSlice& slice);
    void clear();
    void setSlice(const TensorSlice& slice);
    const TensorSlice& slice() const { return slice_; }
    bool hasLeaf() const { return leafBytes_.data != nullptr || slice_.numel() == 0; }
    // The window's bytes are being read (a leaf read page by page): its
    // cells are blank until filled() (GUI never waits on it).
    bool isFilling() const { return filling_; }

    // The window on screen, in slice coordinates.
    void setWindow(std::int64_t firstRow, std::int64_t firstCol, int rows, int cols);
    std::int64_t firstRow() const { return firstRow_; }
    std::int64_t firstCol() const { return firstCol_; }
    std::int64_t totalRows() const { return active_ ? slice_.rows() : 0; }
    std::int64_t totalCols() const { return active_ ? slice_.cols() : 0; }

    void setFloatFormat(tensordict::FloatFormat format, int precision);

    // Comparison with another leaf of the same shape (B; this one is A):
    // cells whose elements are not close within `tolerance` are highlighted,
    // tool tips show A, B and A - B, and setShown() picks what cells show.
    // setLeaf() and clear() drop it.
    using Shown = CellText::Shown;
    void setOther(tensordict::DType dtype, tensordict::LeafBytes bytes,
                  const tensordict::Tolerance& tolerance);
    bool hasOther() const { return cells_.hasOther(); }
    void setShown(Shown shown);
    Shown shown() const { return cells_.shown; }
    // Whether the elements at slice coordinates (row, col) differ (false without another leaf).
    bool differs(std::int64_t row, std::int64_t col) const;

    // The text of the element at slice coordinates (row, col), as shown, in
    // its column's notation over the rows on screen.
    QString text(std::int64_t row, std::int64_t col) const { return text(row, col, shown()); }
    QString text(std::int64_t row, std::int64_t col, Shown which) const;
    // The selected cells as tab-separated lines (CellText::tsv).
    QString toTsv(const CellSelection& selection) const;
    // How the cells read, over the whole leaf, to build text on a worker:
    // of a leaf read page by page, only what requireSpans() made readable.
    CellText cells() const {
        CellText all = cells_;
        all.bytes = leafBytes_;
        return all;
    }
    // The leaf is read page by page: cells outside the window need a read.
    bool readsPageByPage() const { return leafBytes_.pages != nullptr; }

    // The leaf is a replay buffer's (datasets.h), its first dimension the
    // buffer's rows: the row header gives each row's place oldest first
    // and in the storage, and rows that are not valid read grey. Dropped
    // by setLeaf() and clear().
    void setReplayRows(std::optional<tensordict::ReplayBufferFacts> facts);
    // The leaf is a stack of chunks' (datasets.h): the row header names the
    // chunk of each row and its row there. Dropped by setLeaf() and clear().
    void setStackRows(std::optional<tensordict::StackFacts> facts);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

Q_SIGNALS:
    // The leaf's file lost data while a cell was read (emitted once, queued).
    void sourceChanged();
    // The window's bytes arrived and its cells show.
    void filled();

private:
    int windowRows() const;
    int windowCols() const;
    // Every cell of the window changed its text (format, shown, notation).
    void windowTextChanged();
    // The storage row of the buffer row of cell (row, col), when the leaf
    // is a replay buffer's.
    std::optional<std::int64_t> storageRowOf(std::int64_t row, std::int64_t col) const;
    // Decides the notation of each column on screen.
    void updateNotation();
    tensordict::Notation notationOf(std::int64_t col, Shown which) const;
    // Emits sourceChanged() once (queued) when `lost` says the file lost bytes.
    void noteLost(bool lost) const;
    // Holds the pages of the window's cells (and a margin) of a leaf read
    // page by page: at once when they are there, else after a worker
    // filled them (cells blank meanwhile).
    void holdWindow();
    bool windowIsHeld() const;
    // Whether the cell at slice coordinates (row, col) may be read now: its
    // pages are held (a leaf read page by page), or the leaf is all there.
    bool isHeld(std::int64_t row, std::int64_t col) const;

    bool active_ = false;
    CellText cells_;  // its bytes: the leaf's once the slice can be read
    tensordict::LeafBytes leafBytes_;
    std::shared_ptr<const void> sliceHold_;  // the pages of held_, kept
    struct Region {
        std::int64_t firstRow = 0, endRow = 0, firstCol = 0, endCol = 0;
        bool contains(std::int64_t rowsFrom, std::int64_t rowsTo, std::int64_t colsFrom,
                      std::int64_t colsTo) const {
            return rowsFrom >= firstRow && rowsTo <= endRow && colsFrom >= firstCol &&
                   colsTo <= endCol;
        }
    } held_;
    bool filling_ = false;
    JobTracker<SliceHold> fill_{this};
    mutable bool sourceLost_ = false;
    TensorSlice slice_;
    std::int64_t firstRow_ = 0, firstCol_ = 0;
    int rows_ = 50, cols_ = 10;
    std::vector<tensordict::Notation> notation_;  // of the window's columns, as shown
    std::optional<tensordict::ReplayBufferFacts> replay_;
    std::optional<tensordict::StackFacts> stack_;
};
