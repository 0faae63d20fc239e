#include "tensor_table_model.h"

#include <QBrush>
#include <QColor>
#include <QFontDatabase>
#include <cmath>
#include <utility>

#include "tensordict/guarded_read.h"

TensorTableModel::TensorTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void TensorTableModel::setLeaf(tensordict::DType dtype, tensordict::LeafBytes bytes,
                               const TensorSlice& slice) {
    beginResetModel();
    active_ = true;
    dtype_ = dtype;
    bytes_ = std::move(bytes);
    other_ = {};
    shown_ = Shown::Leaf;
    sourceLost_ = false;
    slice_ = slice;
    layout_ = slice_.layout();
    firstRow_ = firstCol_ = 0;
    endResetModel();
}

void TensorTableModel::clear() {
    beginResetModel();
    active_ = false;
    bytes_ = {};
    other_ = {};
    shown_ = Shown::Leaf;
    slice_ = {};
    layout_ = {};
    firstRow_ = firstCol_ = 0;
    endResetModel();
}

void TensorTableModel::setSlice(const TensorSlice& slice) {
    beginResetModel();
    slice_ = slice;
    layout_ = slice_.layout();
    firstRow_ = std::min<std::int64_t>(firstRow_, std::max<std::int64_t>(0, slice_.rows() - 1));
    firstCol_ = std::min<std::int64_t>(firstCol_, std::max<std::int64_t>(0, slice_.cols() - 1));
    endResetModel();
}

int TensorTableModel::windowRows() const {
    return active_ ? static_cast<int>(std::clamp<std::int64_t>(slice_.rows() - firstRow_, 0, rows_))
                   : 0;
}

int TensorTableModel::windowCols() const {
    return active_ ? static_cast<int>(std::clamp<std::int64_t>(slice_.cols() - firstCol_, 0, cols_))
                   : 0;
}

void TensorTableModel::setWindow(std::int64_t firstRow, std::int64_t firstCol, int rows, int cols) {
    firstRow = std::clamp<std::int64_t>(firstRow, 0, std::max<std::int64_t>(0, totalRows() - 1));
    firstCol = std::clamp<std::int64_t>(firstCol, 0, std::max<std::int64_t>(0, totalCols() - 1));
    rows = std::max(rows, 1);
    cols = std::max(cols, 1);
    const int oldRows = windowRows(), oldCols = windowCols();
    const bool sizeChanged = rows != rows_ || cols != cols_;
    if (firstRow == firstRow_ && firstCol == firstCol_ && !sizeChanged)
        return;
    const std::int64_t newRows = std::clamp<std::int64_t>(totalRows() - firstRow, 0, rows);
    const std::int64_t newCols = std::clamp<std::int64_t>(totalCols() - firstCol, 0, cols);
    if (newRows != oldRows || newCols != oldCols) {
        beginResetModel();
        firstRow_ = firstRow, firstCol_ = firstCol, rows_ = rows, cols_ = cols;
        endResetModel();
        return;
    }
    firstRow_ = firstRow, firstCol_ = firstCol, rows_ = rows, cols_ = cols;
    if (oldRows > 0 && oldCols > 0) {
        Q_EMIT dataChanged(index(0, 0), index(oldRows - 1, oldCols - 1));
        Q_EMIT headerDataChanged(Qt::Vertical, 0, oldRows - 1);
        Q_EMIT headerDataChanged(Qt::Horizontal, 0, oldCols - 1);
    }
}

void TensorTableModel::setFloatFormat(tensordict::FloatFormat format, int precision) {
    format_ = format;
    precision_ = precision;
    if (windowRows() > 0 && windowCols() > 0)
        Q_EMIT dataChanged(index(0, 0), index(windowRows() - 1, windowCols() - 1));
}

void TensorTableModel::setOther(tensordict::DType dtype, tensordict::LeafBytes bytes,
                                const tensordict::Tolerance& tolerance) {
    beginResetModel();
    otherDtype_ = dtype;
    other_ = std::move(bytes);
    tolerance_ = tolerance;
    endResetModel();
}

void TensorTableModel::setShown(Shown shown) {
    shown_ = shown;
    if (windowRows() > 0 && windowCols() > 0)
        Q_EMIT dataChanged(index(0, 0), index(windowRows() - 1, windowCols() - 1));
}

bool TensorTableModel::readElement(const tensordict::LeafBytes& bytes, tensordict::DType dtype,
                                   std::int64_t flat, std::byte* out) const {
    const std::size_t item = tensordict::itemSize(dtype);
    const auto offset = static_cast<std::size_t>(flat) * item;
    if (sourceLost_ || offset + item > bytes.size ||
        !tensordict::tryGuardedCopy(out, bytes.data.get() + offset, item)) {
        if (!std::exchange(sourceLost_, true))
            QMetaObject::invokeMethod(const_cast<TensorTableModel*>(this),
                                      &TensorTableModel::sourceChanged, Qt::QueuedConnection);
        return false;
    }
    return true;
}

QString TensorTableModel::text(std::int64_t row, std::int64_t col, Shown which) const {
    if (!active_ || !bytes_.data || row < 0 || col < 0 || row >= totalRows() || col >= totalCols())
        return {};
    if (!other_.data)
        which = Shown::Leaf;
    const std::int64_t flat = layout_.at(row, col);
    std::byte a[16], b[16];
    if (which != Shown::Other && !readElement(bytes_, dtype_, flat, a))
        return QStringLiteral("?");
    if (which != Shown::Leaf && !readElement(other_, otherDtype_, flat, b))
        return QStringLiteral("?");
    switch (which) {
        case Shown::Leaf:
            return QString::fromStdString(
                tensordict::formatElement(a, dtype_, format_, precision_));
        case Shown::Other:
            return QString::fromStdString(
                tensordict::formatElement(b, otherDtype_, format_, precision_));
        case Shown::Difference:
            return differenceText(a, b);
    }
    return {};
}

QString TensorTableModel::differenceText(const std::byte* a, const std::byte* b) const {
    using tensordict::DTypeCategory;
    const auto category = [](tensordict::DType d) { return tensordict::dtypeInfo(d).category; };
    const auto integral = [&](tensordict::DType d) {
        return category(d) != DTypeCategory::Float && category(d) != DTypeCategory::Complex;
    };
    if (category(dtype_) == DTypeCategory::Complex ||
        category(otherDtype_) == DTypeCategory::Complex) {
        const auto x = tensordict::elementAsComplex(a, dtype_);
        const auto y = tensordict::elementAsComplex(b, otherDtype_);
        const double d[2] = {x.re - y.re, x.im - y.im};
        return QString::fromStdString(
            tensordict::formatElement(reinterpret_cast<const std::byte*>(d),
                                      tensordict::DType::Complex128, format_, precision_));
    }
    const double x = tensordict::elementAsDouble(a, dtype_);
    const double y = tensordict::elementAsDouble(b, otherDtype_);
    if (integral(dtype_) && integral(otherDtype_)) {
        const auto d = static_cast<std::int64_t>(x) - static_cast<std::int64_t>(y);
        return QString::fromStdString(tensordict::formatElement(
            reinterpret_cast<const std::byte*>(&d), tensordict::DType::Int64, format_, precision_));
    }
    const double d = x == y ? 0.0 : x - y;  // equal infinities differ by nothing
    return QString::fromStdString(tensordict::formatElement(
        reinterpret_cast<const std::byte*>(&d), tensordict::DType::Float64, format_, precision_));
}

bool TensorTableModel::differs(std::int64_t row, std::int64_t col) const {
    if (!active_ || !bytes_.data || !other_.data || row < 0 || col < 0 || row >= totalRows() ||
        col >= totalCols())
        return false;
    const std::int64_t flat = layout_.at(row, col);
    std::byte a[16], b[16];
    if (!readElement(bytes_, dtype_, flat, a) || !readElement(other_, otherDtype_, flat, b))
        return false;
    return !tensordict::elementsClose(a, dtype_, b, otherDtype_, tolerance_);
}

QString TensorTableModel::toTsv(const QModelIndexList& cells) const {
    if (cells.isEmpty())
        return {};
    int top = INT_MAX, left = INT_MAX, bottom = -1, right = -1;
    for (const QModelIndex& c : cells) {
        top = std::min(top, c.row()), bottom = std::max(bottom, c.row());
        left = std::min(left, c.column()), right = std::max(right, c.column());
    }
    QSet<QPair<int, int>> selected;
    for (const QModelIndex& c : cells)
        selected.insert({c.row(), c.column()});
    QStringList lines;
    for (int r = top; r <= bottom; ++r) {
        QStringList fields;
        for (int c = left; c <= right; ++c)
            fields << (selected.contains({r, c}) ? text(firstRow_ + r, firstCol_ + c) : QString());
        lines << fields.join('\t');
    }
    return lines.join('\n') + '\n';
}

int TensorTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : windowRows();
}

int TensorTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : windowCols();
}

QVariant TensorTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid())
        return {};
    const std::int64_t row = firstRow_ + index.row(), col = firstCol_ + index.column();
    switch (role) {
        case Qt::DisplayRole:
            return text(row, col);
        case Qt::ToolTipRole:
            if (other_.data)
                return tr("A: %1\nB: %2\nA − B: %3")
                    .arg(text(row, col, Shown::Leaf), text(row, col, Shown::Other),
                         text(row, col, Shown::Difference));
            return text(row, col);
        case Qt::BackgroundRole:
            if (differs(row, col))
                return QBrush(QColor(0xff, 0xc8, 0x7a));  // the comparison's amber, stronger
            return {};
        case Qt::TextAlignmentRole:
            return int(Qt::AlignRight | Qt::AlignVCenter);
        case Qt::ForegroundRole: {
            const QString t = text(row, col);
            if (t == "nan" || t.endsWith("inf"))
                return QBrush(QColor(0xc0, 0x1c, 0x28));
            return {};
        }
    }
    return {};
}

QVariant TensorTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (role != Qt::DisplayRole)
        return {};
    if (orientation == Qt::Vertical)
        return slice_.rowDim >= 0 ? QString::number(firstRow_ + section) : QString("0");
    return slice_.colDim >= 0 ? QString::number(firstCol_ + section) : QString("value");
}
