#pragma once

#include <QHash>
#include <memory>

#include "job_tracker.h"
#include "key_index.h"
#include "lazy_tree_model.h"
#include "tensordict/tensordict.h"

template <>
struct TreeItemTraits<tensordict::Node> {
    static const tensordict::Node* parent(const tensordict::Node& n) { return n.parent(); }
    static std::size_t childCount(const tensordict::Node& n) { return n.children().size(); }
    static const tensordict::Node* child(const tensordict::Node& n, std::size_t row) {
        return n.children()[row];
    }
};

// A thin adapter from a loaded tensordict's node tree to Qt's item views.
// The tree is plain data owned by the TensorDict; the model never does I/O.
// Children are handed to the view in batches (LazyTreeModel), so opening a
// document looks at nothing beyond the rows the view asks for; sizes of
// collections come from the document's KeyIndex, built off the GUI thread.
class KeyTreeModel : public LazyTreeModel<tensordict::Node> {
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
    explicit KeyTreeModel(QObject* parent = nullptr);

    // Shows `td` (nullptr: nothing). The model keeps it alive. `keys` is its
    // KeyIndex (the Document builds it while loading); without one, it is
    // built on a worker thread from here, and keyIndexReady() says when.
    void setTensorDict(std::shared_ptr<const tensordict::TensorDict> td, const QString& rootLabel,
                       std::shared_ptr<const KeyIndex> keys = {});
    std::shared_ptr<const tensordict::TensorDict> tensorDict() const { return td_; }
    // The flat index of every key, for the filter; null while it is being built.
    const std::shared_ptr<const KeyIndex>& keyIndex() const { return keys_; }

    const tensordict::Node* node(const QModelIndex& index) const { return item(index); }

    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    // Bytes of all tensors under `node`: from the KeyIndex once it is built,
    // else counted on first display and kept.
    std::uint64_t totalBytes(const tensordict::Node* node) const;
    // What the key column shows: the key, less the prefix of the key group it is in.
    static std::string groupedKey(const tensordict::Node& node);
    // Collections whose size was counted here rather than taken from the KeyIndex.
    qsizetype countedSizes() const { return countedBytes_.size(); }
    // Keys an integrity check found broken: drawn with a red mark (and a
    // tooltip saying why) until another tensordict is shown.
    void setFlagged(QHash<QStringList, QString> whyByKeyPath);
    bool isFlagged(const tensordict::Node* node) const;

Q_SIGNALS:
    // The KeyIndex of the tensordict shown, built here, is ready.
    void keyIndexReady();

private:
    std::shared_ptr<const tensordict::TensorDict> td_;
    QString rootLabel_;
    std::shared_ptr<const KeyIndex> keys_;
    mutable QHash<const tensordict::Node*, std::uint64_t> countedBytes_;
    QHash<QStringList, QString> flagged_;  // key path -> why
    QStringList keyPathOf(const tensordict::Node* node) const;
    JobTracker<std::shared_ptr<const KeyIndex>> indexing_{this};  // last: joined first
};
