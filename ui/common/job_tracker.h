#pragma once

#include <QFuture>
#include <QFutureWatcher>
#include <QList>
#include <QObject>
#include <QtConcurrent/QtConcurrentRun>
#include <utility>

#include "tensordict/cancel.h"

// One kind of background work for an object that lives on the GUI thread,
// as hotspot's JobTracker: starting a job cancels the one before it, and
// only the newest job's result is delivered, on the owner's thread. Jobs
// never touch the owner; they get what they need by value (a shared tree, a
// leaf's bytes) and a cancel token to poll. Destroying the tracker cancels
// and waits for its jobs, so none outlives the owner.
template <typename Result>
class JobTracker {
public:
    explicit JobTracker(QObject* owner) : owner_(owner) {}
    ~JobTracker() {
        cancel();
        for (QFuture<Result>& f : running_)
            f.waitForFinished();
    }
    JobTracker(const JobTracker&) = delete;
    JobTracker& operator=(const JobTracker&) = delete;

    // Runs `work(const tensordict::CancelToken&) -> Result` on the thread
    // pool, then `deliver(Result)` on the owner's thread unless another job
    // was started or cancel() called since. `work` must not throw.
    template <typename Work, typename Deliver>
    void start(Work work, Deliver deliver) {
        cancel();
        const quint64 job = generation_;
        token_ = tensordict::CancelToken();
        busy_ = true;
        auto* watcher = new QFutureWatcher<Result>(owner_);
        QObject::connect(watcher, &QFutureWatcherBase::finished, owner_,
                         [this, watcher, job, deliver = std::move(deliver)] {
                             watcher->deleteLater();
                             prune();
                             if (job != generation_)
                                 return;
                             busy_ = false;
                             deliver(watcher->result());
                         });
        const QFuture<Result> future = QtConcurrent::run(
            [work = std::move(work), token = token_]() -> Result { return work(token); });
        watcher->setFuture(future);
        running_.append(future);
    }

    // The running job, if any, stops soon; its result is dropped.
    void cancel() {
        token_.cancel();
        ++generation_;
        busy_ = false;
    }

    // A job was started and its result is neither delivered nor dropped yet.
    bool isBusy() const { return busy_; }
    // Blocks until every job started so far has returned (tests, shutdown).
    void waitForFinished() {
        for (QFuture<Result>& f : running_)
            f.waitForFinished();
    }

private:
    void prune() {
        running_.removeIf([](const QFuture<Result>& f) { return f.isFinished(); });
    }

    QObject* owner_;
    quint64 generation_ = 0;
    bool busy_ = false;
    tensordict::CancelToken token_;
    QList<QFuture<Result>> running_;
};
