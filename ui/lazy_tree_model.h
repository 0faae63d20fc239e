#pragma once

#include <QAbstractItemModel>
#include <QHash>
#include <algorithm>
#include <vector>

// How a tree model reaches an item's parent and children: specialised
// beside each item type (tensordict::Node, CompareTree::Item) with
//   static const Item* parent(const Item&);
//   static std::size_t childCount(const Item&);
//   static const Item* child(const Item&, std::size_t row);
template <typename Item>
struct TreeItemTraits;

// The lazy part of a tree model over plain data (tensordict::Node,
// CompareTree::Item), reached through TreeItemTraits. Children are handed to the view in batches
// (canFetchMore/fetchMore), and an item's row is recorded when its batch is
// handed over: a new tree costs nothing until the view asks for rows, and a
// node with a million children opens at once. The tree has one root item,
// row 0 under the invisible root; children hang under column 0.
template <typename Item>
class LazyTreeModel : public QAbstractItemModel {
    using Traits = TreeItemTraits<Item>;

public:
    // Each batch makes the view lay out every row it holds again: large
    // batches keep scrolling through 100k children smooth (bench_tree).
    static constexpr int kFetchBatch = 4096;

    using QAbstractItemModel::QAbstractItemModel;

    const Item* item(const QModelIndex& index) const {
        return index.isValid() ? static_cast<const Item*>(index.internalPointer()) : nullptr;
    }
    // The index of an item already handed to the view; invalid otherwise.
    QModelIndex indexOf(const Item* item, int column = 0) const {
        const auto row = row_.constFind(item);
        if (!item || row == row_.constEnd())
            return {};
        return createIndex(*row, column, item);
    }
    bool isHandedOver(const Item* item) const { return row_.contains(item); }
    // Children of `parent` handed to the view so far.
    int fetchedCount(const Item* parent) const { return fetched_.value(parent, 0); }
    // Items handed to the view so far (the root included): what the model has looked at.
    qsizetype handedOverCount() const { return row_.size(); }

    // Hands every child of every item to the view: walks the whole tree, so
    // it is for tests and small trees only.
    void fetchAll() {
        if (!root_)
            return;
        std::vector<const Item*> stack{root_};
        while (!stack.empty()) {
            const Item* i = stack.back();
            stack.pop_back();
            const QModelIndex idx = indexOf(i);
            while (canFetchMore(idx))
                fetchMore(idx);
            for (std::size_t c = 0; c < Traits::childCount(*i); ++c)
                stack.push_back(Traits::child(*i, c));
        }
    }
    // Hands `item` and its ancestors to the view, so it can be shown or
    // selected: only the batches up to it, nothing beside the path.
    void ensureFetched(const Item* item) {
        if (!item || !Traits::parent(*item) || isHandedOver(item))
            return;
        ensureFetched(Traits::parent(*item));
        const QModelIndex parent = indexOf(Traits::parent(*item));
        while (!isHandedOver(item) && canFetchMore(parent))
            fetchMore(parent);
    }

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override {
        if (!root_ || row < 0 || column < 0 || column >= columnCount(parent))
            return {};
        if (!parent.isValid())
            return row == 0 ? createIndex(0, column, root_) : QModelIndex();
        const Item* p = item(parent);
        if (parent.column() != 0 || row >= fetchedCount(p))
            return {};
        return createIndex(row, column, Traits::child(*p, static_cast<std::size_t>(row)));
    }
    QModelIndex parent(const QModelIndex& child) const override {
        const Item* i = item(child);
        return i && Traits::parent(*i) ? indexOf(Traits::parent(*i)) : QModelIndex();
    }
    int rowCount(const QModelIndex& parent = {}) const override {
        if (!parent.isValid())
            return root_ ? 1 : 0;
        return parent.column() == 0 ? fetchedCount(item(parent)) : 0;
    }
    bool hasChildren(const QModelIndex& parent = {}) const override {
        if (!parent.isValid())
            return root_ != nullptr;
        return parent.column() == 0 && Traits::childCount(*item(parent)) > 0;
    }
    bool canFetchMore(const QModelIndex& parent) const override {
        const Item* i = item(parent);
        return i && parent.column() == 0 &&
               fetchedCount(i) < static_cast<int>(Traits::childCount(*i));
    }
    void fetchMore(const QModelIndex& parent) override {
        if (!canFetchMore(parent))
            return;
        const Item* p = item(parent);
        const int first = fetchedCount(p);
        const int count = std::min(kFetchBatch, static_cast<int>(Traits::childCount(*p)) - first);
        beginInsertRows(parent, first, first + count - 1);
        for (int row = first; row < first + count; ++row)
            row_.insert(Traits::child(*p, static_cast<std::size_t>(row)), row);
        fetched_.insert(p, first + count);
        endInsertRows();
    }

protected:
    // Shows the tree under `root` (nullptr: nothing). Call between
    // beginResetModel() and endResetModel().
    void resetRoot(const Item* root) {
        root_ = root;
        row_.clear();
        fetched_.clear();
        if (root_)
            row_.insert(root_, 0);
    }

private:
    const Item* root_ = nullptr;
    QHash<const Item*, int> row_;      // rows of the items handed to the view
    QHash<const Item*, int> fetched_;  // children handed to the view so far
};
