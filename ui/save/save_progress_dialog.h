#pragma once

#include <QDialog>
#include <optional>

#include "tensordict/save.h"

class QLabel;
class QProgressBar;
class QPushButton;
class SaveJob;

// Follows a SaveJob: bytes and files written, throughput, time left and the
// current file; Cancel; then the outcome, with an offer to open the result.
class SaveProgressDialog : public QDialog {
    Q_OBJECT

public:
    SaveProgressDialog(SaveJob* job, QWidget* parent = nullptr);
    QString statusText() const;
    QString detailText() const;
    QPushButton* cancelButton() const { return cancel_; }
    QPushButton* openButton() const { return open_; }
    QPushButton* showInFolderButton() const { return showInFolder_; }

Q_SIGNALS:
    void openRequested(const QString& path);

private:
    void update(const tensordict::SaveProgress& p);
    void done(const QString& status, bool success);
    // "4 MiB of 8 MiB · files 3 of 9 · 120 MiB/s · 2 s left\ncurrent/file";
    // once the save is over, without the estimate and the file.
    QString progressLine(const tensordict::SaveProgress& p, bool over) const;

    SaveJob* job_;  // valid until the job reports its outcome
    QString prefix_;
    bool atomic_;
    QLabel* status_;
    QLabel* detail_;
    QLabel* note_;
    QProgressBar* bar_;
    QPushButton* cancel_;
    QPushButton* open_;
    QPushButton* showInFolder_;
    QPushButton* close_;
    std::optional<tensordict::SaveProgress> last_;
    double rate_ = 0, secondsLeft_ = -1;  // the job's, as of the last progress
};
