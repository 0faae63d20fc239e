#pragma once

#include <QModelIndexList>
#include <QSet>
#include <QSortFilterProxyModel>

#include "key_search.h"

class KeyTreeModel;

// Finds keys by substring (case-insensitive) at any depth: a row shows when
// its key matches or when it leads to a match. The matching runs on a worker
// (KeySearch over the document's KeyIndex) and matches arrive in batches;
// only the rows on the way to them are fetched, nothing else of the tree.
class KeyFilterModel : public QSortFilterProxyModel {
    Q_OBJECT

public:
    explicit KeyFilterModel(QObject* parent = nullptr);
    void setKeyModel(KeyTreeModel* model);
    // An empty pattern shows everything; another starts a search that
    // supersedes the one running.
    void setPattern(const QString& pattern);
    const QString& pattern() const { return pattern_; }
    // A search runs, or waits for the key index it needs.
    bool isSearching() const { return waitingForIndex_ || search_->isRunning(); }
    KeySearch* search() const { return search_; }
    // Keys matched so far by the current pattern.
    int matchCount() const { return matchCount_; }

Q_SIGNALS:
    // Rows (of this model) newly leading to matches: the view expands them.
    void matchPathsShown(const QModelIndexList& rows);
    // The search for the current pattern is complete.
    void searchFinished(int matchCount);

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    void startSearch();
    void showMatches(const KeySearch::Matches& matches);

    KeyTreeModel* keys_ = nullptr;
    QList<QMetaObject::Connection> keyConnections_;
    QString pattern_;
    KeySearch* search_;
    QSet<const tensordict::Node*> shown_;  // the matches and the nodes leading to them
    int matchCount_ = 0;
    bool waitingForIndex_ = false;  // a pattern is set; the search starts with the index
};
