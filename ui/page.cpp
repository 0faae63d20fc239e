#include "page.h"

#include <QTreeView>

#include "slice_selector.h"

bool Page::focusSliceEntry() {
    SliceSelector* selector = currentSliceSelector();
    return selector && selector->focusIndexBox();
}

void Page::selectOnly(QTreeView* tree, const QModelIndex& row) {
    tree->selectionModel()->setCurrentIndex(
        row, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    tree->scrollTo(row);
}
