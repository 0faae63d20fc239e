#pragma once

#include <memory>
#include <vector>

#include "compare_tree.h"
#include "lazy_tree_model.h"

template <>
struct TreeItemTraits<CompareTree::Item> {
    static const CompareTree::Item* parent(const CompareTree::Item& i) { return i.parent; }
    static std::size_t childCount(const CompareTree::Item& i) { return i.children.size(); }
    static const CompareTree::Item* child(const CompareTree::Item& i, std::size_t row) {
        return i.children[row].get();
    }
};

// A thin adapter from a CompareTree (the union of two key trees with each
// key's status) to Qt's item views. Rows are handed to the view in batches
// (LazyTreeModel, as KeyTreeModel does); comparisons arriving from the
// worker update their rows in place.
class CompareTreeModel : public LazyTreeModel<CompareTree::Item> {
    Q_OBJECT

public:
    enum Column { KeyColumn, StatusColumn, AColumn, BColumn, DifferenceColumn, ColumnCount };
    enum Role {
        StatusRole = Qt::UserRole + 1,  // CompareTree::Status as int
        DiffersRole,                    // the key itself differs (what "differences only" keeps)
        DifferingBelowRole,             // how many keys inside differ
        KeyPathRole,                    // QStringList from the roots
    };

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

    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    void refresh(const std::vector<CompareTree::Item*>& touched);

    std::unique_ptr<CompareTree> tree_;
    std::shared_ptr<const tensordict::TensorDict> a_, b_;
    QString rootLabel_;
};
