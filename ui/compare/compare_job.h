#pragma once

#include <QObject>
#include <atomic>
#include <memory>
#include <vector>

#include "common/job_outcome.h"
#include "common/job_tracker.h"
#include "tensordict/compare.h"

class CompareTree;

// One comparison of two loaded tensordicts, run through JobTracker: their
// union tree first (CompareTree, metadata only), then tensordict::compare().
// The worker hands its results over in batches (the tree, then keys and
// progress at most every kBatchInterval), which arrive on the GUI thread in
// order as signals; the worker never touches a QObject. Destroying the job
// cancels the comparison and waits for it.
class CompareJob : public QObject {
    Q_OBJECT

public:
    CompareJob(std::shared_ptr<const tensordict::TensorDict> a,
               std::shared_ptr<const tensordict::TensorDict> b,
               const tensordict::Tolerance& tolerance, QObject* parent = nullptr);
    ~CompareJob() override;

    void start();
    // The comparison stops at its next progress report; finished() follows.
    // A cancel before start() holds for that start.
    void cancel();
    bool isRunning() const { return tracker_.isBusy(); }
    // After finished(): done, cancelled, or failed with its kind, where and why.
    const JobOutcome& outcome() const { return outcome_; }
    bool wasCancelled() const { return outcome_.isCancelled(); }
    tensordict::CompareProgress progress() const { return progress_; }
    // The union tree, once treeReady() was emitted (taken once).
    std::unique_ptr<CompareTree> takeTree();

Q_SIGNALS:
    void treeReady();
    void keysCompared(const std::vector<tensordict::KeyComparison>& batch);
    void progressed(const tensordict::CompareProgress& progress);
    void finished();

private:
    // What the worker hands over at once: any of the tree, a batch of keys, progress.
    struct Part {
        std::unique_ptr<CompareTree> tree;
        std::vector<tensordict::KeyComparison> keys;
        bool progressed = false;
        tensordict::CompareProgress progress;
    };
    void receive(Part part);
    void finish(JobOutcome outcome);

    std::shared_ptr<const tensordict::TensorDict> a_, b_;
    tensordict::Tolerance tolerance_;
    tensordict::CancelToken cancel_;
    // Batches sent and not yet received (the worker waits for none before the next).
    std::shared_ptr<std::atomic<int>> partsInFlight_ = std::make_shared<std::atomic<int>>(0);
    std::unique_ptr<CompareTree> tree_;
    JobOutcome outcome_;
    tensordict::CompareProgress progress_;
    JobTracker<JobOutcome> tracker_{this};  // last: joined first
};
