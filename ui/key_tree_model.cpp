#include "key_tree_model.h"

#include "node_icon.h"
#include "node_text.h"

#include <QBrush>
#include <QColor>

using tensordict::Node;
using tensordict::NodeKind;

KeyTreeModel::KeyTreeModel(QObject* parent) : LazyTreeModel(parent) {}

void KeyTreeModel::setTensorDict(std::shared_ptr<const tensordict::TensorDict> td,
                                 const QString& rootLabel, std::shared_ptr<const KeyIndex> keys) {
    indexing_.cancel();  // an index still being built is of the tree shown before
    beginResetModel();
    td_ = std::move(td);
    rootLabel_ = rootLabel;
    countedBytes_.clear();
    flagged_.clear();  // the marks of a check are of the tree it checked
    keys_ = td_ ? std::move(keys) : nullptr;
    resetRoot(td_ ? &td_->root() : nullptr);
    endResetModel();
    if (td_ && !keys_)
        // Holding only the tree, a superseded build is left to end alone:
        // the model neither waits for it nor hears from it.
        indexing_.startUnawaited(
            [td = td_](const tensordict::CancelToken&) { return KeyIndex::build(td); },
            [this](std::shared_ptr<const KeyIndex> built) {
                keys_ = std::move(built);
                Q_EMIT keyIndexReady();
            });
}

std::uint64_t KeyTreeModel::totalBytes(const Node* n) const {
    if (!n)
        return 0;
    if (n->isTensor())
        return n->leaf().dataBytes();
    if (keys_)
        if (const auto bytes = keys_->collectionBytes(n))
            return *bytes;
    // The index is still being built: count this subtree once.
    const auto counted = countedBytes_.constFind(n);
    if (counted != countedBytes_.constEnd())
        return *counted;
    return *countedBytes_.insert(n, nodetext::totalBytesOf(*n));
}

std::string KeyTreeModel::groupedKey(const tensordict::Node& n) {
    // Inside a key group the shared prefix is the group's row: "weight" under "conv".
    std::string key = n.key();
    if (n.parent() && n.parent()->isKeyGroup())
        key.erase(0, n.parent()->key().size());
    if (n.isKeyGroup() && !key.empty())
        key.pop_back();  // the group "conv." shows as "conv"
    return key;
}

int KeyTreeModel::columnCount(const QModelIndex&) const {
    return ColumnCount;
}

QVariant KeyTreeModel::data(const QModelIndex& index, int role) const {
    const Node* n = node(index);
    if (!n)
        return {};
    const bool isRoot = n->parent() == nullptr;
    switch (role) {
        case Qt::DisplayRole:
            switch (index.column()) {
                case KeyColumn:
                    return isRoot ? rootLabel_ : nodetext::displayKey(groupedKey(*n));
                case KindColumn:
                    if (n->kind() == NodeKind::TensorClass || n->kind() == NodeKind::View)
                        return nodetext::kindText(*n) + " " +
                               QString::fromStdString(n->className());
                    // A checkpoint's dict, list or object: its Python class says more.
                    if (n->kind() == NodeKind::Container || n->kind() == NodeKind::Object)
                        return QString::fromStdString(n->className());
                    return nodetext::kindText(*n);
                case ShapeColumn:
                    if (n->isTensor())
                        return n->leaf().isNested
                                   ? tr("nested, %1 parts").arg(n->leaf().nestedShapes.size())
                                   : nodetext::shapeText(n->leaf().shape);
                    if (n->isError() || n->kind() == NodeKind::Container ||
                        n->kind() == NodeKind::Object)
                        return {};  // no batch size
                    return nodetext::shapeText(n->batchSize());
                case DTypeColumn:
                    return n->isTensor() ? QVariant(nodetext::leafDtypeText(*n)) : QVariant();
                case SizeColumn:
                    return n->isError() || n->kind() == NodeKind::NonTensorData ||
                                   n->kind() == NodeKind::NonTensorStack
                               ? QVariant()
                               : nodetext::byteSizeText(totalBytes(n));
                case StorageColumn:
                    return n->isError() ? QString::fromStdString(n->error())
                                        : nodetext::storageText(*n);
            }
            return {};
        case Qt::ToolTipRole:
            if (n->isError())
                return QString::fromStdString(n->error());
            if (index.column() == KeyColumn) {
                // A key a check found broken says why.
                if (const auto why = flagged_.constFind(keyPathOf(n)); why != flagged_.constEnd())
                    return nodetext::keyPathText(n->keyPath()) + "\n" + *why;
                return nodetext::keyPathText(n->keyPath());
            }
            if (index.column() == DTypeColumn && n->isTensor())  // torch's name beside the file's
                return nodetext::torchDtypeText(n->leaf().dtype);
            return {};
        case Qt::ForegroundRole:
            // Red for what could not be read; grey for a part tdstudio
            // leaves unread that need not be damaged.
            if (n->isError())
                return n->isUnread() ? QBrush(QColor(0x6e, 0x6e, 0x6e))
                                     : QBrush(QColor(0xc0, 0x1c, 0x28));
            return {};
        case Qt::TextAlignmentRole:
            if (index.column() == SizeColumn)
                return int(Qt::AlignRight | Qt::AlignVCenter);
            return {};
        case Qt::DecorationRole:
            if (index.column() != KeyColumn)
                return {};
            return isFlagged(n) ? flaggedIcon() : nodeKindIcon(n->kind());
        case NodeRole:
            return QVariant::fromValue(reinterpret_cast<quintptr>(n));
        case KeyPathRole: {
            QStringList path;
            for (const auto& k : n->keyPath())
                path << QString::fromStdString(k);
            return path;
        }
        case IsErrorRole:
            return n->isError();
    }
    return {};
}

QStringList KeyTreeModel::keyPathOf(const tensordict::Node* node) const {
    QStringList path;
    for (const auto& k : node->keyPath())
        path << QString::fromStdString(k);
    return path;
}

void KeyTreeModel::setFlagged(QHash<QStringList, QString> whyByKeyPath) {
    flagged_ = std::move(whyByKeyPath);
    // Marks at any depth: every view repaints what it shows (nothing moves).
    Q_EMIT layoutAboutToBeChanged();
    Q_EMIT layoutChanged();
}

bool KeyTreeModel::isFlagged(const tensordict::Node* node) const {
    return !flagged_.isEmpty() && !node->isKeyGroup() && flagged_.contains(keyPathOf(node));
}

QVariant KeyTreeModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
        case KeyColumn:
            return tr("Key");
        case KindColumn:
            return tr("Kind");
        case ShapeColumn:
            return tr("Shape");
        case DTypeColumn:
            return tr("DType");
        case SizeColumn:
            return tr("Size");
        case StorageColumn:
            return tr("Storage");
    }
    return {};
}
