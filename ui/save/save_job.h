#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <memory>
#include <optional>

#include "common/job_outcome.h"
#include "common/job_tracker.h"
#include "tensordict/save.h"

// One save on libtensordict's writer threads, run through JobTracker:
// progress and the outcome arrive on the GUI thread as signals; the GUI
// never waits on the writers. Destroying the job cancels the save and waits
// for it.
class SaveJob : public QObject {
    Q_OBJECT

public:
    explicit SaveJob(QObject* parent = nullptr);
    ~SaveJob() override;

    // options.progress, when set, is called as well (on the writer threads,
    // after the report is posted to the GUI thread); options.cancel cancels
    // the job as cancel() does.
    void start(std::shared_ptr<const tensordict::TensorDict> data, const QString& prefix,
               tensordict::SaveOptions options);
    void cancel();
    bool isRunning() const { return tracker_.isBusy(); }
    const QString& prefix() const { return prefix_; }
    bool atomic() const { return atomic_; }

    const tensordict::SaveProgress& progress() const { return progress_; }
    double bytesPerSecond() const;
    // Seconds left at the current throughput, or -1 while unknown.
    double secondsLeft() const;

Q_SIGNALS:
    void progressed(const tensordict::SaveProgress& progress);
    void succeeded(const tensordict::TensorDict& result);
    // The failure's kind, where and why (JobOutcome::text() renders it).
    void failed(const JobOutcome& outcome);
    void cancelled();

private:
    struct Saved {
        JobOutcome outcome;
        std::optional<tensordict::TensorDict> result;  // when done
    };
    void onProgress(const tensordict::SaveProgress& progress);
    void finish(Saved saved);

    tensordict::SaveProgress progress_;
    QElapsedTimer clock_;
    QString prefix_;
    bool atomic_ = false;
    tensordict::CancelToken cancel_;
    JobTracker<Saved> tracker_{this, JobDelivery::Every};  // last: joined first
};
