#pragma once

#include <QSortFilterProxyModel>

class KeyTreeModel;

// Finds keys by substring at any depth: a row shows when its key matches or
// one of its descendants' does (then with the path leading to it).
class KeyFilterModel : public QSortFilterProxyModel {
    Q_OBJECT

public:
    explicit KeyFilterModel(QObject* parent = nullptr);
    void setKeyModel(KeyTreeModel* model);
    // An empty pattern shows everything.
    void setPattern(const QString& pattern);
    const QString& pattern() const { return pattern_; }

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    KeyTreeModel* keys_ = nullptr;
    QString pattern_;
};
