#pragma once

#include <QAbstractItemModel>
#include <QHash>
#include <memory>

#include "tensordict/tensordict.h"

// A thin adapter from a loaded tensordict's node tree to Qt's item views.
// The tree is plain data owned by the TensorDict; the model never does I/O.
// Children are handed to the view in batches (canFetchMore/fetchMore) so a
// node with millions of keys opens instantly.
class KeyTreeModel : public QAbstractItemModel {
    Q_OBJECT

public:
    enum Column {
        KeyColumn,
        KindColumn,
        ShapeColumn,
        DTypeColumn,
        SizeColumn,
        StorageColumn,
        ColumnCount
    };
    enum Role { NodeRole = Qt::UserRole + 1, KeyPathRole, IsErrorRole };
    static constexpr int kFetchBatch = 256;

    explicit KeyTreeModel(QObject* parent = nullptr);

    // Shows `td` (nullptr: nothing). The model keeps it alive.
    void setTensorDict(std::shared_ptr<const tensordict::TensorDict> td, const QString& rootLabel);
    std::shared_ptr<const tensordict::TensorDict> tensorDict() const { return td_; }

    const tensordict::Node* node(const QModelIndex& index) const;
    QModelIndex indexOf(const tensordict::Node* node) const;
    // Hands every child of every node to the view (used while filtering).
    void fetchAll();
    // Hands `node` and its ancestors to the view, so it can be selected.
    void ensureFetched(const tensordict::Node* node);

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

    // Bytes of all tensors under `node` (computed once per tree).
    std::uint64_t totalBytes(const tensordict::Node* node) const { return bytes_.value(node); }

private:
    int fetchedCount(const tensordict::Node* node) const;
    void indexRows(const tensordict::Node& node);

    std::shared_ptr<const tensordict::TensorDict> td_;
    QString rootLabel_;
    QHash<const tensordict::Node*, int> row_;      // a node's row under its parent
    QHash<const tensordict::Node*, int> fetched_;  // children handed to the view so far
    QHash<const tensordict::Node*, std::uint64_t> bytes_;
};
