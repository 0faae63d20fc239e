#include "save_options_dialog.h"

#include <sys/statvfs.h>

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QSpinBox>
#include <QThread>
#include <QVBoxLayout>
#include <optional>

#include "node_text.h"

using tensordict::kZipBzip2;
using tensordict::kZipDeflate;
using tensordict::kZipLzma;
using tensordict::kZipStored;

namespace {

// Bytes available to us on the file system of `path` or of its nearest
// existing ancestor. statvfs works wherever the path does, chroots and
// containers included, where QStorageInfo's mount table may be missing.
std::optional<std::uint64_t> freeBytesAt(QString path) {
    for (;;) {
        struct statvfs fs {};
        if (::statvfs(QFile::encodeName(path).constData(), &fs) == 0)
            return static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
        const QString up = QFileInfo(path).absolutePath();
        if (up == path || path.isEmpty())
            return std::nullopt;
        path = up;
    }
}

}  // namespace

SaveOptionsDialog::SaveOptionsDialog(std::uint64_t bytes, const QString& scope,
                                     const QString& sourcePath, QWidget* parent)
    : QDialog(parent),
      bytes_(bytes),
      sourcePath_(sourcePath),
      destination_(new QLineEdit),
      asDirectory_(new QRadioButton(tr("Directory (one file per tensor)"))),
      asArchive_(new QRadioButton(tr("Archive (one .tdz zip file)"))),
      compression_(new QComboBox),
      level_(new QSpinBox),
      compressionNote_(new QLabel),
      threads_(new QSpinBox),
      atomic_(new QCheckBox(tr("Atomic write"))),
      robustKey_(new QCheckBox(tr("Robust key encoding"))),
      copyExisting_(new QCheckBox(tr("Copy data mapped from other files"))),
      allowOutsideLinks_(new QCheckBox(tr("Copy files linked from outside the dataset"))),
      sizes_(new QLabel),
      message_(new QLabel),
      buttons_(new QDialogButtonBox(QDialogButtonBox::Save | QDialogButtonBox::Cancel)) {
    setWindowTitle(tr("Save As / Export"));
    setMinimumWidth(600);
    auto* browse = new QPushButton(tr("Browse…"));
    auto* destRow = new QHBoxLayout;
    destRow->addWidget(destination_, 1);
    destRow->addWidget(browse);
    destination_->setPlaceholderText(tr("a directory, or a file name ending in .tdz"));

    compression_->addItem(tr("stored (no compression)"), kZipStored);
    compression_->addItem(tr("deflate"), kZipDeflate);
    compression_->addItem(tr("bzip2"), kZipBzip2);
    compression_->addItem(tr("lzma"), kZipLzma);
    level_->setRange(-1, 9);
    level_->setSpecialValueText(tr("default"));
    level_->setValue(-1);
    level_->setPrefix(tr("level "));
    auto* compressionRow = new QHBoxLayout;
    compressionRow->addWidget(compression_, 1);
    compressionRow->addWidget(level_);
    compressionNote_->setText(
        tr("Only stored entries load without a copy; compressed ones are inflated into memory on "
           "first use."));
    compressionNote_->setWordWrap(true);
    compressionNote_->setStyleSheet("color: #5e5c64;");
    compressionNote_->setMinimumHeight(compressionNote_->fontMetrics().lineSpacing() * 2 + 4);

    threads_->setRange(1, 64);
    threads_->setValue(std::max(1, QThread::idealThreadCount()));
    threads_->setToolTip(tr("Writer threads; archives also compress on them."));
    atomic_->setChecked(true);
    atomic_->setToolTip(tr(
        "Write next to the destination under a temporary name and rename it into place at the end: "
        "a failure, a cancel or a crash leaves the destination exactly as it was."));
    robustKey_->setChecked(true);
    robustKey_->setToolTip(
        tr("Percent-encode characters that are unsafe in file names (/, :, *, …), as tensordict ≥ "
           "0.13 "
           "does. Off: raw key names, which older tensordict versions wrote."));
    copyExisting_->setChecked(true);
    copyExisting_->setToolTip(
        tr("Tensors opened from a memmap directory are backed by its files. Checked: their data is "
           "copied into the destination. Unchecked: saving them elsewhere is refused, as "
           "tensordict.save(copy_existing=False) does."));

    allowOutsideLinks_->setChecked(false);
    allowOutsideLinks_->setToolTip(
        tr("A dataset may hold symbolic links to files elsewhere on this machine. Unchecked: "
           "saving such a link is refused, so that none of your own files ends up in what you "
           "export. Checked: the linked files are copied like the others."));

    auto* format = new QVBoxLayout;
    format->addWidget(asDirectory_);
    format->addWidget(asArchive_);
    auto* form = new QFormLayout;
    form->addRow(tr("Saving:"), new QLabel(scope));
    form->addRow(tr("Destination:"), destRow);
    form->addRow(tr("Format:"), format);
    form->addRow(tr("Compression:"), compressionRow);
    form->addRow(QString(), compressionNote_);
    form->addRow(tr("Threads:"), threads_);
    form->addRow(QString(), atomic_);
    form->addRow(QString(), robustKey_);
    form->addRow(QString(), copyExisting_);
    form->addRow(QString(), allowOutsideLinks_);
    form->addRow(tr("Size:"), sizes_);
    message_->setWordWrap(true);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(message_);
    layout->addWidget(buttons_);
    asDirectory_->setChecked(true);

    connect(browse, &QPushButton::clicked, this, &SaveOptionsDialog::browse);
    connect(destination_, &QLineEdit::textEdited, this, &SaveOptionsDialog::destinationEdited);
    connect(destination_, &QLineEdit::textChanged, this, &SaveOptionsDialog::validate);
    connect(asArchive_, &QRadioButton::toggled, this, [this] {
        archiveChosenByHand_ = true;
        validate();
    });
    connect(compression_, &QComboBox::currentIndexChanged, this, &SaveOptionsDialog::validate);
    connect(atomic_, &QCheckBox::toggled, this, &SaveOptionsDialog::validate);
    connect(copyExisting_, &QCheckBox::toggled, this, &SaveOptionsDialog::validate);
    connect(buttons_, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons_, &QDialogButtonBox::rejected, this, &QDialog::reject);
    validate();
}

void SaveOptionsDialog::browse() {
    QString path;
    if (archive())
        path = QFileDialog::getSaveFileName(this, tr("Save archive"), destination(),
                                            tr("tensordict archives (*.tdz)"), nullptr,
                                            QFileDialog::DontConfirmOverwrite);
    else
        path = QFileDialog::getExistingDirectory(this, tr("Save into directory"), destination());
    if (!path.isEmpty())
        setDestination(path);
}

void SaveOptionsDialog::setDestination(const QString& path) {
    destination_->setText(path);
    destinationEdited();
}

QString SaveOptionsDialog::destination() const {
    return destination_->text().trimmed();
}

bool SaveOptionsDialog::archive() const {
    return asArchive_->isChecked();
}

void SaveOptionsDialog::setArchive(bool archive) {
    (archive ? asArchive_ : asDirectory_)->setChecked(true);
}

void SaveOptionsDialog::setCompression(int zipMethod) {
    compression_->setCurrentIndex(std::max(0, compression_->findData(zipMethod)));
}

void SaveOptionsDialog::destinationEdited() {
    // The format follows the name until the user picks one by hand.
    const bool tdz = destination().endsWith(".tdz", Qt::CaseInsensitive);
    const QSignalBlocker a(asArchive_), d(asDirectory_);
    if (tdz)
        asArchive_->setChecked(true);
    else if (!archiveChosenByHand_)
        asDirectory_->setChecked(true);
    validate();
}

tensordict::SaveOptions SaveOptionsDialog::options() const {
    tensordict::SaveOptions o;
    o.archive = archive();
    o.compression = archive() ? compression_->currentData().toInt() : kZipStored;
    o.compressionLevel = level_->value();
    o.numThreads = threads_->value();
    o.atomic = atomic_->isChecked();
    o.robustKey = robustKey_->isChecked();
    o.copyExisting = copyExisting_->isChecked();
    o.allowOutsideLinks = allowOutsideLinks_->isChecked();
    return o;
}

bool SaveOptionsDialog::canSave() const {
    return problem_.isEmpty();
}

void SaveOptionsDialog::validate() {
    // Compression exists only for archives: not offered otherwise.
    compression_->setEnabled(archive());
    level_->setEnabled(archive() && compression_->currentData().toInt() != kZipStored);
    compressionNote_->setVisible(archive());
    if (!archive())
        compression_->setCurrentIndex(0);

    problem_.clear();
    warning_.clear();
    const QString dest = destination();
    const QFileInfo info(dest);
    const QString parent = info.absolutePath();
    const std::optional<std::uint64_t> free = freeBytesAt(parent);
    sizes_->setText(tr("%1 to write · %2 free at the destination")
                        .arg(nodetext::byteSizeText(bytes_),
                             free ? nodetext::byteSizeText(*free) : tr("unknown")));
    if (dest.isEmpty()) {
        problem_ = tr("Choose a destination.");
    } else if (!QFileInfo(parent).isDir()) {
        problem_ = tr("The folder %1 does not exist.").arg(parent);
    } else if (archive() && info.isDir()) {
        problem_ = tr("%1 is a directory; an archive needs a file name ending in .tdz.").arg(dest);
    } else if (!archive() && info.exists() && !info.isDir()) {
        problem_ = tr("%1 is a file; choose a directory, or Archive.").arg(dest);
    } else if (info.exists() && QFileInfo(sourcePath_).exists() &&
               info.canonicalFilePath() == QFileInfo(sourcePath_).canonicalFilePath() &&
               archive()) {
        problem_ = tr("This is the archive being read; save to another name.");
    } else if (free && *free < bytes_) {
        problem_ = tr("Not enough free space: %1 needed, %2 free.")
                       .arg(nodetext::byteSizeText(bytes_), nodetext::byteSizeText(*free));
    } else if (info.exists() && !(info.isDir() && QDir(dest).isEmpty())) {
        warning_ = atomic_->isChecked()
                       ? tr("%1 exists and will be replaced when the save completes.").arg(dest)
                       : tr("%1 exists: files are overwritten in place, others stay. Atomic "
                            "replaces it as a whole.")
                             .arg(dest);
    }
    if (!problem_.isEmpty()) {
        message_->setStyleSheet("color: #c01c28;");
        message_->setText(problem_);
    } else if (!warning_.isEmpty()) {
        message_->setStyleSheet("color: #9c6500;");
        message_->setText(warning_);
    } else {
        message_->setStyleSheet({});
        message_->setText(atomic_->isChecked()
                              ? tr("Cancelling or a failure leaves the destination as it was.")
                              : tr("Without atomic, a failure leaves partly written files."));
    }
    QPushButton* save = buttons_->button(QDialogButtonBox::Save);
    save->setEnabled(problem_.isEmpty());
    save->setText(warning_.isEmpty() ? tr("Save") : tr("Replace"));
}
