#include "save_job.h"

#include <QMetaObject>
#include <QPointer>

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
    cancel_ = std::make_shared<std::atomic<bool>>(false);
    options.isCancelled = [flag = cancel_] { return flag->load(); };
    // Called on writer threads: hand the numbers to the GUI thread.
    QPointer<SaveJob> self(this);
    options.progress = [self](const tensordict::SaveProgress& p) {
        QMetaObject::invokeMethod(
            self.data(),
            [self, p] {
                if (self)
                    self->onProgress(p);
            },
            Qt::QueuedConnection);
    };
    clock_.start();
    watcher_.setFuture(
        tensordict::saveAsync(std::move(data), prefix.toStdString(), std::move(options)));
}

void SaveJob::cancel() {
    if (cancel_)
        *cancel_ = true;
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
    } catch (const std::exception& e) {
        if (cancel_ && *cancel_)
            Q_EMIT cancelled();
        else
            Q_EMIT failed(QString::fromUtf8(e.what()));
    }
}
