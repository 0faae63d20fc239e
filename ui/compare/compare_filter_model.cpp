#include "compare_filter_model.h"

#include "compare_tree_model.h"

CompareFilterModel::CompareFilterModel(QObject* parent) : QSortFilterProxyModel(parent) {
    setRecursiveFilteringEnabled(true);
}

void CompareFilterModel::setCompareModel(CompareTreeModel* model) {
    keys_ = model;
    setSourceModel(model);
}

void CompareFilterModel::setPattern(const QString& pattern) {
    pattern_ = pattern;
    refilter();
}

void CompareFilterModel::setDifferencesOnly(bool on) {
    differencesOnly_ = on;
    refilter();
}

void CompareFilterModel::setFilter(const QString& pattern, bool differencesOnly) {
    pattern_ = pattern;
    differencesOnly_ = differencesOnly;
    refilter();
}

void CompareFilterModel::refilter() {
    // Filtering must see every key, including those not yet handed to the view.
    if (keys_ && isFiltering())
        keys_->fetchAll();
    invalidateRowsFilter();
}

bool CompareFilterModel::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
    if (!isFiltering())
        return true;
    // The root row is labelled with the file names: it shows for matches below it,
    // or when it differs itself.
    const QModelIndex idx =
        sourceModel()->index(sourceRow, CompareTreeModel::KeyColumn, sourceParent);
    if (differencesOnly_ && !idx.data(CompareTreeModel::DiffersRole).toBool())
        return false;
    if (pattern_.isEmpty())
        return true;
    return sourceParent.isValid() &&
           idx.data(Qt::DisplayRole).toString().contains(pattern_, Qt::CaseInsensitive);
}
