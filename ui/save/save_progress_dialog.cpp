#include "save_progress_dialog.h"

#include "file_dialogs.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QVBoxLayout>

#include "node_text.h"
#include "save_job.h"

namespace {
QString duration(double seconds) {
    if (seconds < 0)
        return QObject::tr("estimating…");
    if (seconds < 60)
        return QObject::tr("%1 s left").arg(std::max(1, static_cast<int>(std::ceil(seconds))));
    return QObject::tr("%1 min %2 s left")
        .arg(static_cast<int>(seconds) / 60)
        .arg(static_cast<int>(seconds) % 60);
}
}  // namespace

SaveProgressDialog::SaveProgressDialog(SaveJob* job, QWidget* parent)
    : QDialog(parent),
      job_(job),
      prefix_(job->prefix()),
      atomic_(job->atomic()),
      status_(new QLabel),
      detail_(new QLabel),
      note_(new QLabel),
      bar_(new QProgressBar),
      cancel_(new QPushButton(tr("Cancel"))),
      open_(new QPushButton(tr("Open Result"))),
      showInFolder_(new QPushButton(tr("Show in Folder"))),
      close_(new QPushButton(tr("Close"))) {
    setWindowTitle(tr("Saving"));
    setMinimumWidth(520);
    status_->setText(tr("Saving to %1…").arg(job->prefix()));
    status_->setWordWrap(true);
    detail_->setWordWrap(true);
    detail_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    note_->setWordWrap(true);
    note_->setText(job->atomic()
                       ? tr("Cancel leaves the destination exactly as it was (atomic save).")
                       : tr("Cancel stops the writers; files written so far stay (not atomic)."));
    bar_->setRange(0, 1000);
    bar_->setValue(0);
    open_->hide();
    showInFolder_->hide();
    close_->hide();
    auto* buttons = new QHBoxLayout;
    buttons->addStretch();
    buttons->addWidget(showInFolder_);
    buttons->addWidget(open_);
    buttons->addWidget(close_);
    buttons->addWidget(cancel_);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(status_);
    layout->addWidget(bar_);
    layout->addWidget(detail_);
    layout->addWidget(note_);
    layout->addLayout(buttons);

    connect(job, &SaveJob::progressed, this, &SaveProgressDialog::update);
    connect(cancel_, &QPushButton::clicked, this, [this] {
        cancel_->setEnabled(false);
        status_->setText(tr("Cancelling…"));
        if (job_)
            job_->cancel();
    });
    connect(close_, &QPushButton::clicked, this, &QDialog::accept);
    connect(showInFolder_, &QPushButton::clicked, this,
            [this] { file_dialogs::showInFolder(prefix_); });
    connect(open_, &QPushButton::clicked, this, [this] {
        Q_EMIT openRequested(prefix_);
        accept();
    });
    connect(job, &SaveJob::succeeded, this, [this] {
        bar_->setValue(1000);
        done(tr("Saved %1.").arg(prefix_), true);
    });
    connect(job, &SaveJob::failed, this, [this](const JobOutcome& outcome) {
        done(tr("The save failed: %1").arg(outcome.text()), false);
    });
    connect(job, &SaveJob::cancelled, this, [this] {
        done(atomic_ ? tr("Cancelled. %1 is exactly as it was.").arg(prefix_)
                     : tr("Cancelled. Files written so far remain in %1.").arg(prefix_),
             false);
    });
}

void SaveProgressDialog::update(const tensordict::SaveProgress& p) {
    last_ = p;
    rate_ = job_ ? job_->bytesPerSecond() : rate_;
    secondsLeft_ = job_ ? job_->secondsLeft() : -1;
    bar_->setValue(
        p.bytesTotal ? static_cast<int>(1000.0 * double(p.bytesDone) / double(p.bytesTotal)) : 0);
    detail_->setText(progressLine(p, false));
}

QString SaveProgressDialog::progressLine(const tensordict::SaveProgress& p, bool over) const {
    QString line =
        tr("%1 of %2 · files %3 of %4 · %5/s")
            .arg(nodetext::byteSizeText(p.bytesDone), nodetext::byteSizeText(p.bytesTotal))
            .arg(p.filesDone)
            .arg(p.filesTotal)
            .arg(nodetext::byteSizeText(static_cast<std::uint64_t>(rate_)));
    if (over)
        return line;  // the estimate is over
    // All bytes written: what is left is the commit, not a time estimate.
    const bool written = p.bytesTotal && p.bytesDone >= p.bytesTotal;
    return line + " · " + (written ? tr("finishing") : duration(secondsLeft_)) + "\n" +
           QString::fromStdString(p.currentPath);
}

void SaveProgressDialog::done(const QString& status, bool success) {
    job_ = nullptr;
    status_->setText(status);
    if (last_)
        detail_->setText(progressLine(*last_, true));
    cancel_->hide();
    close_->show();
    open_->setVisible(success);
    showInFolder_->setVisible(success);
    note_->hide();
    if (success)
        open_->setDefault(true);
}

QString SaveProgressDialog::statusText() const {
    return status_->text();
}

QString SaveProgressDialog::detailText() const {
    return detail_->text();
}
