#include "key_columns.h"

#include <QEvent>
#include <QHeaderView>
#include <QTreeView>
#include <algorithm>

KeyColumns::KeyColumns(QTreeView* tree, int keyColumn)
    : QObject(tree), tree_(tree), viewport_(tree->viewport()), keyColumn_(keyColumn) {
    QHeaderView* header = tree_->header();
    header->setStretchLastSection(false);
    header->setSectionResizeMode(QHeaderView::Interactive);
    header->setMinimumSectionSize(tree_->fontMetrics().horizontalAdvance("0000"));
    tree_->setTextElideMode(Qt::ElideMiddle);
    tree_->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    tree_->viewport()->installEventFilter(this);

    fitTimer_.setSingleShot(true);
    fitTimer_.setInterval(0);
    connect(&fitTimer_, &QTimer::timeout, this, &KeyColumns::fit);
    connect(header, &QHeaderView::sectionResized, this, [this](int column) {
        if (!fitting_)
            draggedByUser_.insert(column);
    });
    connect(tree_, &QTreeView::expanded, this, &KeyColumns::scheduleFit);
    connect(tree_, &QTreeView::collapsed, this, &KeyColumns::scheduleFit);
    if (QAbstractItemModel* model = tree_->model()) {
        connect(model, &QAbstractItemModel::modelReset, this, [this] {
            draggedByUser_.clear();
            scheduleFit();
        });
        connect(model, &QAbstractItemModel::rowsInserted, this, &KeyColumns::scheduleFit);
        connect(model, &QAbstractItemModel::rowsRemoved, this, &KeyColumns::scheduleFit);
        connect(model, &QAbstractItemModel::layoutChanged, this, &KeyColumns::scheduleFit);
        connect(model, &QAbstractItemModel::dataChanged, this, &KeyColumns::scheduleFit);
    }
}

namespace {
// What a column's cells on screen need (QTreeView's own measure, with the
// indentation of the first column; public only through its base class).
int contentWidth(const QTreeView* tree, int column) {
    return std::max(static_cast<const QAbstractItemView*>(tree)->sizeHintForColumn(column),
                    tree->header()->sectionSizeHint(column));
}
}  // namespace

int KeyColumns::keyWidthNeeded() const {
    return contentWidth(tree_, keyColumn_) + 4;
}

void KeyColumns::fit() {
    fitTimer_.stop();
    QHeaderView* header = tree_->header();
    const int columns = header->count();
    if (columns == 0)
        return;
    fitting_ = true;
    int others = 0;
    for (int c = 0; c < columns; ++c) {
        if (c == keyColumn_ || header->isSectionHidden(c))
            continue;
        if (!draggedByUser_.contains(c))
            header->resizeSection(c, contentWidth(tree_, c) + 2);
        others += header->sectionSize(c);
    }
    if (!draggedByUser_.contains(keyColumn_)) {
        const int available = tree_->viewport()->width();
        const int floor = tree_->fontMetrics().horizontalAdvance("MMMMMMMM");
        // What the keys need, up to the whole view (at least a few letters):
        // a key is read in full; the columns after it scroll into view.
        const int wanted = std::min(keyWidthNeeded(), std::max(floor, available));
        header->resizeSection(keyColumn_, std::max(available - others, wanted));
    }
    fitting_ = false;
}

bool KeyColumns::eventFilter(QObject* watched, QEvent* event) {
    if (watched == viewport_ && (event->type() == QEvent::Resize || event->type() == QEvent::Show))
        scheduleFit();
    return QObject::eventFilter(watched, event);
}
