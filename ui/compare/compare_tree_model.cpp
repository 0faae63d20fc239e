#include "compare_tree_model.h"

#include <QApplication>
#include <QBrush>
#include <QFont>
#include <QPalette>
#include <QStyle>
#include <algorithm>
#include <unordered_set>

#include "compare_status.h"
#include "node_text.h"

using Item = CompareTree::Item;
using Status = CompareTree::Status;
using tensordict::Node;
using tensordict::NodeKind;

CompareTreeModel::CompareTreeModel(QObject* parent) : QAbstractItemModel(parent) {}

CompareTreeModel::~CompareTreeModel() = default;

void CompareTreeModel::setTree(std::unique_ptr<CompareTree> tree,
                               std::shared_ptr<const tensordict::TensorDict> a,
                               std::shared_ptr<const tensordict::TensorDict> b,
                               const QString& rootLabel) {
    beginResetModel();
    tree_ = std::move(tree);
    a_ = std::move(a);
    b_ = std::move(b);
    rootLabel_ = rootLabel;
    fetched_.clear();
    endResetModel();
}

const Item* CompareTreeModel::item(const QModelIndex& index) const {
    return index.isValid() ? static_cast<const Item*>(index.internalPointer()) : nullptr;
}

QModelIndex CompareTreeModel::indexOf(const Item* item, int column) const {
    if (!item || !tree_ || !isShown(item))
        return {};
    return createIndex(item->row, column, const_cast<Item*>(item));
}

bool CompareTreeModel::isShown(const Item* item) const {
    return !item->parent || item->row < fetchedCount(item->parent);
}

QModelIndex CompareTreeModel::index(int row, int column, const QModelIndex& parent) const {
    if (!tree_ || row < 0 || column < 0 || column >= ColumnCount)
        return {};
    if (!parent.isValid())
        return row == 0 ? createIndex(0, column, const_cast<Item*>(&tree_->root())) : QModelIndex();
    const Item* p = item(parent);
    if (row >= fetchedCount(p))
        return {};
    return createIndex(row, column, p->children[static_cast<std::size_t>(row)].get());
}

QModelIndex CompareTreeModel::parent(const QModelIndex& child) const {
    const Item* i = item(child);
    if (!i || !i->parent)
        return {};
    return indexOf(i->parent);
}

int CompareTreeModel::rowCount(const QModelIndex& parent) const {
    if (!parent.isValid())
        return tree_ ? 1 : 0;
    if (parent.column() != 0)
        return 0;
    return fetchedCount(item(parent));
}

int CompareTreeModel::columnCount(const QModelIndex&) const {
    return ColumnCount;
}

bool CompareTreeModel::hasChildren(const QModelIndex& parent) const {
    if (!parent.isValid())
        return tree_ != nullptr;
    return parent.column() == 0 && !item(parent)->children.empty();
}

bool CompareTreeModel::canFetchMore(const QModelIndex& parent) const {
    const Item* i = item(parent);
    return i && parent.column() == 0 && fetchedCount(i) < static_cast<int>(i->children.size());
}

void CompareTreeModel::fetchMore(const QModelIndex& parent) {
    if (!canFetchMore(parent))
        return;
    const Item* i = item(parent);
    const int first = fetchedCount(i);
    const int count = std::min(kFetchBatch, static_cast<int>(i->children.size()) - first);
    beginInsertRows(parent, first, first + count - 1);
    fetched_.insert(i, first + count);
    endInsertRows();
}

void CompareTreeModel::fetchAll() {
    if (!tree_)
        return;
    std::vector<const Item*> stack{&tree_->root()};
    while (!stack.empty()) {
        const Item* i = stack.back();
        stack.pop_back();
        const QModelIndex idx = indexOf(i);
        while (canFetchMore(idx))
            fetchMore(idx);
        for (const auto& c : i->children)
            stack.push_back(c.get());
    }
}

void CompareTreeModel::ensureFetched(const Item* i) {
    if (!i || !i->parent)
        return;
    ensureFetched(i->parent);
    const QModelIndex parent = indexOf(i->parent);
    while (fetchedCount(i->parent) <= i->row && canFetchMore(parent))
        fetchMore(parent);
}

std::vector<const Item*> CompareTreeModel::apply(
    const std::vector<tensordict::KeyComparison>& batch) {
    std::vector<Item*> touched;
    if (!tree_)
        return {};
    for (const auto& k : batch)
        tree_->apply(k, &touched);
    refresh(touched);
    return {touched.begin(), touched.end()};
}

void CompareTreeModel::markNotCompared() {
    if (!tree_)
        return;
    std::vector<Item*> touched;
    tree_->markNotCompared(&touched);
    refresh(touched);
}

void CompareTreeModel::refresh(const std::vector<Item*>& touched) {
    // One signal per row the view has; rows not fetched yet are read when they are.
    std::unordered_set<const Item*> seen;
    for (const Item* i : touched) {
        if (!seen.insert(i).second || !isShown(i))
            continue;
        Q_EMIT dataChanged(indexOf(i, 0), indexOf(i, ColumnCount - 1));
    }
}

QVariant CompareTreeModel::data(const QModelIndex& index, int role) const {
    const Item* i = item(index);
    if (!i)
        return {};
    const Node* either = i->a ? i->a : i->b;
    switch (role) {
        case Qt::DisplayRole:
            switch (index.column()) {
                case KeyColumn:
                    return i->parent ? nodetext::displayKey(i->key) : rootLabel_;
                case StatusColumn:
                    return compare_status::itemStatusText(*i);
                case AColumn:
                    return compare_status::sideText(i->a);
                case BColumn:
                    return compare_status::sideText(i->b);
                case DifferenceColumn:
                    return compare_status::differenceText(*i);
            }
            return {};
        case Qt::ToolTipRole:
            switch (index.column()) {
                case KeyColumn:
                    return nodetext::keyPathText(i->keyPath());
                case DifferenceColumn:
                    return compare_status::differenceText(*i);
            }
            return {};
        case Qt::DecorationRole: {
            if (index.column() == StatusColumn)
                return compare_status::statusIcon(i->status, i->differingBelow > 0);
            QStyle* style = QApplication::style();
            if (index.column() != KeyColumn || !style)
                return {};
            switch (either->kind) {
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
        case Qt::ForegroundRole:
            if (index.column() == StatusColumn)
                return QBrush(compare_status::statusColor(
                    i->status == Status::Same && i->differingBelow ? Status::Changed : i->status));
            if ((index.column() == AColumn && !i->a) || (index.column() == BColumn && !i->b))
                return QBrush(compare_status::statusColor(Status::Same));
            return {};
        case Qt::BackgroundRole:
            if (i->differs())
                return QBrush(compare_status::rowTint(i->status, QApplication::palette()));
            return {};
        case Qt::FontRole:
            if (index.column() == StatusColumn && i->differs()) {
                QFont font;
                font.setBold(true);
                return font;
            }
            return {};
        case StatusRole:
            return static_cast<int>(i->status);
        case DiffersRole:
            return i->differs();
        case DifferingBelowRole:
            return i->differingBelow;
        case KeyPathRole: {
            QStringList path;
            for (const auto& k : i->keyPath())
                path << QString::fromStdString(k);
            return path;
        }
    }
    return {};
}

QVariant CompareTreeModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
        case KeyColumn:
            return tr("Key");
        case StatusColumn:
            return tr("Status");
        case AColumn:
            return tr("A");
        case BColumn:
            return tr("B");
        case DifferenceColumn:
            return tr("Difference");
    }
    return {};
}
