#pragma once

#include <QObject>
#include <QString>
#include <memory>
#include <vector>

#include "job_tracker.h"
#include "key_index.h"

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

    // Starts matching `pattern` over `keys`.
    void start(std::shared_ptr<const KeyIndex> keys, const QString& pattern);
    void cancel() { job_.cancel(); }
    bool isRunning() const { return job_.isBusy(); }
    // Blocks until the worker is done; its batches may still be on their way
    // through the event loop (tests use this to supersede a search late).
    void waitForWorker();

    // The matching itself, run by the worker: matches in tree order, sent in
    // batches; stops early once `cancel` is. Returns how many it found.
    static int match(const tensordict::CancelToken& cancel, const JobSend<Matches>& send,
                     const KeyIndex& keys, const QString& pattern);

Q_SIGNALS:
    void matchesFound(const KeySearch::Matches& matches);
    void finished(int matchCount);

private:
    JobTracker<int> job_{this};
};
