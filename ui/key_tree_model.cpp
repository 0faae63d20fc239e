#include "key_tree_model.h"

#include "node_text.h"

#include <QApplication>
#include <QBrush>
#include <QColor>
#include <QStyle>

using tensordict::Node;
using tensordict::NodeKind;

KeyTreeModel::KeyTreeModel(QObject* parent) : QAbstractItemModel(parent) {}

void KeyTreeModel::setTensorDict(std::shared_ptr<const tensordict::TensorDict> td,
                                 const QString& rootLabel) {
    beginResetModel();
    td_ = std::move(td);
    rootLabel_ = rootLabel;
    row_.clear();
    fetched_.clear();
    bytes_.clear();
    if (td_) {
        row_.insert(&td_->root(), 0);
        indexRows(td_->root());
    }
    endResetModel();
}

void KeyTreeModel::indexRows(const Node& node) {
    std::uint64_t total = node.kind == NodeKind::Tensor ? node.nbytes : 0;
    for (std::size_t i = 0; i < node.children.size(); ++i) {
        row_.insert(node.children[i].get(), static_cast<int>(i));
        indexRows(*node.children[i]);
        total += bytes_.value(node.children[i].get());
    }
    bytes_.insert(&node, total);
}

const Node* KeyTreeModel::node(const QModelIndex& index) const {
    return index.isValid() ? static_cast<const Node*>(index.internalPointer()) : nullptr;
}

QModelIndex KeyTreeModel::indexOf(const Node* n) const {
    if (!n || !row_.contains(n))
        return {};
    return createIndex(row_.value(n), 0, const_cast<Node*>(n));
}

int KeyTreeModel::fetchedCount(const Node* n) const {
    return fetched_.value(n, 0);
}

QModelIndex KeyTreeModel::index(int row, int column, const QModelIndex& parent) const {
    if (!td_ || row < 0 || column < 0 || column >= ColumnCount)
        return {};
    if (!parent.isValid())
        return row == 0 ? createIndex(0, column, const_cast<Node*>(&td_->root())) : QModelIndex();
    const Node* p = node(parent);
    if (row >= fetchedCount(p))
        return {};
    return createIndex(row, column, p->children[static_cast<std::size_t>(row)].get());
}

QModelIndex KeyTreeModel::parent(const QModelIndex& child) const {
    const Node* n = node(child);
    if (!n || !n->parent)
        return {};
    return indexOf(n->parent);
}

int KeyTreeModel::rowCount(const QModelIndex& parent) const {
    if (!parent.isValid())
        return td_ ? 1 : 0;
    if (parent.column() != 0)
        return 0;
    return fetchedCount(node(parent));
}

int KeyTreeModel::columnCount(const QModelIndex&) const {
    return ColumnCount;
}

bool KeyTreeModel::hasChildren(const QModelIndex& parent) const {
    if (!parent.isValid())
        return td_ != nullptr;
    return parent.column() == 0 && !node(parent)->children.empty();
}

bool KeyTreeModel::canFetchMore(const QModelIndex& parent) const {
    const Node* n = node(parent);
    return n && parent.column() == 0 && fetchedCount(n) < static_cast<int>(n->children.size());
}

void KeyTreeModel::fetchMore(const QModelIndex& parent) {
    if (!canFetchMore(parent))
        return;
    const Node* n = node(parent);
    const int first = fetchedCount(n);
    const int count = std::min(kFetchBatch, static_cast<int>(n->children.size()) - first);
    beginInsertRows(parent, first, first + count - 1);
    fetched_.insert(n, first + count);
    endInsertRows();
}

void KeyTreeModel::fetchAll() {
    if (!td_)
        return;
    std::vector<const Node*> stack{&td_->root()};
    while (!stack.empty()) {
        const Node* n = stack.back();
        stack.pop_back();
        const QModelIndex idx = indexOf(n);
        while (canFetchMore(idx))
            fetchMore(idx);
        for (const auto& c : n->children)
            stack.push_back(c.get());
    }
}

void KeyTreeModel::ensureFetched(const Node* n) {
    if (!n || !n->parent)
        return;
    ensureFetched(n->parent);
    const QModelIndex parent = indexOf(n->parent);
    while (fetchedCount(n->parent) <= row_.value(n) && canFetchMore(parent))
        fetchMore(parent);
}

QVariant KeyTreeModel::data(const QModelIndex& index, int role) const {
    const Node* n = node(index);
    if (!n)
        return {};
    const bool isRoot = n->parent == nullptr;
    switch (role) {
        case Qt::DisplayRole:
            switch (index.column()) {
                case KeyColumn:
                    return isRoot ? rootLabel_ : nodetext::displayKey(n->key);
                case KindColumn:
                    if (n->kind == NodeKind::TensorClass || n->kind == NodeKind::View)
                        return nodetext::kindText(*n) + " " + QString::fromStdString(n->className);
                    return nodetext::kindText(*n);
                case ShapeColumn:
                    if (n->kind == NodeKind::Tensor)
                        return n->isNested ? tr("nested, %1 parts").arg(n->nestedShapes.size())
                                           : nodetext::shapeText(n->shape);
                    if (n->kind == NodeKind::Error)
                        return {};
                    return nodetext::shapeText(n->batchSize);
                case DTypeColumn:
                    return n->kind == NodeKind::Tensor ? QString::fromStdString(n->className)
                                                       : QVariant();
                case SizeColumn:
                    return n->kind == NodeKind::Error || n->kind == NodeKind::NonTensorData ||
                                   n->kind == NodeKind::NonTensorStack
                               ? QVariant()
                               : nodetext::byteSizeText(bytes_.value(n));
                case StorageColumn:
                    return n->kind == NodeKind::Error ? QString::fromStdString(n->error)
                                                      : nodetext::storageText(*n);
            }
            return {};
        case Qt::ToolTipRole:
            if (n->kind == NodeKind::Error)
                return QString::fromStdString(n->error);
            if (index.column() == KeyColumn)
                return nodetext::keyPathText(n->keyPath());
            return {};
        case Qt::ForegroundRole:
            if (n->kind == NodeKind::Error)
                return QBrush(QColor(0xc0, 0x1c, 0x28));
            return {};
        case Qt::TextAlignmentRole:
            if (index.column() == SizeColumn)
                return int(Qt::AlignRight | Qt::AlignVCenter);
            return {};
        case Qt::DecorationRole: {
            if (index.column() != KeyColumn)
                return {};
            QStyle* style = QApplication::style();
            if (!style)
                return {};
            switch (n->kind) {
                case NodeKind::Error:
                    return style->standardIcon(QStyle::SP_MessageBoxWarning);
                case NodeKind::Tensor:
                    return style->standardIcon(QStyle::SP_FileIcon);
                case NodeKind::NonTensorData:
                case NodeKind::NonTensorStack:
                    return style->standardIcon(QStyle::SP_FileDialogDetailedView);
                default:
                    return style->standardIcon(QStyle::SP_DirIcon);
            }
        }
        case NodeRole:
            return QVariant::fromValue(reinterpret_cast<quintptr>(n));
        case KeyPathRole: {
            QStringList path;
            for (const auto& k : n->keyPath())
                path << QString::fromStdString(k);
            return path;
        }
        case IsErrorRole:
            return n->kind == NodeKind::Error;
    }
    return {};
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
