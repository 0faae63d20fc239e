#pragma once

#include <QFutureWatcher>
#include <QObject>
#include <QString>
#include <QTimer>
#include <memory>
#include <vector>

#include "tensordict/compare.h"

class CompareTree;

// One comparison of two loaded tensordicts on a worker thread: their union
// tree first (CompareTree, metadata only), then tensordict::compare(). The
// worker only fills a queue under a mutex; a timer on the GUI thread drains
// it in batches, so the worker never touches a QObject.
class CompareJob : public QObject {
    Q_OBJECT

public:
    CompareJob(std::shared_ptr<const tensordict::TensorDict> a,
               std::shared_ptr<const tensordict::TensorDict> b,
               const tensordict::Tolerance& tolerance, QObject* parent = nullptr);
    ~CompareJob() override;  // cancels, and waits for the worker

    void start();
    // The comparison stops at its next progress report; finished() follows.
    void cancel();
    bool isRunning() const { return running_; }
    // After finished(): whether it was cancelled, and why it failed ("" if it did not).
    bool wasCancelled() const { return cancelled_; }
    const QString& error() const { return error_; }
    tensordict::CompareProgress progress() const { return progress_; }
    // The union tree, once treeReady() was emitted (taken once).
    std::unique_ptr<CompareTree> takeTree();

Q_SIGNALS:
    void treeReady();
    void keysCompared(const std::vector<tensordict::KeyComparison>& batch);
    void progressed(const tensordict::CompareProgress& progress);
    void finished();

private:
    struct Shared;
    struct Outcome {
        bool cancelled = false;
        QString error;
    };
    void drain();
    void done();

    std::shared_ptr<const tensordict::TensorDict> a_, b_;
    tensordict::Tolerance tolerance_;
    std::shared_ptr<Shared> shared_;
    std::unique_ptr<CompareTree> tree_;
    bool treeTaken_ = false;
    QTimer timer_;
    QFutureWatcher<Outcome> watcher_;
    bool running_ = false;
    bool cancelled_ = false;
    QString error_;
    tensordict::CompareProgress progress_;
};
