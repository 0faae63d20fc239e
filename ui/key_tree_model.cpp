#include "key_tree_model.h"

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

QString KeyTreeModel::displayKey(const std::string& key) {
    if (key.empty())
        return QStringLiteral("\"\"");
    QString out;
    for (const QChar c : QString::fromStdString(key)) {
        if (c == '\t')
            out += "\\t";
        else if (c == '\n')
            out += "\\n";
        else if (c.unicode() < 0x20 || c.unicode() == 0x7f)
            out += QString("\\x%1").arg(c.unicode(), 2, 16, QChar('0'));
        else
            out += c;
    }
    return out;
}

std::uint64_t KeyTreeModel::totalBytesOf(const Node& node) {
    std::uint64_t total = node.kind == NodeKind::Tensor ? node.nbytes : 0;
    for (const auto& c : node.children)
        total += totalBytesOf(*c);
    return total;
}

QString KeyTreeModel::shapeText(const std::vector<std::int64_t>& shape) {
    QString text(QLatin1Char('['));
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i)
            text += QLatin1String(", ");
        text += QString::number(shape[i]);
    }
    return text + QLatin1Char(']');
}

QString KeyTreeModel::byteSizeText(std::uint64_t bytes) {
    static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = static_cast<double>(bytes);
    int u = 0;
    while (v >= 1024 && u < 5)
        v /= 1024, ++u;
    return u == 0 ? QString("%1 B").arg(bytes)
                  : QString("%1 %2").arg(v, 0, 'f', v < 10 ? 2 : 1).arg(units[u]);
}

QString KeyTreeModel::keyPathText(const std::vector<std::string>& path) {
    // A Python expression that indexes the tensordict: td["a", "b"].
    QStringList parts;
    for (const auto& k : path) {
        QString s = QString::fromStdString(k);
        s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\t", "\\t").replace("\n", "\\n");
        parts << "\"" + s + "\"";
    }
    if (parts.size() == 1)
        return parts.front();
    return "(" + parts.join(", ") + ")";
}

QString KeyTreeModel::kindText(const Node& node) {
    return QString::fromUtf8(tensordict::kindName(node.kind).data(),
                             static_cast<int>(tensordict::kindName(node.kind).size()));
}

QString KeyTreeModel::storageText(const Node& node) {
    using tensordict::StorageKind;
    switch (node.storage.kind) {
        case StorageKind::None:
            return node.kind == NodeKind::Tensor ? tr("no file (empty)") : QString();
        case StorageKind::File:
            return node.storage.outsideTarget.empty() ? tr("file")
                                                      : tr("file, linked from outside the dataset");
        case StorageKind::Memory:
            return tr("memory");
        case StorageKind::StoredEntry:
            return tr("stored entry");
        case StorageKind::CompressedEntry:
            return tr("compressed entry (%1)")
                .arg(QString::fromStdString(tensordict::zipMethodName(node.storage.zipMethod)));
    }
    return {};
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
                    return isRoot ? rootLabel_ : displayKey(n->key);
                case KindColumn:
                    if (n->kind == NodeKind::TensorClass || n->kind == NodeKind::View)
                        return kindText(*n) + " " + QString::fromStdString(n->className);
                    return kindText(*n);
                case ShapeColumn:
                    if (n->kind == NodeKind::Tensor)
                        return n->isNested ? tr("nested, %1 parts").arg(n->nestedShapes.size())
                                           : shapeText(n->shape);
                    if (n->kind == NodeKind::Error)
                        return {};
                    return shapeText(n->batchSize);
                case DTypeColumn:
                    return n->kind == NodeKind::Tensor ? QString::fromStdString(n->className)
                                                       : QVariant();
                case SizeColumn:
                    return n->kind == NodeKind::Error || n->kind == NodeKind::NonTensorData ||
                                   n->kind == NodeKind::NonTensorStack
                               ? QVariant()
                               : byteSizeText(bytes_.value(n));
                case StorageColumn:
                    return n->kind == NodeKind::Error ? QString::fromStdString(n->error)
                                                      : storageText(*n);
            }
            return {};
        case Qt::ToolTipRole:
            if (n->kind == NodeKind::Error)
                return QString::fromStdString(n->error);
            if (index.column() == KeyColumn)
                return keyPathText(n->keyPath());
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
