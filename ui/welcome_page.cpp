#include "welcome_page.h"

#include "open_failure.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>

WelcomePage::WelcomePage(QWidget* parent)
    : QWidget(parent),
      failure_(new QLabel),
      openFile_(new QPushButton(tr("Open File…"))),
      openDirectory_(new QPushButton(tr("Open Directory…"))),
      openUrl_(new QPushButton(tr("Open URL…"))),
      recentTitle_(new QLabel(tr("Open recent:"))),
      recent_(new QListWidget) {
    auto* title = new QLabel(tr("tdstudio"));
    QFont big = title->font();
    big.setBold(true);
    big.setPointSizeF(big.pointSizeF() * 1.6);
    title->setFont(big);
    auto* how = new QLabel(openableSentence() + " " +
                           tr("They may be on this computer or on a web server; drop one on "
                              "this window to open it."));
    how->setWordWrap(true);

    failure_->setWordWrap(true);
    failure_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    failure_->setStyleSheet(
        "QLabel { background: #fbe3e4; border: 1px solid #e8a6aa; border-radius: 4px; "
        "padding: 8px; color: #5c1015; }");
    failure_->hide();

    openFile_->setToolTip(tr("An archive, a checkpoint or an array file (Ctrl+O)"));
    openDirectory_->setToolTip(tr("A memmap directory: the folder that holds meta.json"));
    openUrl_->setToolTip(
        tr("Any of these on a web server (http://, https://) or in an S3 bucket (s3://) (Ctrl+U)"));
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(openFile_);
    buttons->addWidget(openDirectory_);
    buttons->addWidget(openUrl_);
    buttons->addStretch();

    recent_->setToolTip(tr("Click to open"));

    auto* column = new QVBoxLayout;
    column->setSpacing(12);
    column->addWidget(title);
    column->addWidget(how);
    column->addLayout(buttons);
    column->addWidget(recentTitle_);
    column->addWidget(recent_);
    // Below what was clicked: a recent entry that fails does not move the list under the pointer.
    column->addWidget(failure_);
    column->addStretch();
    // A readable column in the middle of a wide window.
    auto* content = new QWidget;
    content->setLayout(column);
    content->setMaximumWidth(720);
    auto* layout = new QHBoxLayout(this);
    layout->addStretch();
    layout->addWidget(content, 1);
    layout->addStretch();

    connect(openFile_, &QPushButton::clicked, this, &WelcomePage::openFileRequested);
    connect(openDirectory_, &QPushButton::clicked, this, &WelcomePage::openDirectoryRequested);
    connect(openUrl_, &QPushButton::clicked, this, &WelcomePage::openUrlRequested);
    connect(recent_, &QListWidget::itemActivated, this, [this](QListWidgetItem* item) {
        Q_EMIT openRequested(item->data(Qt::UserRole).toString());
    });
    connect(recent_, &QListWidget::itemClicked, this, [this](QListWidgetItem* item) {
        Q_EMIT openRequested(item->data(Qt::UserRole).toString());
    });
    setRecentFiles({});
}

void WelcomePage::setRecentFiles(const QStringList& files) {
    recent_->clear();
    for (const QString& path : files) {
        // The name first, then where it is: the name is what people look for.
        auto* item = new QListWidgetItem(
            tr("%1 — %2").arg(locationName(path), locationFolder(path)), recent_);
        item->setData(Qt::UserRole, path);
        item->setToolTip(path);
    }
    // As tall as its entries (at most RecentFiles::kMaxFiles).
    const int row = recent_->fontMetrics().height() + 6;
    recent_->setFixedHeight(row * std::max<int>(1, int(files.size())) + 2 * recent_->frameWidth() +
                            4);
    recentTitle_->setVisible(!files.isEmpty());
    recent_->setVisible(!files.isEmpty());
}

void WelcomePage::setFailure(const QString& path, const QString& reason) {
    failure_->setVisible(!reason.isEmpty());
    if (reason.isEmpty())
        return failure_->clear();
    failure_->setText(tr("<b>Could not open %1</b><br>%2")
                          .arg(path.toHtmlEscaped(), reason.toHtmlEscaped().replace('\n', "<br>")));
}

QString WelcomePage::failureText() const {
    return failure_->isHidden() ? QString() : failure_->text();
}
