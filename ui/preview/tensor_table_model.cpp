#include "tensor_table_model.h"

#include <QBrush>
#include <QColor>
#include <QFontDatabase>
#include <cmath>
#include <utility>

TensorTableModel::TensorTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void TensorTableModel::setLeaf(tensordict::DType dtype, tensordict::LeafBytes bytes,
                               const TensorSlice& slice) {
    replay_.reset();
    stack_.reset();
    beginResetModel();
    active_ = true;
    const CellText kept = cells_;
    cells_ = {};
    cells_.format = kept.format;
    cells_.precision = kept.precision;
    cells_.dtype = dtype;
    leafBytes_ = std::move(bytes);
    sourceLost_ = false;
    slice_ = slice;
    cells_.layout = slice_.layout();
    cells_.rows = slice_.rows();
    cells_.cols = slice_.cols();
    firstRow_ = firstCol_ = 0;
    holdWindow();
    updateNotation();
    endResetModel();
}

void TensorTableModel::holdWindow() {
    fill_.cancel();
    sliceHold_.reset();
    filling_ = false;
    cells_.bytes = leafBytes_;
    if (!leafBytes_.pages)
        return;
    // The window's cells and a margin around it, so that a short scroll
    // needs no read: a few MiB of a leaf of any size.
    held_ = {std::max<std::int64_t>(0, firstRow_ - rows_ / 2),
             std::min(slice_.rows(), firstRow_ + rows_ + rows_ / 2),
             std::max<std::int64_t>(0, firstCol_ - cols_),
             std::min(slice_.cols(), firstCol_ + 2 * std::int64_t(cols_))};
    const std::vector<TensorSlice::Span> spans =
        slice_.rowSpans(held_.firstRow, held_.endRow, 1, held_.firstCol, held_.endCol);
    if ((sliceHold_ = holdIfFilled(leafBytes_, cells_.dtype, spans)))
        return;
    cells_.bytes = {};
    filling_ = true;
    fill_.start(
        [bytes = leafBytes_, dtype = cells_.dtype, spans](const tensordict::CancelToken& cancel) {
            return requireSpans(bytes, dtype, spans, &cancel);
        },
        [this](const SliceHold& held) {
            filling_ = false;
            if (held.failed()) {
                noteLost(true);
                return;
            }
            beginResetModel();
            sliceHold_ = held.hold;
            cells_.bytes = leafBytes_;
            updateNotation();
            endResetModel();
            Q_EMIT filled();
        });
}

bool TensorTableModel::windowIsHeld() const {
    return !leafBytes_.pages ||
           held_.contains(firstRow_, firstRow_ + windowRows(), firstCol_, firstCol_ + windowCols());
}

bool TensorTableModel::isHeld(std::int64_t row, std::int64_t col) const {
    return !leafBytes_.pages || held_.contains(row, row + 1, col, col + 1);
}

void TensorTableModel::clear() {
    beginResetModel();
    active_ = false;
    replay_.reset();
    stack_.reset();
    const CellText kept = cells_;
    cells_ = {};
    cells_.format = kept.format;
    cells_.precision = kept.precision;
    fill_.cancel();
    leafBytes_ = {};
    sliceHold_.reset();
    filling_ = false;
    slice_ = {};
    firstRow_ = firstCol_ = 0;
    notation_.clear();
    endResetModel();
}

void TensorTableModel::setSlice(const TensorSlice& slice) {
    beginResetModel();
    slice_ = slice;
    cells_.layout = slice_.layout();
    cells_.rows = slice_.rows();
    cells_.cols = slice_.cols();
    firstRow_ = std::min<std::int64_t>(firstRow_, std::max<std::int64_t>(0, slice_.rows() - 1));
    firstCol_ = std::min<std::int64_t>(firstCol_, std::max<std::int64_t>(0, slice_.cols() - 1));
    holdWindow();
    updateNotation();
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
        if (!windowIsHeld())
            holdWindow();
        updateNotation();
        endResetModel();
        return;
    }
    firstRow_ = firstRow, firstCol_ = firstCol, rows_ = rows, cols_ = cols;
    if (!windowIsHeld())
        holdWindow();
    updateNotation();
    if (oldRows > 0 && oldCols > 0) {
        Q_EMIT dataChanged(index(0, 0), index(oldRows - 1, oldCols - 1));
        Q_EMIT headerDataChanged(Qt::Vertical, 0, oldRows - 1);
        Q_EMIT headerDataChanged(Qt::Horizontal, 0, oldCols - 1);
    }
}

void TensorTableModel::windowTextChanged() {
    updateNotation();
    if (windowRows() > 0 && windowCols() > 0)
        Q_EMIT dataChanged(index(0, 0), index(windowRows() - 1, windowCols() - 1));
}

void TensorTableModel::setFloatFormat(tensordict::FloatFormat format, int precision) {
    cells_.format = format;
    cells_.precision = precision;
    windowTextChanged();
}

void TensorTableModel::setOther(tensordict::DType dtype, tensordict::LeafBytes bytes,
                                const tensordict::Tolerance& tolerance) {
    beginResetModel();
    cells_.otherDtype = dtype;
    cells_.other = std::move(bytes);
    cells_.tolerance = tolerance;
    updateNotation();
    endResetModel();
}

void TensorTableModel::setShown(Shown shown) {
    cells_.shown = shown;
    windowTextChanged();
}

void TensorTableModel::updateNotation() {
    notation_.clear();
    bool lost = false;
    for (int c = 0; c < windowCols(); ++c)
        notation_.push_back(
            cells_.columnNotation(firstCol_ + c, firstRow_, windowRows(), shown(), &lost));
    noteLost(lost);
}

tensordict::Notation TensorTableModel::notationOf(std::int64_t col, Shown which) const {
    const std::int64_t c = col - firstCol_;
    if (which == shown() && c >= 0 && c < static_cast<std::int64_t>(notation_.size()))
        return notation_[static_cast<std::size_t>(c)];
    bool lost = false;
    const auto n = cells_.columnNotation(col, firstRow_, std::max(windowRows(), 1), which, &lost);
    noteLost(lost);
    return n;
}

void TensorTableModel::noteLost(bool lost) const {
    if (lost && !std::exchange(sourceLost_, true))
        QMetaObject::invokeMethod(const_cast<TensorTableModel*>(this),
                                  &TensorTableModel::sourceChanged, Qt::QueuedConnection);
}

QString TensorTableModel::text(std::int64_t row, std::int64_t col, Shown which) const {
    if (!active_ || sourceLost_ || !cells_.isCell(row, col) || !isHeld(row, col))
        return sourceLost_ && active_ && cells_.isCell(row, col) ? QStringLiteral("?") : QString();
    bool lost = false;
    const QString t = cells_.text(row, col, which, notationOf(col, which), &lost);
    noteLost(lost);
    return t;
}

QString TensorTableModel::toTsv(const CellSelection& selection) const {
    bool lost = false;
    const QString t = cells_.tsv(selection, tensordict::CancelToken(), &lost);
    noteLost(lost);
    return t;
}

bool TensorTableModel::differs(std::int64_t row, std::int64_t col) const {
    if (!active_ || sourceLost_ || !isHeld(row, col))
        return false;
    bool lost = false;
    const bool d = cells_.differs(row, col, &lost);
    noteLost(lost);
    return d;
}

int TensorTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : windowRows();
}

int TensorTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : windowCols();
}

void TensorTableModel::setReplayRows(std::optional<tensordict::ReplayBufferFacts> facts) {
    replay_ = std::move(facts);
    if (windowRows() > 0 && windowCols() > 0) {
        Q_EMIT headerDataChanged(Qt::Vertical, 0, windowRows() - 1);
        Q_EMIT dataChanged(index(0, 0), index(windowRows() - 1, windowCols() - 1));
    }
}

void TensorTableModel::setStackRows(std::optional<tensordict::StackFacts> facts) {
    stack_ = std::move(facts);
    if (windowRows() > 0)
        Q_EMIT headerDataChanged(Qt::Vertical, 0, windowRows() - 1);
}

std::optional<std::int64_t> TensorTableModel::storageRowOf(std::int64_t row,
                                                           std::int64_t col) const {
    if (!replay_ || slice_.shape.empty())
        return std::nullopt;
    const std::int64_t shown = slice_.rowDim == 0     ? row
                               : slice_.colDim == 0   ? col
                               : slice_.index.empty() ? 0
                                                      : slice_.index[0];
    return replay_->storageRowOf(shown);
}

QVariant TensorTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid())
        return {};
    const std::int64_t row = firstRow_ + index.row(), col = firstCol_ + index.column();
    const std::optional<std::int64_t> storageRow = storageRowOf(row, col);
    const bool notValid = storageRow && !replay_->isValid(*storageRow);
    switch (role) {
        case Qt::DisplayRole:
            return text(row, col);
        case Qt::ToolTipRole:
            if (hasOther())
                return tr("A: %1\nB: %2\nA − B: %3")
                    .arg(text(row, col, Shown::Leaf), text(row, col, Shown::Other),
                         text(row, col, Shown::Difference));
            if (notValid)
                return tr("%1\nNot valid: row %2 of the storage is past the buffer's fill level")
                    .arg(text(row, col))
                    .arg(*storageRow);
            return text(row, col);
        case Qt::BackgroundRole:
            if (differs(row, col))
                return QBrush(QColor(0xff, 0xc8, 0x7a));  // the comparison's amber, stronger
            if (notValid)
                return QBrush(QColor(0xec, 0xec, 0xec));
            return {};
        case Qt::TextAlignmentRole:
            return int(Qt::AlignRight | Qt::AlignVCenter);
        case Qt::ForegroundRole: {
            if (notValid)
                return QBrush(QColor(0x9a, 0x9a, 0x9a));
            const QString t = text(row, col);
            if (t == "nan" || t.endsWith("inf"))
                return QBrush(QColor(0xc0, 0x1c, 0x28));
            return {};
        }
    }
    return {};
}

QVariant TensorTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    // A replay buffer's rows: oldest first, and where in the storage.
    if (orientation == Qt::Vertical && replay_ && slice_.rowDim == 0) {
        const std::int64_t storageRow = replay_->storageRowOf(firstRow_ + section);
        const bool valid = replay_->isValid(storageRow);
        switch (role) {
            case Qt::DisplayRole:
                return valid ? QString("%1 · %2").arg(replay_->ageOf(storageRow)).arg(storageRow)
                             : QString("– · %1").arg(storageRow);
            case Qt::ToolTipRole:
                return valid ? tr("Row %1 oldest first; row %2 of the storage")
                                   .arg(replay_->ageOf(storageRow))
                                   .arg(storageRow)
                             : tr("Row %1 of the storage: not valid (past the buffer's fill "
                                  "level)")
                                   .arg(storageRow);
            case Qt::ForegroundRole:
                return valid ? QVariant() : QVariant(QBrush(QColor(0x9a, 0x9a, 0x9a)));
            default:
                return {};
        }
    }
    // A stack's rows: the chunk each is in, and its row there.
    if (orientation == Qt::Vertical && stack_ && slice_.rowDim == 0 &&
        (role == Qt::DisplayRole || role == Qt::ToolTipRole)) {
        const std::int64_t row = firstRow_ + section;
        const auto at = stack_->chunkOf(row);
        if (!at)
            return {};
        const QString chunk = QString::fromStdString(stack_->chunks[at->first].name);
        return role == Qt::DisplayRole ? QString("%1 · %2:%3").arg(row).arg(chunk).arg(at->second)
                                       : tr("Row %1 of the stack; row %2 of its chunk %3")
                                             .arg(row)
                                             .arg(at->second)
                                             .arg(chunk);
    }
    if (role != Qt::DisplayRole)
        return {};
    if (orientation == Qt::Vertical)
        return slice_.rowDim >= 0 ? QString::number(firstRow_ + section) : QString("0");
    return slice_.colDim >= 0 ? QString::number(firstCol_ + section) : QString("value");
}
