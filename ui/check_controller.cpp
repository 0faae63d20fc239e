#include "check_controller.h"

#include <QMessageBox>
#include <QWidget>
#include <algorithm>

#include "load_settings.h"
#include "node_text.h"

namespace {
// "1 error", "2 warnings": English without a translation file says it right.
QString count(std::size_t n, const QString& one, const QString& many) {
    return QString("%1 %2").arg(n).arg(n == 1 ? one : many);
}
}  // namespace

CheckController::CheckController(QWidget* window) : QObject(window), window_(window) {}

void CheckController::check(const QString& path) {
    if (job_.isBusy())
        return;  // one check or repair at a time: a repair's outcome must not be dropped
    run(path, tr("Checking %1…").arg(path), false);
}

void CheckController::repair() {
    if (!report_ || job_.isBusy())
        return;
    int crcs = 0, temporaries = 0;
    for (const tensordict::Problem& p : report_->problems) {
        crcs += p.repairable && p.kind == "crc_mismatch";
        temporaries += p.repairable && p.kind == "stale_temporary";
    }
    if (crcs + temporaries == 0)
        return;
    QStringList what;
    if (crcs > 0)
        what << tr(
            "re-stamp %n CRC-32 checksum(s) to the data as it is now (into a copy that "
            "then replaces the archive)",
            "", crcs);
    if (temporaries > 0)
        what << tr("delete %1 that interrupted saves left")
                    .arg(nodetext::countText(temporaries, tr("temporary file"),
                                             tr("temporary files")));
    const QString question =
        tr("Repair %1? It will %2. No tensor's bytes and no meta.json are changed.")
            .arg(QString::fromStdString(report_->path), what.join(tr(", and ")));
    const bool yes = confirm_ ? confirm_(question)
                              : QMessageBox::question(window_, tr("Repair"), question,
                                                      QMessageBox::Yes | QMessageBox::Cancel,
                                                      QMessageBox::Cancel) == QMessageBox::Yes;
    if (!yes)
        return;
    run(QString::fromStdString(report_->path),
        tr("Repairing %1…").arg(QString::fromStdString(report_->path)), true);
}

void CheckController::run(const QString& path, const QString& label, bool repairFirst) {
    if (!progress_) {
        progress_ = new QProgressDialog(window_);
        progress_->setWindowTitle(tr("Check Integrity"));
        progress_->setRange(0, 1000);
        progress_->setMinimumDuration(400);  // quick checks finish before it shows
        progress_->setAutoClose(false);
        progress_->setAutoReset(false);
        connect(progress_, &QProgressDialog::canceled, this, [this] { job_.stop(); });
    }
    progress_->setLabelText(label);
    progress_->setValue(0);
    const std::shared_ptr<const tensordict::CheckReport> before = report_;
    job_.start(
        [path = path.toStdString(), repairFirst, before](const tensordict::CancelToken& cancel,
                                                         const JobProgress& progress) {
            Outcome o;
            try {
                if (repairFirst && before) {
                    tensordict::RepairOptions repair;
                    repair.cancel = cancel;  // closing the window stops it, the archive as it was
                    for (const std::string& done : tensordict::repair(*before, repair).done)
                        o.repaired << QString::fromStdString(done);
                }
                tensordict::CheckOptions options;
                options.transport = currentTransportOptions();
                options.cancel = cancel;
                options.progress = [&progress](const tensordict::CheckProgress& p) {
                    if (p.bytesTotal > 0)
                        progress(double(p.bytesDone) / double(p.bytesTotal));
                };
                o.report = std::make_shared<const tensordict::CheckReport>(
                    tensordict::check(path, options));
            } catch (const std::exception& e) {
                o.error = QString::fromUtf8(e.what());
            }
            return o;
        },
        [this](const Outcome& o) { finished(o); },
        [this](double fraction) {
            if (progress_)
                progress_->setValue(static_cast<int>(fraction * 1000));
        });
}

void CheckController::finished(const Outcome& o) {
    if (progress_) {
        // Gone, not just closed: a dialog shown after its minimum duration
        // would otherwise show itself again, at 100% with Cancel, after the end.
        const QSignalBlocker quiet(progress_.data());
        progress_->reset();
        progress_->hide();
        progress_->deleteLater();
        progress_ = nullptr;
    }
    if (!o.error.isEmpty()) {
        Q_EMIT message(tr("Could not check: %1").arg(o.error), 0);
        auto* box = new QMessageBox(QMessageBox::Warning, tr("Check Integrity"),
                                    tr("The check could not be done."), QMessageBox::Ok, window_);
        box->setInformativeText(o.error);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
        return;
    }
    report_ = o.report;
    if (!o.repaired.isEmpty())
        Q_EMIT repaired(o.repaired);
    const tensordict::CheckReport& r = *report_;
    if (r.cancelled)
        Q_EMIT message(tr("Check cancelled: %1 read.").arg(nodetext::byteSizeText(r.bytes)), 5000);
    else if (r.sound())
        Q_EMIT message(tr("Checked %1: sound (%2 read).")
                           .arg(QString::fromStdString(r.path), nodetext::byteSizeText(r.bytes)),
                       0);
    else
        Q_EMIT message(tr("Checked %1: %2, %3; they are listed under Problems.")
                           .arg(QString::fromStdString(r.path),
                                count(r.errorCount(), tr("error"), tr("errors")),
                                count(r.warningCount(), tr("warning"), tr("warnings"))),
                       0);
    Q_EMIT checked(report_);
}
