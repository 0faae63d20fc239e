#include "save_job.h"

SaveJob::SaveJob(QObject* parent) : QObject(parent) {
    qRegisterMetaType<tensordict::SaveProgress>("tensordict::SaveProgress");
}

SaveJob::~SaveJob() {
    cancel();  // the tracker, destroyed first, then waits for the writers
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
    clock_.start();
    // The save's own token is the job's: the tracker's cancel (the job
    // destroyed) stops the writers as Cancel does.
    tracker_.stream<tensordict::SaveProgress>(
        [data = std::move(data), prefix = prefix.toStdString(), options = std::move(options)](
            const tensordict::CancelToken&,
            const JobSend<tensordict::SaveProgress>& send) -> Saved {
            tensordict::SaveOptions saving = options;
            // Reports come from every writer thread.
            saving.progress = [&send,
                               userProgress = options.progress](const tensordict::SaveProgress& p) {
                send(p);  // posted first: a caller holding the writers sees it arrive
                if (userProgress)
                    userProgress(p);
            };
            try {
                return {JobOutcome::done(), tensordict::save(*data, prefix, saving)};
            } catch (...) {
                return {JobOutcome::ofCurrentException(), std::nullopt};
            }
        },
        [this](tensordict::SaveProgress p) { onProgress(p); },
        [this](Saved saved) { finish(std::move(saved)); }, cancel_);
}

void SaveJob::cancel() {
    cancel_.cancel();
}

void SaveJob::onProgress(const tensordict::SaveProgress& p) {
    if (p.bytesDone < progress_.bytesDone && p.bytesTotal == progress_.bytesTotal)
        return;  // late, out of order (the writer threads report on their own)
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

void SaveJob::finish(Saved saved) {
    if (saved.outcome.ok() && saved.result) {
        progress_.bytesDone = progress_.bytesTotal;
        Q_EMIT succeeded(*saved.result);
    } else if (saved.outcome.isCancelled()) {
        Q_EMIT cancelled();
    } else {
        Q_EMIT failed(saved.outcome);
    }
}
