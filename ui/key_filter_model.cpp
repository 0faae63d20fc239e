#include "key_filter_model.h"

#include "key_tree_model.h"

KeyFilterModel::KeyFilterModel(QObject* parent) : QSortFilterProxyModel(parent) {
    setRecursiveFilteringEnabled(true);
    setFilterCaseSensitivity(Qt::CaseInsensitive);
    setFilterKeyColumn(KeyTreeModel::KeyColumn);
}

void KeyFilterModel::setKeyModel(KeyTreeModel* model) {
    keys_ = model;
    setSourceModel(model);
}

void KeyFilterModel::setPattern(const QString& pattern) {
    pattern_ = pattern;
    // Filtering must see every key, including those not yet handed to the view.
    if (keys_ && !pattern.isEmpty())
        keys_->fetchAll();
    invalidateRowsFilter();
}

bool KeyFilterModel::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
    if (pattern_.isEmpty())
        return true;
    // The root row is labelled with the file name: it shows only for matches below it.
    if (!sourceParent.isValid())
        return false;
    const QModelIndex idx = sourceModel()->index(sourceRow, KeyTreeModel::KeyColumn, sourceParent);
    return idx.data(Qt::DisplayRole).toString().contains(pattern_, Qt::CaseInsensitive);
}
