#include "table_mode.h"

#include <QAction>
#include <QComboBox>
#include <QHBoxLayout>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QSpinBox>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

#include "flow_layout.h"
#include "slice_selector.h"
#include "tensor_table_model.h"
#include "tensor_table_view.h"
#include "tensordict/element.h"
#include "widget_shortcut.h"

TableLeafMode::TableLeafMode(QWidget* parent)
    : page_(new QWidget(parent)),
      model_(new TensorTableModel(this)),
      slice_(new SliceSelector(SliceSelector::Mode::Table)),
      leafBar_(new QWidget),
      format_(new QComboBox),
      precision_(new QSpinBox),
      goTo_(new QLineEdit),
      shown_(new QComboBox),
      next_(new QToolButton),
      cell_(new QLabel) {
    view_ = new TensorTableView(model_);

    // One leaf: how floats read, where to go, what to copy or export.
    format_->addItems({tr("Shortest"), tr("Fixed"), tr("Scientific")});
    precision_->setRange(0, 17);
    precision_->setValue(6);
    precision_->setPrefix(tr("digits: "));
    precision_->setEnabled(false);
    goTo_->setPlaceholderText(tr("Go to row…"));
    goTo_->setClearButtonEnabled(true);
    goTo_->setMaximumWidth(160);
    auto* copy = new QPushButton(tr("Copy"));
    copy->setToolTip(tr("Copy the selected cells as tab-separated text (Ctrl+C)"));
    auto* csv = new QPushButton(tr("CSV…"));
    auto* npy = new QPushButton(tr(".npy…"));
    csv->setToolTip(tr("Export the current slice as comma-separated values"));
    npy->setToolTip(tr("Export the current slice as a NumPy .npy file"));
    // One bar for both cases, wrapping when the pane is narrow: how floats
    // read and where to go always; what cells show and the next difference
    // for two leaves; copy and export for one.
    auto* floats = new QWidget;
    auto* floatsRow = new FlowLayout(floats);
    floatsRow->addWidget(new QLabel(tr("Floats:")));
    floatsRow->addWidget(format_);
    floatsRow->addWidget(precision_);
    auto* bar = new FlowLayout(leafBar_);
    bar->addWidget(floats);
    bar->addWidget(goTo_);

    // Two leaves: what cells show, and the next difference.
    shown_->addItems({tr("A"), tr("B"), tr("A − B")});
    shown_->setToolTip(tr("What the cells show; differing cells are highlighted in every case"));
    auto* next = new QAction(tr("Next difference"), this);
    // F3 is the window's (View > Next Difference): it works from every tab.
    next->setToolTip(tr("Go to the next element that differs, after the current cell (F3)"));
    next_->setDefaultAction(next);
    next_->setToolButtonStyle(Qt::ToolButtonTextOnly);
    pairBar_ = new QWidget;
    auto* pair = new FlowLayout(pairBar_);
    pair->addWidget(new QLabel(tr("Cells show:")));
    pair->addWidget(shown_);
    pair->addWidget(next_);
    bar->addWidget(pairBar_);
    pairBar_->setVisible(false);
    bar->addStretch();
    auto* exports = new QWidget;
    auto* exportRow = new FlowLayout(exports);
    exportRow->addWidget(copy);
    exportRow->addWidget(new QLabel(tr("Export:")));
    exportRow->addWidget(csv);
    exportRow->addWidget(npy);
    bar->addWidget(exports);
    exports_ = exports;
    // The current cell of a comparison: its index, A, B and A − B, wrapped
    // to the pane's width (a long line would widen the pane and squeeze the tree).
    cell_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    cell_->setWordWrap(true);
    cell_->setVisible(false);

    auto* layout = new QVBoxLayout(page_);
    layout->addWidget(leafBar_);
    layout->addWidget(cell_);
    layout->addWidget(slice_);
    layout->addWidget(view_, 1);

    // Every command of the table has its keys while the table has the focus.
    page_->setAccessibleName(tr("Table"));
    addWidgetShortcut(page_, tr("Copy selected cells"), QKeySequence::Copy,
                      [this] { view_->copySelection(); });
    addWidgetShortcut(page_, tr("Select all cells"), QKeySequence::SelectAll,
                      [this] { view_->selectAllCells(); });
    addButtonShortcut(page_, csv, tr("Export the slice as CSV…"),
                      QKeySequence(Qt::CTRL | Qt::Key_E));
    addButtonShortcut(page_, npy, tr("Export the slice as .npy…"),
                      QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E));
    const QStringList shownNames{tr("Cells show A"), tr("Cells show B"), tr("Cells show A − B")};
    for (int i = 0; i < shownNames.size(); ++i)
        addWidgetShortcut(page_, shownNames[i], QKeySequence(Qt::ALT | Qt::Key(Qt::Key_1 + i)),
                          [this, i] {
                              if (pairBar_->isVisible())
                                  shown_->setCurrentIndex(i);
                          });
    addWidgetShortcut(page_, tr("Go to row…"), QKeySequence(Qt::CTRL | Qt::Key_J), [this] {
        goTo_->setFocus(Qt::ShortcutFocusReason);
        goTo_->selectAll();
    });
    connect(format_, &QComboBox::currentIndexChanged, this, &TableLeafMode::applyFormat);
    connect(precision_, &QSpinBox::valueChanged, this, &TableLeafMode::applyFormat);
    connect(copy, &QPushButton::clicked, view_, &TensorTableView::copySelection);
    connect(goTo_, &QLineEdit::returnPressed, this, [this] {
        bool ok = false;
        const qlonglong row = goTo_->text().trimmed().toLongLong(&ok);
        if (ok)
            view_->scrollTo(row < 0 ? model_->totalRows() + row : row, model_->firstCol());
    });
    connect(csv, &QPushButton::clicked, this,
            [this] { Q_EMIT exportRequested(SliceExportJob::Format::Csv); });
    connect(npy, &QPushButton::clicked, this,
            [this] { Q_EMIT exportRequested(SliceExportJob::Format::Npy); });
    connect(next, &QAction::triggered, this, &TableLeafMode::nextDifference);
    connect(shown_, &QComboBox::currentIndexChanged, this, [this](int index) {
        model_->setShown(static_cast<TensorTableModel::Shown>(index));
        view_->fitColumns();
    });
    connect(view_, &TensorTableView::currentCellChanged, this, &TableLeafMode::showCurrentCell);
    connect(model_, &TensorTableModel::sourceChanged, this, &LeafMode::sourceChanged);
    connect(model_, &TensorTableModel::filled, this, [this] {
        view_->fitColumns();
        Q_EMIT drawn();
    });
    connect(slice_, &SliceSelector::sliceChanged, this, [this](const TensorSlice& slice) {
        // The same cells of the next slice stay selected; other axes make other cells.
        const TensorSlice& before = model_->slice();
        if (before.rowDim != slice.rowDim || before.colDim != slice.colDim)
            view_->clearSelection();
        model_->setSlice(slice);
        view_->fitColumns();
        showCurrentCell();
        Q_EMIT currentSliceChanged(slice);
        Q_EMIT slicePositionChanged(slice_->position());
    });
}

TableLeafMode::~TableLeafMode() = default;

bool TableLeafMode::isDrawing() const {
    return model_->isFilling();
}

void TableLeafMode::setSlicePosition(const SlicePosition& position) {
    slice_->setPosition(position);
}

void TableLeafMode::applyFormat() {
    const auto format = static_cast<tensordict::FloatFormat>(format_->currentIndex());
    precision_->setEnabled(format != tensordict::FloatFormat::Shortest);
    model_->setFloatFormat(format, precision_->value());
    view_->fitColumns();
}

void TableLeafMode::setLeaves(const ShownLeaves& leaves) {
    leaves_ = leaves;
    goTo_->clear();  // a row number typed for the leaf before means nothing here
    const TensorSlice slice = TensorSlice::defaultFor(leaves.a.shape());
    slice_->setSlice(slice);
    view_->clearSelection();
    model_->setLeaf(leaves.a.dtype(), leaves.a.bytes, slice);
    const tensordict::Node* node = leaves.a.node;
    if (node && node->store() && !leaves.isPair()) {
        model_->setReplayRows(tensordict::replayBufferFacts(*node->store()));
        model_->setStackRows(tensordict::stackFacts(*node->store()));
    }
    if (leaves.isPair()) {
        model_->setOther(leaves.b->dtype(), leaves.b->bytes, leaves.tolerance);
        model_->setShown(static_cast<TensorTableModel::Shown>(shown_->currentIndex()));
    }
    exports_->setVisible(!leaves.isPair());
    pairBar_->setVisible(leaves.isPair());
    cell_->setVisible(leaves.isPair());
    view_->fitColumns();
    if (rowLeaf_ && rowLeaf_ == leaves.a.node && pendingRow_ >= 0)
        view_->showCell(pendingRow_, 0);
    rowLeaf_ = nullptr;
    pendingRow_ = -1;
    showCurrentCell();
    Q_EMIT currentSliceChanged(slice);
}

void TableLeafMode::showRow(const tensordict::Node* leaf, std::int64_t row) {
    if (leaf && leaf == leaves_.a.node) {
        view_->showCell(row, 0);
        return;
    }
    rowLeaf_ = leaf;
    pendingRow_ = row;
}

void TableLeafMode::setDifferingCount(std::optional<std::uint64_t> differing) {
    differing_ = differing;
    showCurrentCell();
}

void TableLeafMode::clear() {
    search_.cancel();
    leaves_ = {};
    differing_.reset();
    view_->clearSelection();
    model_->clear();
    cell_->clear();
}

void TableLeafMode::showCurrentCell() {
    if (!leaves_.isPair() || !leaves_.a.bytes.data)
        return;
    const tensordict::Node* a = leaves_.a.node;
    QString counts;
    if (differing_)
        counts = tr("%1 of %2 elements differ")
                     .arg(QLocale().toString(qulonglong(*differing_)),
                          QLocale().toString(qlonglong(a->leaf().numel)));
    std::int64_t row = 0, col = 0;
    if (!view_->currentCell(&row, &col)) {
        cell_->setText(counts);
        return;
    }
    const std::int64_t flat = model_->slice().elementIndex(row, col);
    QStringList index;
    for (const std::int64_t i : tensordict::unflattenIndex(flat, a->leaf().shape))
        index << QString::number(i);
    using Shown = TensorTableModel::Shown;
    QString text =
        tr("[%1]  A = %2 · B = %3 · A − B = %4")
            .arg(index.join(", "), model_->text(row, col, Shown::Leaf),
                 model_->text(row, col, Shown::Other), model_->text(row, col, Shown::Difference));
    if (!counts.isEmpty())
        text += "  (" + counts + ")";
    cell_->setText(text);
}

void TableLeafMode::nextDifference() {
    if (!leaves_.isPair() || !leaves_.a.bytes.data || isSearching())
        return;
    std::int64_t from = 0, row = 0, col = 0;
    if (view_->currentCell(&row, &col))
        from = model_->slice().elementIndex(row, col) + 1;
    search_.start(
        [na = leaves_.a.node, nb = leaves_.b->node, a = leaves_.ownerA, b = leaves_.ownerB,
         tolerance = leaves_.tolerance, from](const tensordict::CancelToken&) {
            Search s;
            try {
                auto d = tensordict::compareValues(*na, *nb, tolerance, from, true);
                if (d.firstIndex < 0 && from > 0) {  // none after the cell: from the start
                    d = tensordict::compareValues(*na, *nb, tolerance, 0, true);
                    s.wrapped = true;
                }
                s.flat = d.firstIndex;
            } catch (const std::exception& e) {
                s.error = QString::fromUtf8(e.what());
            }
            return s;
        },
        [this](const Search& s) { searchDone(s); });
}

void TableLeafMode::searchDone(const Search& s) {
    if (!s.error.isEmpty()) {
        cell_->setText(tr("Cannot compare: %1").arg(s.error));
        return;
    }
    if (s.flat < 0) {
        cell_->setText(tr("No element differs."));
        Q_EMIT noDifference();
        return;
    }
    showElement(s.flat);
    Q_EMIT differenceShown(s.flat, s.wrapped);
}

void TableLeafMode::showElement(std::int64_t flat) {
    const std::vector<std::int64_t> index = tensordict::unflattenIndex(flat, leaves_.a.shape());
    const TensorSlice slice = slice_->slice();
    for (const int d : slice.fixedDims())
        slice_->setIndex(d, index[static_cast<std::size_t>(d)]);
    const std::int64_t row = slice.rowDim >= 0 ? index[static_cast<std::size_t>(slice.rowDim)] : 0;
    const std::int64_t col = slice.colDim >= 0 ? index[static_cast<std::size_t>(slice.colDim)] : 0;
    view_->showCell(row, col);
    showCurrentCell();
}
