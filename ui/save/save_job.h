#pragma once

#include <QElapsedTimer>
#include <QFutureWatcher>
#include <QObject>
#include <memory>
#include <mutex>
#include <optional>

#include "tensordict/save.h"

// One save running on libtensordict's writer threads (saveAsync, Python's
// return_early). Progress arrives here on the GUI thread as signals; the GUI
// never waits on the writers.
class SaveJob : public QObject {
    Q_OBJECT

public:
    explicit SaveJob(QObject* parent = nullptr);
    ~SaveJob() override;

    // options.progress, when set, is called as well (on the writer threads,
    // after this job's own handling); options.cancel cancels the job as
    // cancel() does.
    void start(std::shared_ptr<const tensordict::TensorDict> data, const QString& prefix,
               tensordict::SaveOptions options);
    void cancel();
    bool isRunning() const { return watcher_.isRunning(); }
    const QString& prefix() const { return prefix_; }
    bool atomic() const { return atomic_; }

    const tensordict::SaveProgress& progress() const { return progress_; }
    double bytesPerSecond() const;
    // Seconds left at the current throughput, or -1 while unknown.
    double secondsLeft() const;

Q_SIGNALS:
    void progressed(const tensordict::SaveProgress& progress);
    void succeeded(const tensordict::TensorDict& result);
    void failed(const QString& message);
    void cancelled();

private:
    void finish();
    // On the GUI thread: the latest report the writers left in pending_.
    Q_INVOKABLE void deliverProgress();
    void onProgress(const tensordict::SaveProgress& progress);

    QFutureWatcher<tensordict::TensorDict> watcher_;
    tensordict::SaveProgress progress_;
    QElapsedTimer clock_;
    QString prefix_;
    bool atomic_ = false;
    tensordict::CancelToken cancel_;
    std::mutex pendingMutex_;
    std::optional<tensordict::SaveProgress> pending_;
};
