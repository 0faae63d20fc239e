#pragma once

#include <QAbstractItemModel>
#include <QHash>
#include <memory>
#include <vector>

#include "compare_tree.h"

// A thin adapter from a CompareTree (the union of two key trees with each
// key's status) to Qt's item views. Rows are handed to the view in batches
// (canFetchMore/fetchMore), as KeyTreeModel does; comparisons arriving from
// the worker update their rows in place.
class CompareTreeModel : public QAbstractItemModel {
    Q_OBJECT

public:
    enum Column { KeyColumn, StatusColumn, AColumn, BColumn, DifferenceColumn, ColumnCount };
    enum Role {
        StatusRole = Qt::UserRole + 1,  // CompareTree::Status as int
        DiffersRole,                    // the key itself differs (what "differences only" keeps)
        DifferingBelowRole,             // how many keys inside differ
        KeyPathRole,                    // QStringList from the roots
    };
    static constexpr int kFetchBatch = 256;

    explicit CompareTreeModel(QObject* parent = nullptr);
    ~CompareTreeModel() override;

    // Shows `tree` over `a` and `b` (kept alive here); nullptr: nothing.
    void setTree(std::unique_ptr<CompareTree> tree, std::shared_ptr<const tensordict::TensorDict> a,
                 std::shared_ptr<const tensordict::TensorDict> b, const QString& rootLabel);
    void clear() { setTree(nullptr, nullptr, nullptr, {}); }
    const CompareTree* tree() const { return tree_.get(); }
    std::shared_ptr<const tensordict::TensorDict> tensorDictA() const { return a_; }
    std::shared_ptr<const tensordict::TensorDict> tensorDictB() const { return b_; }

    // Records comparisons from the worker and refreshes their rows (and
    // their ancestors' "differences inside"). Returns the items touched.
    std::vector<const CompareTree::Item*> apply(
        const std::vector<tensordict::KeyComparison>& batch);
    // The comparison was cancelled: keys still pending are marked so.
    void markNotCompared();

    const CompareTree::Item* item(const QModelIndex& index) const;
    QModelIndex indexOf(const CompareTree::Item* item, int column = 0) const;
    // Hands every row to the view (used while filtering).
    void fetchAll();
    // Hands `item` and its ancestors to the view, so it can be selected.
    void ensureFetched(const CompareTree::Item* item);

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    bool hasChildren(const QModelIndex& parent = {}) const override;
    bool canFetchMore(const QModelIndex& parent) const override;
    void fetchMore(const QModelIndex& parent) override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    int fetchedCount(const CompareTree::Item* item) const { return fetched_.value(item, 0); }
    bool isShown(const CompareTree::Item* item) const;
    void refresh(const std::vector<CompareTree::Item*>& touched);

    std::unique_ptr<CompareTree> tree_;
    std::shared_ptr<const tensordict::TensorDict> a_, b_;
    QString rootLabel_;
    QHash<const CompareTree::Item*, int> fetched_;  // children handed to the view so far
};
