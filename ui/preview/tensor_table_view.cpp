#include "tensor_table_view.h"

#include <QApplication>
#include <QClipboard>
#include <QGridLayout>
#include <QHeaderView>
#include <QKeyEvent>
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
    table_->installEventFilter(this);
    table_->viewport()->installEventFilter(this);

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
    });
}

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
    const std::int64_t rows = std::min<std::int64_t>(model_->totalRows(), 64);
    const std::int64_t cols = std::min<std::int64_t>(model_->totalCols(), 16);
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = 0; c < cols; ++c)
            widest = std::max(widest, fm.horizontalAdvance(model_->text(r, c)) + 16);
    if (model_->totalCols() == 1)
        widest = std::max(widest, fm.horizontalAdvance("value") + 24);
    table_->horizontalHeader()->setDefaultSectionSize(std::clamp(widest, 48, 360));
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
    scrollTo(top, left);
    const QModelIndex cell = model_->index(static_cast<int>(row - model_->firstRow()),
                                           static_cast<int>(col - model_->firstCol()));
    if (cell.isValid())
        table_->setCurrentIndex(cell);
}

bool TensorTableView::currentCell(std::int64_t* row, std::int64_t* col) const {
    const QModelIndex cell = table_->currentIndex();
    if (!cell.isValid())
        return false;
    *row = model_->firstRow() + cell.row();
    *col = model_->firstCol() + cell.column();
    return true;
}

void TensorTableView::copySelection() const {
    const QString text = model_->toTsv(table_->selectionModel()->selectedIndexes());
    if (!text.isEmpty())
        QApplication::clipboard()->setText(text);
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
    if (event->type() == QEvent::Wheel) {
        auto* wheel = static_cast<QWheelEvent*>(event);
        const int steps = -wheel->angleDelta().y() / 40;  // three rows a notch
        const int hsteps = -wheel->angleDelta().x() / 120;
        if (wheel->modifiers() & Qt::ShiftModifier)
            scrollTo(firstRow_, firstCol_ + steps / 3);
        else
            scrollTo(firstRow_ + steps, firstCol_ + hsteps);
        return true;
    }
    if (event->type() == QEvent::KeyPress && watched == table_) {
        auto* key = static_cast<QKeyEvent*>(event);
        const bool ctrl = key->modifiers() & Qt::ControlModifier;
        switch (key->key()) {
            case Qt::Key_PageDown:
                scrollTo(firstRow_ + visibleRows_ - 1, firstCol_);
                return true;
            case Qt::Key_PageUp:
                scrollTo(firstRow_ - visibleRows_ + 1, firstCol_);
                return true;
            case Qt::Key_Home:
                if (ctrl)
                    scrollTo(0, 0);
                else
                    scrollTo(firstRow_, 0);
                return true;
            case Qt::Key_End:
                if (ctrl)
                    scrollTo(maxFirstRow(), firstCol_);
                else
                    scrollTo(firstRow_, maxFirstCol());
                return true;
            case Qt::Key_C:
                if (ctrl) {
                    copySelection();
                    return true;
                }
                break;
            case Qt::Key_Down:
                if (table_->currentIndex().row() >= model_->rowCount() - 2) {
                    scrollTo(firstRow_ + 1, firstCol_);
                    return true;
                }
                break;
            case Qt::Key_Up:
                if (table_->currentIndex().row() <= 0) {
                    scrollTo(firstRow_ - 1, firstCol_);
                    return true;
                }
                break;
        }
    }
    return QWidget::eventFilter(watched, event);
}
