#include "key_filter_model.h"

#include "key_tree_model.h"

#include <utility>

using tensordict::Node;

KeyFilterModel::KeyFilterModel(QObject* parent)
    : QSortFilterProxyModel(parent), search_(new KeySearch(this)) {
    setFilterKeyColumn(KeyTreeModel::KeyColumn);
    connect(search_, &KeySearch::matchesFound, this, &KeyFilterModel::showMatches);
    connect(search_, &KeySearch::finished, this, &KeyFilterModel::searchFinished);
}

void KeyFilterModel::setKeyModel(KeyTreeModel* model) {
    for (const QMetaObject::Connection& c : std::exchange(keyConnections_, {}))
        disconnect(c);
    keys_ = model;
    setSourceModel(model);
    // A new document: the matches of the old one are gone, search the new one.
    keyConnections_ << connect(model, &QAbstractItemModel::modelAboutToBeReset, this, [this] {
        search_->cancel();
        shown_.clear();
        matchCount_ = 0;
    });
    keyConnections_ << connect(model, &QAbstractItemModel::modelReset, this,
                               &KeyFilterModel::startSearch);
    keyConnections_ << connect(model, &KeyTreeModel::keyIndexReady, this, [this] {
        if (waitingForIndex_)
            startSearch();
    });
}

void KeyFilterModel::setPattern(const QString& pattern) {
    pattern_ = pattern;
    startSearch();
}

void KeyFilterModel::startSearch() {
    search_->cancel();
    shown_.clear();
    matchCount_ = 0;
    // Until the first matches arrive, nothing shows (or everything, without a pattern).
    invalidateRowsFilter();
    const bool searchable = !pattern_.isEmpty() && keys_ && keys_->tensorDict();
    waitingForIndex_ = searchable && !keys_->keyIndex();
    if (searchable && !waitingForIndex_)
        search_->start(keys_->keyIndex(), pattern_);
}

void KeyFilterModel::showMatches(const KeySearch::Matches& matches) {
    matchCount_ += static_cast<int>(matches.size());
    std::vector<const Node*> newPaths;  // collections newly leading to a match
    bool shownBefore = false;           // a row the view already had changes its verdict
    for (const Node* match : matches) {
        shown_.insert(match);
        shownBefore |= keys_->isHandedOver(match);
        for (const Node* up = match->parent(); up && !shown_.contains(up); up = up->parent()) {
            shown_.insert(up);
            newPaths.push_back(up);
            shownBefore |= keys_->isHandedOver(up);
        }
    }
    // Rows fetched now are filtered as they are inserted; only rows fetched
    // earlier need filtering again.
    for (const Node* match : matches)
        keys_->ensureFetched(match);
    if (shownBefore)
        invalidateRowsFilter();
    QModelIndexList rows;
    rows.reserve(static_cast<qsizetype>(newPaths.size()));
    for (const Node* path : newPaths)
        rows << mapFromSource(keys_->indexOf(path));
    Q_EMIT matchPathsShown(rows);
}

bool KeyFilterModel::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
    if (pattern_.isEmpty())
        return true;
    return shown_.contains(keys_->node(keys_->index(sourceRow, 0, sourceParent)));
}
