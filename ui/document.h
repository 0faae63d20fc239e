#pragma once

#include <QObject>
#include <QString>
#include <memory>
#include <optional>

#include "job_tracker.h"
#include "key_index.h"
#include "tensordict/http.h"
#include "tensordict/tensordict.h"

// One opened tensordict. Loading runs on a worker thread; the GUI thread only
// receives the finished tree (or the error naming the path).
class Document : public QObject {
    Q_OBJECT

public:
    struct LoadResult {
        std::shared_ptr<const tensordict::TensorDict> tensordict;
        std::optional<tensordict::Failure> failure;  // when the whole load failed
        QString error;                               // its text, "path: reason"
        // Every key and the size of every collection, indexed on the worker too.
        std::shared_ptr<const KeyIndex> keys;
        QString headline;  // what is wrong, as a user reads it (describeOpenFailure)
    };

    explicit Document(QObject* parent = nullptr);
    ~Document() override;

    // Starts loading `path`; a load still running is abandoned (its result dropped).
    void open(const QString& path);
    bool isLoading() const { return load_.isBusy(); }
    // Stops the load under way (a slow server's request ends too); the
    // document open before, if any, stays. Emits loadCancelled().
    void cancelLoad();

    const QString& path() const { return path_; }
    std::shared_ptr<const tensordict::TensorDict> tensordict() const { return tensordict_; }
    std::shared_ptr<const KeyIndex> keyIndex() const { return keys_; }
    // Why the last open failed, in words that say what to do ("" after a success).
    const QString& failureHeadline() const { return failureHeadline_; }

    // The web counters when this document began to open: what it fetched
    // since (its load, then its previews) is the counters' growth from these.
    const tensordict::HttpCounters& fetchedBefore() const { return fetchedBefore_; }

    // Loads synchronously; used by the worker and by command-line tools.
    static LoadResult loadNow(const QString& path);

Q_SIGNALS:
    void loadStarted(const QString& path);
    void loaded();
    void failed(const QString& message);
    void loadCancelled(const QString& path);

private:
    void finish(LoadResult result);

    QString path_;
    tensordict::HttpCounters fetchedBefore_;
    QString failureHeadline_;
    std::shared_ptr<const tensordict::TensorDict> tensordict_;
    std::shared_ptr<const KeyIndex> keys_;
    JobTracker<LoadResult> load_{this};
};
