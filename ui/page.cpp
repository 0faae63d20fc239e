#include "page.h"

#include <QCoreApplication>
#include <QTreeView>

#include "slice_selector.h"

bool Page::focusSliceEntry() {
    SliceSelector* selector = currentSliceSelector();
    return selector && selector->focusIndexBox();
}

QString Page::nextDifference() {
    return QCoreApplication::translate(
        "Page",
        "Compare with another tensordict first (File > Compare With) to step through "
        "its differences.");
}

void Page::selectOnly(QTreeView* tree, const QModelIndex& row) {
    tree->selectionModel()->setCurrentIndex(
        row, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    tree->scrollTo(row);
}
