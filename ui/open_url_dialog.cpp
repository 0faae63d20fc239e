#include "open_url_dialog.h"

#include <QDialogButtonBox>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QStyle>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <algorithm>

#include "common/load_settings.h"
#include "common/node_text.h"
#include "common/open_failure.h"

namespace {

bool isS3(const QString& location) {
    return location.startsWith("s3://", Qt::CaseInsensitive);
}

// "s3://bucket/runs/" of "s3://bucket/runs/step-1/"; the bucket's root stays.
QString parentPrefix(const QString& prefix) {
    QString p = prefix.endsWith('/') ? prefix.chopped(1) : prefix;
    const int slash = p.lastIndexOf('/');
    return slash > int(qstrlen("s3://")) ? p.left(slash + 1) : p + '/';
}

}  // namespace

OpenUrlDialog::OpenUrlDialog(QWidget* parent)
    : QDialog(parent),
      location_(new QLineEdit),
      browse_(new QPushButton(tr("&Browse"))),
      up_(new QPushButton(style()->standardIcon(QStyle::SP_FileDialogToParent), QString())),
      list_(new QTreeWidget),
      status_(new QLabel),
      buttons_(new QDialogButtonBox(QDialogButtonBox::Open | QDialogButtonBox::Cancel)),
      listing_(this) {
    setWindowTitle(tr("Open URL"));
    auto* intro = new QLabel(
        tr("An archive (.tdz), a memmap directory, a checkpoint (a DCP .metadata, a sharded "
           "model's index), a safetensors or NumPy file on a web server or in an S3 bucket. "
           "Files are read with range requests, never downloaded whole. Browse an "
           "<b>s3://bucket/prefix/</b> to choose from its entries."));
    intro->setWordWrap(true);
    location_->setPlaceholderText(tr("https://host/data.tdz or s3://bucket/runs/"));
    location_->setText(QSettings().value("open/lastUrl").toString());
    up_->setToolTip(tr("Up one folder"));
    list_->setColumnCount(3);
    list_->setHeaderLabels({tr("Name"), tr("Size"), tr("Modified")});
    list_->setRootIsDecorated(false);
    list_->setUniformRowHeights(true);
    list_->header()->setSectionResizeMode(0, QHeaderView::Stretch);
    list_->setVisible(false);
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto* row = new QHBoxLayout;
    row->addWidget(location_, 1);
    row->addWidget(up_);
    row->addWidget(browse_);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(intro);
    layout->addLayout(row);
    layout->addWidget(list_, 1);
    layout->addWidget(status_);
    layout->addWidget(buttons_);
    resize(720, sizeHint().height());

    connect(location_, &QLineEdit::textChanged, this, &OpenUrlDialog::textChanged);
    connect(location_, &QLineEdit::returnPressed, this, &OpenUrlDialog::openChosen);
    connect(browse_, &QPushButton::clicked, this, [this] { browse(location_->text().trimmed()); });
    connect(up_, &QPushButton::clicked, this, &OpenUrlDialog::goUp);
    connect(list_, &QTreeWidget::itemActivated, this, &OpenUrlDialog::entryActivated);
    connect(list_, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem* item) {
        if (item)
            location_->setText(item->data(0, Qt::UserRole).toString());
    });
    connect(buttons_, &QDialogButtonBox::accepted, this, &OpenUrlDialog::openChosen);
    connect(buttons_, &QDialogButtonBox::rejected, this, &QDialog::reject);
    textChanged();
}

void OpenUrlDialog::textChanged() {
    const QString text = location_->text().trimmed();
    browse_->setEnabled(isS3(text));
    up_->setEnabled(isS3(text) && parentPrefix(text) != text);
    buttons_->button(QDialogButtonBox::Open)->setEnabled(isRemote(text));
}

void OpenUrlDialog::browse(const QString& prefix) {
    if (!isS3(prefix))
        return;
    QString folder = prefix;
    if (!folder.endsWith('/'))
        folder += '/';  // a prefix is listed as a folder, never its siblings
    location_->setText(folder);
    openWhenListed_.clear();  // a newer listing: Open was for another folder
    list_->clear();
    if (!list_->isVisible()) {
        list_->setVisible(true);
        resize(width(), std::max(height(), 520));  // room for a dozen entries
    }
    entries_.clear();
    listedPrefix_.clear();
    status_->setText(tr("Listing %1…").arg(folder));
    listing_.start(
        [folder, transport = currentTransportOptions()](const tensordict::CancelToken&) {
            Listing l;
            l.prefix = folder;
            try {
                l.entries = tensordict::listS3(folder.toStdString(), transport);
            } catch (const tensordict::Cancelled&) {
                l.cancelled = true;
            } catch (const std::exception& e) {
                l.failure = tensordict::failureOf(e);
            }
            return l;
        },
        [this](Listing l) { listingArrived(std::move(l)); });
}

void OpenUrlDialog::listingArrived(Listing listing) {
    if (listing.cancelled) {
        status_->setText(tr("Listing was cancelled."));
    } else if (listing.failure) {
        openWhenListed_.clear();
        status_->setText(tr("Cannot list %1: %2")
                             .arg(listing.prefix.toHtmlEscaped(),
                                  QString::fromStdString(listing.failure->reason).toHtmlEscaped()));
    } else {
        listedPrefix_ = listing.prefix;
        entries_ = std::move(listing.entries);
        for (const tensordict::S3Entry& e : entries_) {
            auto* item = new QTreeWidgetItem(list_);
            item->setText(0, QString::fromStdString(e.name));
            item->setIcon(
                0, style()->standardIcon(e.isFolder ? QStyle::SP_DirIcon : QStyle::SP_FileIcon));
            item->setData(0, Qt::UserRole, QString::fromStdString(e.location));
            if (!e.isFolder) {
                item->setText(1, nodetext::byteSizeText(e.size));
                item->setTextAlignment(1, Qt::AlignRight | Qt::AlignVCenter);
                item->setText(2, QString::fromStdString(e.lastModified).left(19).replace('T', ' '));
            }
        }
        list_->resizeColumnToContents(1);
        list_->resizeColumnToContents(2);
        status_->setText(entries_.empty()
                             ? tr("Nothing under %1.").arg(listedPrefix_)
                             : tr("%1 under %2")
                                   .arg(nodetext::countText(std::int64_t(entries_.size()),
                                                            tr("entry"), tr("entries")))
                                   .arg(listedPrefix_));
        if (!openWhenListed_.isEmpty() && openWhenListed_ == listedPrefix_) {
            openWhenListed_.clear();
            const QString chosen = datasetIn(listedPrefix_, entries_);
            QSettings().setValue("open/lastUrl", listedPrefix_);
            Q_EMIT locationChosen(chosen);
            accept();
        }
    }
    Q_EMIT listed();
}

void OpenUrlDialog::goUp() {
    browse(parentPrefix(location_->text().trimmed()));
}

void OpenUrlDialog::entryActivated(QTreeWidgetItem* item) {
    const QString location = item->data(0, Qt::UserRole).toString();
    if (location.endsWith('/'))
        browse(location);  // into the folder
    else
        openChosen();
}

void OpenUrlDialog::openChosen() {
    const QString text = location_->text().trimmed();
    if (!isRemote(text)) {
        status_->setText(tr("“%1” is not an http://, https:// or s3:// address.").arg(text));
        return;
    }
    if (isS3(text) && text.endsWith('/')) {
        // A folder opens as the dataset it holds, which its listing tells.
        if (text != listedPrefix_) {
            browse(text);
            openWhenListed_ = text;  // once that listing arrives (another one clears it)
            return;
        }
        QSettings().setValue("open/lastUrl", text);
        Q_EMIT locationChosen(datasetIn(text, entries_));
        accept();
        return;
    }
    QSettings().setValue("open/lastUrl", text);
    Q_EMIT locationChosen(text);
    accept();
}

QString OpenUrlDialog::datasetIn(const QString& folder,
                                 const std::vector<tensordict::S3Entry>& entries) {
    for (const char* name :
         {".metadata", "model.safetensors.index.json", "pytorch_model.bin.index.json"})
        for (const tensordict::S3Entry& e : entries)
            if (!e.isFolder && e.name == name)
                return QString::fromStdString(e.location);
    for (const tensordict::S3Entry& e : entries)
        if (!e.isFolder && QString::fromStdString(e.name).endsWith(".index.json"))
            return QString::fromStdString(e.location);
    return folder;  // a memmap directory, through its meta.json
}
