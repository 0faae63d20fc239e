#include "compare_tree_model.h"

#include <QApplication>
#include <QBrush>
#include <QFont>
#include <QPalette>
#include <algorithm>
#include <unordered_set>

#include "compare_status.h"
#include "node_icon.h"
#include "node_text.h"

using Item = CompareTree::Item;
using Status = CompareTree::Status;
using tensordict::Node;
using tensordict::NodeKind;

CompareTreeModel::CompareTreeModel(QObject* parent) : LazyTreeModel(parent) {}

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
    resetRoot(tree_ ? &tree_->root() : nullptr);
    endResetModel();
}

int CompareTreeModel::columnCount(const QModelIndex&) const {
    return ColumnCount;
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
        if (!seen.insert(i).second || !isHandedOver(i))
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
            if (index.column() != KeyColumn)
                return {};
            return nodeKindIcon(either->kind());
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
