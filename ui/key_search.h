#pragma once

#include <QFuture>
#include <QObject>
#include <QPromise>
#include <QString>
#include <memory>
#include <vector>

#include "key_index.h"

template <typename T>
class QFutureWatcher;

// Finds keys by case-insensitive substring on a worker thread, over a
// document's KeyIndex, and streams the matches back in batches (small
// first, so the first ones show at once). A newer search cancels the older
// one, whose batches are dropped even if already on their way.
class KeySearch : public QObject {
    Q_OBJECT

public:
    using Matches = std::vector<const tensordict::Node*>;

    explicit KeySearch(QObject* parent = nullptr);
    ~KeySearch() override;

    // Starts matching `pattern` once `keys` is built (it may still be building).
    void start(QFuture<std::shared_ptr<const KeyIndex>> keys, const QString& pattern);
    void cancel();
    bool isRunning() const { return watcher_ != nullptr; }
    // Blocks until the worker is done; its batches may still be on their way
    // through the event loop (tests use this to supersede a search late).
    void waitForWorker() const;

    // The matching itself, run by the worker: matches in tree order, reported
    // to `promise` in batches; stops early when the promise is cancelled.
    static void match(QPromise<Matches>& promise, const KeyIndex& keys, const QString& pattern);

Q_SIGNALS:
    void matchesFound(const KeySearch::Matches& matches);
    void finished(int matchCount);

private:
    QFutureWatcher<Matches>* watcher_ = nullptr;
    int matchCount_ = 0;
};
