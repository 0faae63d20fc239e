#include "tensor_table_view.h"

#include <QApplication>
#include <QClipboard>
#include <QGridLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLocale>
#include <QMessageBox>
#include <QMouseEvent>
#include <QProgressDialog>
#include <QScrollBar>
#include <QTableView>
#include <QWheelEvent>

#include "tensor_table_model.h"

namespace {
// Scroll bars are int; beyond this many positions one position spans several rows.
constexpr std::int64_t kScrollPositions = 1 << 30;

int toBar(std::int64_t first, std::int64_t maxFirst) {
    if (maxFirst <= kScrollPositions)
        return static_cast<int>(first);
    return static_cast<int>(static_cast<long double>(first) * kScrollPositions / maxFirst);
}

std::int64_t fromBar(int value, std::int64_t maxFirst) {
    if (maxFirst <= kScrollPositions)
        return value;
    return static_cast<std::int64_t>(static_cast<long double>(value) * maxFirst / kScrollPositions);
}
}  // namespace

TensorTableView::TensorTableView(TensorTableModel* model, QWidget* parent)
    : QWidget(parent),
      model_(model),
      table_(new QTableView),
      vbar_(new QScrollBar(Qt::Vertical)),
      hbar_(new QScrollBar(Qt::Horizontal)) {
    table_->setModel(model_);
    table_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    table_->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    table_->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    table_->horizontalHeader()->setDefaultSectionSize(110);
    table_->verticalHeader()->setMinimumWidth(
        table_->fontMetrics().horizontalAdvance("00000000000"));
    table_->setSelectionMode(QAbstractItemView::ExtendedSelection);
    table_->setCornerButtonEnabled(false);  // it selects the window only: Ctrl+A selects the slice
    table_->installEventFilter(this);
    table_->viewport()->installEventFilter(this);
    table_->verticalHeader()->viewport()->installEventFilter(this);
    table_->horizontalHeader()->viewport()->installEventFilter(this);

    auto* grid = new QGridLayout(this);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->setSpacing(0);
    grid->addWidget(table_, 0, 0);
    grid->addWidget(vbar_, 0, 1);
    grid->addWidget(hbar_, 1, 0);

    connect(vbar_, &QScrollBar::valueChanged, this, [this](int v) {
        firstRow_ = fromBar(v, maxFirstRow());
        updateWindow();
    });
    connect(hbar_, &QScrollBar::valueChanged, this, [this](int v) {
        firstCol_ = fromBar(v, maxFirstCol());
        updateWindow();
    });
    connect(model_, &QAbstractItemModel::modelReset, this, [this] {
        if (model_->firstRow() != firstRow_ || model_->firstCol() != firstCol_) {
            firstRow_ = model_->firstRow();
            firstCol_ = model_->firstCol();
        }
        syncScrollBars();
        syncSelection();
    });
    // The window's rows move under the inner view without a reset: its
    // selection would stay on the screen's rows.
    connect(model_, &QAbstractItemModel::dataChanged, this, [this] { syncSelection(); });
    connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
        if (!syncing_)
            adoptViewSelection();
    });
    connect(
        table_->selectionModel(), &QItemSelectionModel::currentChanged, this,
        [this](const QModelIndex& index) {
            if (syncing_ || !index.isValid())
                return;
            setCurrent(Cell{model_->firstRow() + index.row(), model_->firstCol() + index.column()});
        });
}

TensorTableView::~TensorTableView() = default;

std::int64_t TensorTableView::maxFirstRow() const {
    return std::max<std::int64_t>(0, model_->totalRows() - visibleRows_ + 1);
}

std::int64_t TensorTableView::maxFirstCol() const {
    return std::max<std::int64_t>(0, model_->totalCols() - visibleCols_ + 1);
}

void TensorTableView::refresh() {
    firstRow_ = std::min(firstRow_, maxFirstRow());
    firstCol_ = std::min(firstCol_, maxFirstCol());
    syncScrollBars();
    updateWindow();
}

void TensorTableView::fitColumns() {
    const QFontMetrics fm = table_->fontMetrics();
    int widest = fm.horizontalAdvance(QString::number(model_->totalCols())) + 16;
    // A sample from the first cell shown: those are the cells a leaf read
    // page by page holds (text() is empty for the others).
    const std::int64_t row0 = model_->firstRow(), col0 = model_->firstCol();
    const std::int64_t rowEnd = std::min<std::int64_t>(model_->totalRows(), row0 + 64);
    const std::int64_t colEnd = std::min<std::int64_t>(model_->totalCols(), col0 + 16);
    for (std::int64_t r = row0; r < rowEnd; ++r)
        for (std::int64_t c = col0; c < colEnd; ++c)
            widest = std::max(widest, fm.horizontalAdvance(model_->text(r, c)) + 16);
    if (model_->totalCols() == 1)
        widest = std::max(widest, fm.horizontalAdvance("value") + 24);
    table_->horizontalHeader()->setDefaultSectionSize(std::clamp(widest, 48, kMaxColumnWidth));
    table_->verticalHeader()->setMinimumWidth(
        fm.horizontalAdvance(QString::number(model_->totalRows())) + 16);
    const int colWidth = table_->horizontalHeader()->defaultSectionSize();
    const int width =
        table_->viewport()->width() > 0 ? table_->viewport()->width() : table_->width();
    visibleCols_ = std::max(1, width / colWidth + 1);
    refresh();
}

void TensorTableView::syncScrollBars() {
    const QSignalBlocker bv(vbar_), bh(hbar_);
    const std::int64_t maxRow = maxFirstRow(), maxCol = maxFirstCol();
    vbar_->setRange(0, static_cast<int>(std::min(maxRow, kScrollPositions)));
    vbar_->setPageStep(std::max(1, visibleRows_ - 1));
    vbar_->setValue(toBar(firstRow_, maxRow));
    hbar_->setRange(0, static_cast<int>(std::min(maxCol, kScrollPositions)));
    hbar_->setPageStep(std::max(1, visibleCols_ - 1));
    hbar_->setValue(toBar(firstCol_, maxCol));
    hbar_->setVisible(maxCol > 0);
}

void TensorTableView::updateWindow() {
    model_->setWindow(firstRow_, firstCol_, visibleRows_, visibleCols_);
    widenColumnsForWindow();
}

void TensorTableView::widenColumnsForWindow() {
    // fitColumns() measured a sample; values further on can be longer
    // (-0.25000000000000006 below rows of 0.5): columns grow as they come
    // on screen, never shrink while scrolling, so nothing is cut.
    const QFontMetrics fm = table_->fontMetrics();
    QHeaderView* header = table_->horizontalHeader();
    int widest = header->defaultSectionSize();
    for (int r = 0; r < model_->rowCount(); ++r)
        for (int c = 0; c < model_->columnCount(); ++c)
            widest =
                std::max(widest, fm.horizontalAdvance(model_->index(r, c).data().toString()) + 16);
    widest = std::min(widest, kMaxColumnWidth);
    if (widest <= header->defaultSectionSize())
        return;
    header->setDefaultSectionSize(widest);
    const int width =
        table_->viewport()->width() > 0 ? table_->viewport()->width() : table_->width();
    visibleCols_ = std::max(1, width / widest + 1);
    syncScrollBars();
    model_->setWindow(firstRow_, firstCol_, visibleRows_, visibleCols_);
}

void TensorTableView::scrollTo(std::int64_t row, std::int64_t col) {
    firstRow_ = std::clamp<std::int64_t>(row, 0, maxFirstRow());
    firstCol_ = std::clamp<std::int64_t>(col, 0, maxFirstCol());
    syncScrollBars();
    updateWindow();
}

void TensorTableView::scrollToEnd() {
    scrollTo(maxFirstRow(), firstCol_);
}

void TensorTableView::showCell(std::int64_t row, std::int64_t col) {
    // The last row and column on screen may be cut off: the cell stays clear of them.
    const int rows = std::max(1, visibleRows_ - 1), cols = std::max(1, visibleCols_ - 1);
    std::int64_t top = firstRow_, left = firstCol_;
    if (row < top || row >= top + rows)
        top = row - rows / 2;
    if (col < left || col >= left + cols)
        left = col - cols / 2;
    current_ = Cell{row, col};
    scrollTo(top, left);
    syncSelection();
    Q_EMIT currentCellChanged();
}

bool TensorTableView::currentCell(std::int64_t* row, std::int64_t* col) const {
    if (!current_ || current_->row >= model_->totalRows() || current_->col >= model_->totalCols())
        return false;
    *row = current_->row;
    *col = current_->col;
    return true;
}

void TensorTableView::setCurrent(std::optional<Cell> cell) {
    if (cell == current_)
        return;
    current_ = cell;
    syncSelection();
    Q_EMIT currentCellChanged();
}

void TensorTableView::setSelection(const CellSelection& selection) {
    selection_ = selection;
    syncSelection();
}

void TensorTableView::clearSelection() {
    copy_.cancel();
    selection_.clear();
    current_.reset();
    syncSelection();
    Q_EMIT currentCellChanged();
}

void TensorTableView::syncSelection() {
    const int rows = model_->rowCount(), cols = model_->columnCount();
    const std::int64_t top = model_->firstRow(), left = model_->firstCol();
    QItemSelection shown;
    if (rows > 0 && cols > 0) {
        const CellSelection::Range window{top, left, top + rows - 1, left + cols - 1};
        for (const CellSelection::Range& r : selection_.ranges()) {
            const CellSelection::Range part = r.intersected(window);
            if (!part.isEmpty())
                shown.select(model_->index(int(part.top - top), int(part.left - left)),
                             model_->index(int(part.bottom - top), int(part.right - left)));
        }
    }
    QModelIndex current;
    if (current_)
        current = model_->index(int(current_->row - top), int(current_->col - left));
    if (current_ && (current_->row < top || current_->col < left))
        current = {};
    syncing_ = true;
    table_->selectionModel()->select(shown, QItemSelectionModel::ClearAndSelect);
    table_->selectionModel()->setCurrentIndex(current, QItemSelectionModel::NoUpdate);
    syncing_ = false;
    table_->viewport()->update();
}

void TensorTableView::adoptViewSelection() {
    const std::int64_t top = model_->firstRow(), left = model_->firstCol();
    selection_.clear();
    for (const QItemSelectionRange& r : table_->selectionModel()->selection()) {
        selection_.add(Cell{top + r.top(), left + r.left()});
        selection_.extendTo(Cell{top + r.bottom(), left + r.right()});
    }
}

std::optional<CellSelection::Cell> TensorTableView::cellAt(const QPoint& pos) const {
    const std::int64_t rows = model_->totalRows(), cols = model_->totalCols();
    if (rows <= 0 || cols <= 0 || model_->rowCount() <= 0 || model_->columnCount() <= 0)
        return std::nullopt;
    // Past the edges of the window: the nearest cell on screen.
    const int lastRow = model_->rowCount() - 1, lastCol = model_->columnCount() - 1;
    int r = table_->rowAt(pos.y()), c = table_->columnAt(pos.x());
    if (r < 0)
        r = pos.y() < 0 ? 0 : lastRow;
    if (c < 0)
        c = pos.x() < 0 ? 0 : lastCol;
    return Cell{std::min(rows - 1, model_->firstRow() + r),
                std::min(cols - 1, model_->firstCol() + c)};
}

bool TensorTableView::mouseEvent(QObject* watched, QEvent* event) {
    auto* mouse = static_cast<QMouseEvent*>(event);
    const bool rowHeader = watched == table_->verticalHeader()->viewport();
    const bool colHeader = watched == table_->horizontalHeader()->viewport();
    if (event->type() == QEvent::MouseButtonRelease) {
        drag_ = Drag::None;
        return rowHeader || colHeader || watched == table_->viewport();
    }
    if (event->type() == QEvent::MouseButtonDblClick)
        return true;  // cells are not edited
    QPoint pos = mouse->position().toPoint();
    if (rowHeader)
        pos = {0, pos.y()};
    if (colHeader)
        pos = {pos.x(), 0};
    if (event->type() == QEvent::MouseMove) {
        if (drag_ == Drag::None || !(mouse->buttons() & Qt::LeftButton))
            return false;
        // Dragged past an edge: the window follows, a row or column a move.
        const QSize area = table_->viewport()->size();
        if (drag_ != Drag::Columns &&
            (mouse->position().y() < 0 || mouse->position().y() > area.height()))
            scrollTo(firstRow_ + (mouse->position().y() < 0 ? -1 : 1), firstCol_);
        if (drag_ != Drag::Rows &&
            (mouse->position().x() < 0 || mouse->position().x() > area.width()))
            scrollTo(firstRow_, firstCol_ + (mouse->position().x() < 0 ? -1 : 1));
        std::optional<Cell> cell = cellAt(pos);
        if (!cell)
            return true;
        if (drag_ == Drag::Rows)
            cell->col = model_->totalCols() - 1;
        if (drag_ == Drag::Columns)
            cell->row = model_->totalRows() - 1;
        selection_.extendTo(*cell);
        setCurrent(cell);
        syncSelection();
        return true;
    }
    if (mouse->button() != Qt::LeftButton)
        return false;
    std::optional<Cell> cell = cellAt(pos);
    if (!cell)
        return true;
    const bool shift = mouse->modifiers() & Qt::ShiftModifier;
    const bool ctrl = mouse->modifiers() & Qt::ControlModifier;
    table_->setFocus(Qt::MouseFocusReason);
    drag_ = rowHeader ? Drag::Rows : colHeader ? Drag::Columns : Drag::Cells;
    // A header selects its whole row or column of the slice.
    Cell first = *cell, last = *cell;
    if (rowHeader)
        first.col = 0, last.col = model_->totalCols() - 1;
    if (colHeader)
        first.row = 0, last.row = model_->totalRows() - 1;
    if (shift && selection_.anchor()) {
        selection_.extendTo(last);
    } else {
        if (ctrl)
            selection_.add(first);
        else
            selection_.select(first);
        selection_.extendTo(last);
    }
    setCurrent(*cell);
    syncSelection();
    return true;
}

void TensorTableView::moveCurrent(Cell to, bool extend) {
    to.row =
        std::clamp<std::int64_t>(to.row, 0, std::max<std::int64_t>(0, model_->totalRows() - 1));
    to.col =
        std::clamp<std::int64_t>(to.col, 0, std::max<std::int64_t>(0, model_->totalCols() - 1));
    if (extend)
        selection_.extendTo(to);
    else
        selection_.select(to);
    showCell(to.row, to.col);
}

bool TensorTableView::keyEvent(QKeyEvent* key) {
    if (model_->totalRows() <= 0 || model_->totalCols() <= 0)
        return false;
    const bool ctrl = key->modifiers() & Qt::ControlModifier;
    const bool shift = key->modifiers() & Qt::ShiftModifier;
    const Cell at = current_.value_or(Cell{firstRow_, firstCol_});
    const std::int64_t page = std::max(1, visibleRows_ - 2);
    switch (key->key()) {
        // The table's own keys, also where no Table page gives them as
        // shortcuts (which take them first when there is one).
        case Qt::Key_C:
            if (!ctrl)
                return false;
            copySelection();
            return true;
        case Qt::Key_A:
            if (!ctrl)
                return false;
            selectAllCells();
            return true;
        case Qt::Key_Down:
            moveCurrent({at.row + 1, at.col}, shift);
            return true;
        case Qt::Key_Up:
            moveCurrent({at.row - 1, at.col}, shift);
            return true;
        case Qt::Key_Right:
            moveCurrent({at.row, at.col + 1}, shift);
            return true;
        case Qt::Key_Left:
            moveCurrent({at.row, at.col - 1}, shift);
            return true;
        case Qt::Key_PageDown:
            scrollTo(firstRow_ + page, firstCol_);
            moveCurrent({at.row + page, at.col}, shift);
            return true;
        case Qt::Key_PageUp:
            scrollTo(firstRow_ - page, firstCol_);
            moveCurrent({at.row - page, at.col}, shift);
            return true;
        case Qt::Key_Home:
            moveCurrent({ctrl ? 0 : at.row, 0}, shift);
            return true;
        case Qt::Key_End:
            moveCurrent(
                {ctrl ? model_->totalRows() - 1 : at.row, ctrl ? at.col : model_->totalCols() - 1},
                shift);
            return true;
        default:
            return false;
    }
}

void TensorTableView::selectAllCells() {
    if (model_->totalRows() <= 0 || model_->totalCols() <= 0)
        return;
    selection_.selectAll(model_->totalRows(), model_->totalCols());
    syncSelection();
}

void TensorTableView::copySelection() {
    if (copy_.isBusy())
        return;
    const std::uint64_t cells = selection_.bounds().cellCount();
    if (cells == 0)
        return Q_EMIT copyFinished(0, tr("No cell is selected."));
    if (cells > kMaxCopyCells) {
        const QString why =
            tr("%1 cells are more than the clipboard should hold: export the slice as CSV "
               "instead (CSV… above the table), which streams it to a file.")
                .arg(QLocale().toString(qulonglong(cells)));
        QMessageBox::information(this, tr("Copy"), why);
        return Q_EMIT copyFinished(0, why);
    }
    if (cells > kAskCells) {
        const auto ask = [this](std::uint64_t n) {
            return QMessageBox::question(
                       this, tr("Copy"),
                       tr("Copy %1 cells to the clipboard? As text they take about %2 MB.")
                           .arg(QLocale().toString(qulonglong(n)))
                           .arg(QLocale().toString(double(n) * 12 / 1e6, 'f', 0)),
                       QMessageBox::Yes | QMessageBox::Cancel) == QMessageBox::Yes;
        };
        if (!(confirmCopy_ ? confirmCopy_(cells) : ask(cells)))
            return Q_EMIT copyFinished(0, tr("cancelled"));
    }
    // A leaf read page by page has only the window's pages: the rest are read first, on the worker.
    const bool paged = model_->readsPageByPage();
    if (cells <= kWorkerCells && !paged) {
        const QString text = model_->toTsv(selection_);
        return finishCopy(cells, text, {});
    }
    // On a worker, over a copy of how the cells read (the bytes are shared).
    copyProgress_ =
        new QProgressDialog(tr("Copying %1 cells…").arg(QLocale().toString(qulonglong(cells))),
                            tr("Cancel"), 0, 1000, this);
    copyProgress_->setAttribute(Qt::WA_DeleteOnClose);
    copyProgress_->setMinimumDuration(300);
    connect(copyProgress_, &QProgressDialog::canceled, this, [this] {
        copy_.cancel();
        finishCopy(0, {}, tr("cancelled"));
    });
    const CellSelection::Range box = selection_.bounds();
    std::vector<TensorSlice::Span> spans;
    if (paged)
        spans = model_->slice().rowSpans(box.top, box.bottom + 1, 1, box.left, box.right + 1);
    copy_.start(
        [cells = model_->cells(), selection = selection_, spans](
            const tensordict::CancelToken& cancel, const JobProgress& progress) {
            Copy c;
            const SliceHold held = requireSpans(cells.bytes, cells.dtype, spans, &cancel);
            if (!held.ok()) {
                c.lost = held.failed();
                return c;
            }
            c.text = cells.tsv(selection, cancel, &c.lost, progress);
            return c;
        },
        [this, cells](const Copy& c) {
            finishCopy(cells, c.text, c.lost ? tr("the leaf's file changed") : QString());
        },
        [this](double fraction) {
            if (copyProgress_)
                copyProgress_->setValue(static_cast<int>(fraction * 1000));
        });
}

void TensorTableView::finishCopy(quint64 cells, const QString& text, const QString& why) {
    if (copyProgress_) {
        const QSignalBlocker quiet(copyProgress_.data());
        copyProgress_->close();
    }
    if (!why.isEmpty() || text.isEmpty())
        return Q_EMIT copyFinished(0, why.isEmpty() ? tr("nothing to copy") : why);
    QApplication::clipboard()->setText(text);
    Q_EMIT copyFinished(cells, {});
}

void TensorTableView::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    const int rowHeight = table_->verticalHeader()->defaultSectionSize();
    const int colWidth = table_->horizontalHeader()->defaultSectionSize();
    const int height =
        table_->viewport()->height() > 0 ? table_->viewport()->height() : table_->height();
    const int width =
        table_->viewport()->width() > 0 ? table_->viewport()->width() : table_->width();
    visibleRows_ = std::max(1, height / rowHeight + 1);
    visibleCols_ = std::max(1, width / colWidth + 1);
    refresh();
}

bool TensorTableView::eventFilter(QObject* watched, QEvent* event) {
    switch (event->type()) {
        case QEvent::Wheel: {
            if (watched != table_ && watched != table_->viewport())
                break;
            auto* wheel = static_cast<QWheelEvent*>(event);
            const int steps = -wheel->angleDelta().y() / 40;  // three rows a notch
            const int hsteps = -wheel->angleDelta().x() / 120;
            if (wheel->modifiers() & Qt::ShiftModifier)
                scrollTo(firstRow_, firstCol_ + steps / 3);
            else
                scrollTo(firstRow_ + steps, firstCol_ + hsteps);
            return true;
        }
        case QEvent::MouseButtonPress:
        case QEvent::MouseButtonRelease:
        case QEvent::MouseButtonDblClick:
        case QEvent::MouseMove:
            if (watched != table_)
                return mouseEvent(watched, event);
            break;
        case QEvent::KeyPress:
            if (watched == table_ && keyEvent(static_cast<QKeyEvent*>(event)))
                return true;
            break;
        default:
            break;
    }
    return QWidget::eventFilter(watched, event);
}
