#pragma once

#include <QObject>
#include <QPointer>
#include <QProgressDialog>
#include <functional>
#include <memory>

#include "job_tracker.h"
#include "tensordict/check.h"

class QWidget;

// File > Check Integrity for one window: tensordict::check of the open
// dataset on a worker, with a progress dialog and Cancel, and its Repair,
// which asks first, runs on a worker too, and checks again.
class CheckController : public QObject {
    Q_OBJECT

public:
    explicit CheckController(QWidget* window);

    // Checks `path`; a check already running is replaced.
    void check(const QString& path);
    // Repairs what the last report of `path` says can be repaired, once the
    // user agrees; then checks again.
    void repair();
    bool isRunning() const { return job_.isBusy(); }
    std::shared_ptr<const tensordict::CheckReport> report() const { return report_; }
    QProgressDialog* progressDialog() const { return progress_; }
    // Answers "Repair …?" instead of a message box (tests).
    void setRepairConfirmation(std::function<bool(const QString& question)> confirm) {
        confirm_ = std::move(confirm);
    }

Q_SIGNALS:
    // A check ended (report()->cancelled when it was cancelled).
    void checked(std::shared_ptr<const tensordict::CheckReport> report);
    // A repair changed files: the document should be opened again.
    void repaired(const QStringList& done);
    void message(const QString& text, int timeoutMs);

private:
    struct Outcome {
        std::shared_ptr<const tensordict::CheckReport> report;
        QStringList repaired;
        QString error;
    };
    void run(const QString& path, const QString& label, bool repairFirst);
    void finished(const Outcome& outcome);

    QWidget* window_;
    std::shared_ptr<const tensordict::CheckReport> report_;
    JobTracker<Outcome> job_{this};
    QPointer<QProgressDialog> progress_;
    std::function<bool(const QString&)> confirm_;
};
