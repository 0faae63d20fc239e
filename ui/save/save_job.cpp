#include "save_job.h"

#include <QMetaObject>

SaveJob::SaveJob(QObject* parent) : QObject(parent) {
    qRegisterMetaType<tensordict::SaveProgress>("tensordict::SaveProgress");
    connect(&watcher_, &QFutureWatcherBase::finished, this, &SaveJob::finish);
}

SaveJob::~SaveJob() {
    cancel();
    try {
        watcher_.waitForFinished();  // rethrows the save's error, already reported
    } catch (...) {
    }
}

void SaveJob::start(std::shared_ptr<const tensordict::TensorDict> data, const QString& prefix,
                    tensordict::SaveOptions options) {
    prefix_ = prefix;
    atomic_ = options.atomic;
    progress_ = {};
    // The caller's token, if any, cancels the job as Cancel does. The
    // caller's own progress callback still runs on the writer threads
    // (tests use it to hold the writers at a chosen point).
    cancel_ = options.cancel;
    auto userProgress = std::move(options.progress);
    // Called on writer threads: leave the numbers for the GUI thread and
    // wake it, then call the caller's callback. The numbers go through a
    // std::mutex rather than inside the queued call, so that
    // ThreadSanitizer sees the hand-over (Qt's event queue is not
    // instrumented); reports that pile up before the GUI thread looks are
    // merged into the latest. The job outlives its writers: its destructor
    // waits for them.
    options.progress = [self = this, userProgress](const tensordict::SaveProgress& p) {
        {
            std::lock_guard<std::mutex> lock(self->pendingMutex_);
            self->pending_ = p;
        }
        QMetaObject::invokeMethod(self, "deliverProgress", Qt::QueuedConnection);
        if (userProgress)
            userProgress(p);
    };
    clock_.start();
    watcher_.setFuture(
        tensordict::saveAsync(std::move(data), prefix.toStdString(), std::move(options)));
}

void SaveJob::cancel() {
    cancel_.cancel();
}

void SaveJob::deliverProgress() {
    std::optional<tensordict::SaveProgress> p;
    {
        std::lock_guard<std::mutex> lock(pendingMutex_);
        p.swap(pending_);
    }
    if (p)
        onProgress(*p);
}

void SaveJob::onProgress(const tensordict::SaveProgress& p) {
    if (p.bytesDone < progress_.bytesDone && p.bytesTotal == progress_.bytesTotal)
        return;  // late, out of order
    progress_ = p;
    Q_EMIT progressed(p);
}

double SaveJob::bytesPerSecond() const {
    const double seconds = clock_.isValid() ? clock_.nsecsElapsed() / 1e9 : 0;
    return seconds > 0 ? double(progress_.bytesDone) / seconds : 0;
}

double SaveJob::secondsLeft() const {
    const double rate = bytesPerSecond();
    if (rate <= 0 || progress_.bytesTotal == 0)
        return -1;
    return double(progress_.bytesTotal - progress_.bytesDone) / rate;
}

void SaveJob::finish() {
    try {
        const tensordict::TensorDict result = watcher_.result();
        progress_.bytesDone = progress_.bytesTotal;
        Q_EMIT succeeded(result);
    } catch (const tensordict::Cancelled&) {
        Q_EMIT cancelled();
    } catch (const std::exception& e) {
        Q_EMIT failed(QString::fromUtf8(e.what()));
    }
}
