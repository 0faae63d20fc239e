#pragma once

#include <QSortFilterProxyModel>

class CompareTreeModel;

// The comparison tree filtered by key substring and, optionally, to the keys
// that differ. A row shows when it passes, or when one of its descendants
// does (then with the path leading to it): ancestors of differences stay.
class CompareFilterModel : public QSortFilterProxyModel {
    Q_OBJECT

public:
    explicit CompareFilterModel(QObject* parent = nullptr);
    void setCompareModel(CompareTreeModel* model);
    // An empty pattern shows every key.
    void setPattern(const QString& pattern);
    const QString& pattern() const { return pattern_; }
    void setDifferencesOnly(bool on);
    // Both at once (one pass).
    void setFilter(const QString& pattern, bool differencesOnly);
    bool differencesOnly() const { return differencesOnly_; }
    bool isFiltering() const { return differencesOnly_ || !pattern_.isEmpty(); }
    // Filters again (after statuses changed).
    void refilter();

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    CompareTreeModel* keys_ = nullptr;
    QString pattern_;
    bool differencesOnly_ = false;
};
