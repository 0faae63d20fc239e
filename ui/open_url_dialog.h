#pragma once

#include <QDialog>
#include <optional>
#include <vector>

#include "common/job_tracker.h"
#include "tensordict/error.h"
#include "tensordict/s3.h"

class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QTreeWidget;
class QTreeWidgetItem;

// File > Open URL…: an http(s):// or s3:// location typed or pasted; an
// s3:// bucket or prefix can be browsed (its listing fetched in the
// background, folders first). A folder opens as the dataset it holds: its
// DCP .metadata, its sharded model's index, or its meta.json.
class OpenUrlDialog : public QDialog {
    Q_OBJECT

public:
    explicit OpenUrlDialog(QWidget* parent = nullptr);

    // Lists an s3:// prefix ("s3://bucket/" or "s3://bucket/runs/") in the background.
    void browse(const QString& prefix);
    // The listing shown (for tests): empty while one is fetched.
    const std::vector<tensordict::S3Entry>& entries() const { return entries_; }
    bool isListing() const { return listing_.isBusy(); }

    // The location a listed folder opens as: its DCP .metadata, its model
    // index, else the folder (a memmap directory's meta.json).
    static QString datasetIn(const QString& folder,
                             const std::vector<tensordict::S3Entry>& entries);

Q_SIGNALS:
    void locationChosen(const QString& location);
    void listed();  // a listing arrived (or failed): for tests

private:
    struct Listing {
        QString prefix;
        std::vector<tensordict::S3Entry> entries;
        std::optional<tensordict::Failure> failure;
        bool cancelled = false;
    };

    void textChanged();
    void goUp();
    void openChosen();
    void entryActivated(QTreeWidgetItem* item);
    void listingArrived(Listing listing);

    QLineEdit* location_;
    QPushButton* browse_;
    QPushButton* up_;
    QTreeWidget* list_;
    QLabel* status_;
    QDialogButtonBox* buttons_;
    QString listedPrefix_;    // what entries_ are of
    QString openWhenListed_;  // the folder Open was pressed on, not listed yet
    std::vector<tensordict::S3Entry> entries_;
    JobTracker<Listing> listing_;
};
