#pragma once

#include <QAbstractTableModel>

#include "tensor_slice.h"
#include "tensordict/compare.h"
#include "tensordict/element.h"
#include "tensordict/node.h"

// The values of one 2-D slice of a tensor leaf, seen through a window: the
// model holds only the rows and columns on screen (firstRow.., firstCol..),
// so a slice of billions of rows costs nothing to show. Cells are decoded
// from the mapped bytes when painted; nothing is copied.
class TensorTableModel : public QAbstractTableModel {
    Q_OBJECT

public:
    explicit TensorTableModel(QObject* parent = nullptr);

    void setLeaf(tensordict::DType dtype, tensordict::LeafBytes bytes, const TensorSlice& slice);
    void clear();
    void setSlice(const TensorSlice& slice);
    const TensorSlice& slice() const { return slice_; }
    bool hasLeaf() const { return bytes_.data != nullptr || slice_.numel() == 0; }

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
    enum class Shown { Leaf, Other, Difference };
    void setOther(tensordict::DType dtype, tensordict::LeafBytes bytes,
                  const tensordict::Tolerance& tolerance);
    bool hasOther() const { return other_.data != nullptr; }
    void setShown(Shown shown);
    Shown shown() const { return shown_; }
    // Whether the elements at slice coordinates (row, col) differ (false without another leaf).
    bool differs(std::int64_t row, std::int64_t col) const;

    // The text of the element at slice coordinates (row, col), as shown.
    QString text(std::int64_t row, std::int64_t col) const { return text(row, col, shown_); }
    QString text(std::int64_t row, std::int64_t col, Shown which) const;
    // The given cells (window coordinates) as tab-separated lines.
    QString toTsv(const QModelIndexList& cells) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

Q_SIGNALS:
    // The leaf's file lost data while a cell was read (emitted once, queued).
    void sourceChanged();

private:
    int windowRows() const;
    int windowCols() const;
    // Copies element `flat` of a leaf through the guarded path (the file may
    // have shrunk under the mapping); false, and sourceChanged(), if it did.
    bool readElement(const tensordict::LeafBytes& bytes, tensordict::DType dtype, std::int64_t flat,
                     std::byte* out) const;
    QString differenceText(const std::byte* a, const std::byte* b) const;

    bool active_ = false;
    tensordict::DType dtype_ = tensordict::DType::Float32;
    tensordict::LeafBytes bytes_;
    mutable bool sourceLost_ = false;
    TensorSlice slice_;
    TensorSlice::Layout layout_;  // slice_ as an affine map, computed once per slice
    std::int64_t firstRow_ = 0, firstCol_ = 0;
    int rows_ = 50, cols_ = 10;
    tensordict::FloatFormat format_ = tensordict::FloatFormat::Shortest;
    int precision_ = 6;
    tensordict::DType otherDtype_ = tensordict::DType::Float32;
    tensordict::LeafBytes other_;
    tensordict::Tolerance tolerance_;
    Shown shown_ = Shown::Leaf;
};
