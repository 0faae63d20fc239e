#include "save_options_dialog.h"

#include <sys/statvfs.h>
#include <unistd.h>

#include <QButtonGroup>
#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QRadioButton>
#include <QSettings>
#include <QSpinBox>
#include <QThread>
#include <QVBoxLayout>
#include <optional>

#include "file_dialogs.h"
#include "node_text.h"

using tensordict::kZipBzip2;
using tensordict::kZipDeflate;
using tensordict::kZipLzma;
using tensordict::kZipStored;

namespace {

// Bytes available to us on the file system of `path` or of its nearest
// existing ancestor. statvfs works wherever the path does, chroots and
// containers included, where QStorageInfo's mount table may be missing.
std::optional<std::uint64_t> freeBytesAt(QString path, bool* holdsNoFiles = nullptr) {
    for (;;) {
        struct statvfs fs {};
        if (::statvfs(QFile::encodeName(path).constData(), &fs) == 0) {
            // A file system of no blocks (/proc, /sys) is not "full": it holds no files.
            if (holdsNoFiles)
                *holdsNoFiles = fs.f_blocks == 0;
            return static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
        }
        const QString up = QFileInfo(path).absolutePath();
        if (up == path || path.isEmpty())
            return std::nullopt;
        path = up;
    }
}

DestinationFacts checkDestination(const QString& dest, const QString& sourcePath) {
    DestinationFacts facts;
    facts.destination = dest;
    const QFileInfo info(dest);
    facts.parent = info.absolutePath();
    facts.parentIsDir = QFileInfo(facts.parent).isDir();
    facts.parentIsFile = QFileInfo(facts.parent).isFile();
    facts.parentWritable =
        facts.parentIsDir && ::access(QFile::encodeName(facts.parent).constData(), W_OK) == 0;
    facts.exists = info.exists();
    facts.isDir = info.isDir();
    facts.isEmptyDir = facts.isDir && QDir(dest).isEmpty();
    facts.isSource = facts.exists && QFileInfo(sourcePath).exists() &&
                     info.canonicalFilePath() == QFileInfo(sourcePath).canonicalFilePath();
    facts.freeBytes = freeBytesAt(facts.parent, &facts.holdsNoFiles);
    return facts;
}

}  // namespace

SaveOptionsDialog::SaveOptionsDialog(std::vector<SaveScopeChoice> scopes, const QString& sourcePath,
                                     QWidget* parent)
    : QDialog(parent),
      scopes_(std::move(scopes)),
      bytes_(scopes_.empty() ? 0 : scopes_.front().bytes),
      sourcePath_(sourcePath),
      destination_(new QLineEdit),
      asDirectory_(new QRadioButton(tr("Directory (one file per tensor)"))),
      asArchive_(new QRadioButton(tr("Archive (one .tdz zip file)"))),
      asSafetensors_(new QRadioButton(tr("Safetensors (one .safetensors file, tensors only)"))),
      asHuggingFace_(
          new QRadioButton(tr("Hugging Face folder (safetensors shards and their index)"))),
      shardSize_(new QLineEdit(QStringLiteral("5GB"))),
      shardRow_(new QWidget),
      keyName_(new QLineEdit),
      keyNameRow_(new QWidget),
      compression_(new QComboBox),
      level_(new QSpinBox),
      compressionNote_(new QLabel),
      threads_(new QSpinBox),
      atomic_(new QCheckBox(tr("Atomic write"))),
      robustKey_(new QCheckBox(tr("Robust key encoding"))),
      copyExisting_(new QCheckBox(tr("Copy data mapped from other files"))),
      allowOutsideLinks_(new QCheckBox(tr("Copy files linked from outside the dataset"))),
      skipObjects_(new QCheckBox(tr("Leave out Python objects and parts not read here (they "
                                    "cannot be saved)"))),
      sizes_(new QLabel),
      message_(new QLabel),
      buttons_(new QDialogButtonBox(QDialogButtonBox::Save | QDialogButtonBox::Cancel)) {
    setWindowTitle(tr("Save As / Export"));
    setMinimumWidth(600);
    // Every part is built before the scope chooser, which picks its first
    // scope and so checks the choices once.
    QLayout* destination = destinationRow();
    QLayout* compression = compressionRow();
    setUpOptions();
    QLayout* format = formatChooser();
    QWidget* keyName = keyNameRow();
    auto* form = new QFormLayout;
    form->addRow(tr("Saving:"), scopeChooser());
    form->addRow(QString(), keyName);
    form->addRow(tr("Destination:"), destination);
    form->addRow(tr("Format:"), format);
    form->addRow(tr("Compression:"), compression);
    form->addRow(QString(), compressionNote_);
    form->addRow(tr("Threads:"), threads_);
    for (QCheckBox* option : {atomic_, robustKey_, copyExisting_, allowOutsideLinks_, skipObjects_})
        form->addRow(QString(), option);
    form->addRow(tr("Size:"), sizes_);
    message_->setWordWrap(true);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(message_);
    layout->addWidget(buttons_);
    asDirectory_->setChecked(true);
    const QSettings settings;
    compressionChosen_ = settings.value("save/compression", kZipStored).toInt();
    if (compression_->findData(compressionChosen_) < 0)
        compressionChosen_ = kZipStored;
    level_->setValue(std::clamp(settings.value("save/level", -1).toInt(), -1, 9));
    connectEditors();
    validate();
}

QLayout* SaveOptionsDialog::destinationRow() {
    auto* browse = new QPushButton(tr("Browse…"));
    connect(browse, &QPushButton::clicked, this, &SaveOptionsDialog::browse);
    auto* row = new QHBoxLayout;
    row->addWidget(destination_, 1);
    row->addWidget(browse);
    destination_->setPlaceholderText(tr("a directory, or a file name ending in .tdz"));
    return row;
}

QLayout* SaveOptionsDialog::formatChooser() {
    asSafetensors_->setToolTip(
        tr("As the safetensors library writes it: each tensor under its dotted key path "
           "(model.layers.0.weight). Values that are not tensors are left out."));
    asHuggingFace_->setToolTip(
        tr("As transformers' save_pretrained writes a model: model-0000K-of-0000N.safetensors "
           "shards and model.safetensors.index.json. Other files of the folder (config.json) "
           "stay."));
    shardSize_->setToolTip(
        tr("The largest shard, as transformers' max_shard_size: 5GB (its "
           "default; GB are 10^9 bytes), 500MB, 2GiB (2^30) or bytes. A "
           "tensor larger than this is a shard of its own."));
    shardSize_->setMaximumWidth(shardSize_->fontMetrics().horizontalAdvance("0000.000 GiB") + 16);
    auto* shardLine = new QHBoxLayout(shardRow_);
    shardLine->setContentsMargins(24, 0, 0, 0);
    shardLine->addWidget(new QLabel(tr("largest shard")));
    shardLine->addWidget(shardSize_);
    shardLine->addStretch(1);
    auto* format = new QVBoxLayout;
    format->addWidget(asDirectory_);
    format->addWidget(asArchive_);
    format->addWidget(asSafetensors_);
    format->addWidget(asHuggingFace_);
    format->addWidget(shardRow_);
    // One of them, always: their own group, whatever else the dialog holds.
    auto* formats = new QButtonGroup(this);
    for (QRadioButton* b : {asDirectory_, asArchive_, asSafetensors_, asHuggingFace_})
        formats->addButton(b);
    return format;
}

// A file of one tensor is saved under a key of its own.
QWidget* SaveOptionsDialog::keyNameRow() {
    auto* keyRow = new QHBoxLayout(keyNameRow_);
    keyRow->setContentsMargins(0, 0, 0, 0);
    keyRow->addWidget(new QLabel(tr("as the key")));
    keyRow->addWidget(keyName_, 1);
    keyName_->setToolTip(
        tr("The file holds one tensor, not a dict of tensors: a tensordict "
           "holds it under a key (--key-name on the command line)."));
    keyNameRow_->setVisible(false);
    return keyNameRow_;
}

QLayout* SaveOptionsDialog::compressionRow() {
    compression_->addItem(tr("stored (no compression)"), kZipStored);
    compression_->addItem(tr("deflate"), kZipDeflate);
    compression_->addItem(tr("bzip2"), kZipBzip2);
    compression_->addItem(tr("lzma"), kZipLzma);
    level_->setRange(-1, 9);
    level_->setSpecialValueText(tr("default"));
    level_->setValue(-1);
    level_->setPrefix(tr("level "));
    auto* row = new QHBoxLayout;
    row->addWidget(compression_, 1);
    row->addWidget(level_);
    compressionNote_->setWordWrap(true);
    compressionNote_->setStyleSheet("color: #5e5c64;");
    compressionNote_->setMinimumHeight(compressionNote_->fontMetrics().lineSpacing() * 2 + 4);
    return row;
}

// The threads and the options' defaults, each with what it means.
void SaveOptionsDialog::setUpOptions() {
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
    skipObjects_->setChecked(false);
    skipObjects_->setVisible(false);
    skipObjects_->setToolTip(
        tr("The file holds pickled Python objects (an nn.Module, a custom class), which "
           "tdstudio shows by class but never rebuilds, or parts it does not decode (quantized "
           "tensors, NumPy string arrays; grey in the tree). A tensordict cannot hold them: "
           "unchecked, saving is refused, naming the first one; checked, they are left out and "
           "the rest is saved."));
}

// Every editor checks the choices again when it changes (after the
// dialog's starting state is set, which is no choice by hand).
void SaveOptionsDialog::connectEditors() {
    connect(destination_, &QLineEdit::textEdited, this, &SaveOptionsDialog::destinationEdited);
    connect(destination_, &QLineEdit::textChanged, this, [this] {
        checkTimer_.start();  // restarted by every keystroke: checked once typing pauses
        validate();
    });
    checkTimer_.setSingleShot(true);
    checkTimer_.setInterval(kCheckDelayMs);
    connect(&checkTimer_, &QTimer::timeout, this, &SaveOptionsDialog::startCheck);
    for (QRadioButton* b : {asArchive_, asSafetensors_, asHuggingFace_})
        connect(b, &QRadioButton::toggled, this, [this] {
            archiveChosenByHand_ = true;
            validate();
        });
    connect(shardSize_, &QLineEdit::textChanged, this, &SaveOptionsDialog::validate);
    connect(level_, &QSpinBox::valueChanged, this, &SaveOptionsDialog::validate);
    connect(compression_, &QComboBox::currentIndexChanged, this, [this] {
        if (archive())
            compressionChosen_ = compression_->currentData().toInt();
        validate();
    });
    for (QCheckBox* option : {atomic_, robustKey_, allowOutsideLinks_, skipObjects_, copyExisting_})
        connect(option, &QCheckBox::toggled, this, &SaveOptionsDialog::validate);
    connect(keyName_, &QLineEdit::textChanged, this, &SaveOptionsDialog::validate);
    connect(buttons_, &QDialogButtonBox::accepted, this, &SaveOptionsDialog::trySave);
    connect(buttons_, &QDialogButtonBox::rejected, this, &QDialog::reject);
}

QWidget* SaveOptionsDialog::scopeChooser() {
    if (scopes_.size() < 2)
        return new QLabel(scopes_.empty() ? QString() : scopes_.front().title);
    // The keys to save are listed; the whole tensordict is one click away.
    auto* box = new QWidget;
    auto* column = new QVBoxLayout(box);
    column->setContentsMargins(0, 0, 0, 0);
    for (int i = 0; i < static_cast<int>(scopes_.size()); ++i) {
        const SaveScopeChoice& choice = scopes_[std::size_t(i)];
        QString title = choice.title;
        if (!title.isEmpty())
            title[0] = title[0].toUpper();
        auto* button =
            new QRadioButton(tr("%1 · %2").arg(title, nodetext::byteSizeText(choice.bytes)));
        scopeButtons_ << button;
        column->addWidget(button);
        connect(button, &QRadioButton::toggled, this, [this, i](bool on) {
            if (on)
                setScope(i);
        });
        if (i == 0 && !choice.keys.isEmpty()) {
            keyList_ = new QListWidget;
            constexpr int kListed = 500;  // a selection of 100k keys is listed in part
            for (const QString& key : choice.keys.mid(0, kListed))
                keyList_->addItem(key);
            if (choice.keys.size() > kListed)
                keyList_->addItem(tr("… and %1 more").arg(choice.keys.size() - kListed));
            keyList_->setSelectionMode(QAbstractItemView::NoSelection);
            keyList_->setFocusPolicy(Qt::NoFocus);
            const int rows = std::min(keyList_->count(), 5);
            keyList_->setFixedHeight(rows * keyList_->sizeHintForRow(0) +
                                     2 * keyList_->frameWidth() + 2);
            keyList_->setContentsMargins(24, 0, 0, 0);
            auto* indent = new QHBoxLayout;
            indent->setContentsMargins(24, 0, 0, 0);
            indent->addWidget(keyList_);
            column->addLayout(indent);
        }
    }
    scopeButtons_.front()->setChecked(true);
    return box;
}

void SaveOptionsDialog::setScope(int index) {
    if (index < 0 || index >= static_cast<int>(scopes_.size()))
        return;
    scope_ = index;
    bytes_ = scopes_[std::size_t(index)].bytes;
    if (index < scopeButtons_.size())
        scopeButtons_[index]->setChecked(true);
    if (keyList_)
        keyList_->setEnabled(index == 0);
    validate();
}

QRadioButton* SaveOptionsDialog::scopeButton(int index) const {
    return scopeButtons_.value(index);
}

void SaveOptionsDialog::browse() {
    using file_dialogs::Kind;
    QString path;
    const auto suggested = [this](const QString& extension) {
        return destination().isEmpty() ? QFileInfo(sourcePath_).completeBaseName() + extension
                                       : QFileInfo(destination()).fileName();
    };
    if (archive())
        path = file_dialogs::saveFile(this, Kind::SaveArchive, tr("Save archive"),
                                      suggested(".tdz"), tr("tensordict archives (*.tdz)"),
                                      QFileDialog::DontConfirmOverwrite);
    else if (format() == tensordict::SaveFormat::Safetensors)
        path = file_dialogs::saveFile(
            this, Kind::SaveArchive, tr("Save safetensors file"), suggested(".safetensors"),
            tr("safetensors files (*.safetensors)"), QFileDialog::DontConfirmOverwrite);
    else
        path = file_dialogs::openDirectory(this, Kind::SaveDirectory, tr("Save into directory"));
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

tensordict::SaveFormat SaveOptionsDialog::format() const {
    using tensordict::SaveFormat;
    return asSafetensors_->isChecked()   ? SaveFormat::Safetensors
           : asHuggingFace_->isChecked() ? SaveFormat::HuggingFace
                                         : SaveFormat::Tensordict;
}

void SaveOptionsDialog::setFormat(tensordict::SaveFormat format) {
    using tensordict::SaveFormat;
    (format == SaveFormat::Safetensors   ? asSafetensors_
     : format == SaveFormat::HuggingFace ? asHuggingFace_
                                         : asDirectory_)
        ->setChecked(true);
}

void SaveOptionsDialog::setCompression(int zipMethod) {
    compressionChosen_ = compression_->findData(zipMethod) >= 0 ? zipMethod : kZipStored;
    validate();
}

void SaveOptionsDialog::destinationEdited() {
    // The format follows the name until the user picks one by hand.
    const bool tdz = destination().endsWith(".tdz", Qt::CaseInsensitive);
    const bool safetensors = destination().endsWith(".safetensors", Qt::CaseInsensitive);
    const QSignalBlocker a(asArchive_), d(asDirectory_), s(asSafetensors_), h(asHuggingFace_);
    if (tdz)
        asArchive_->setChecked(true);
    else if (safetensors)
        asSafetensors_->setChecked(true);
    else if (!archiveChosenByHand_)
        asDirectory_->setChecked(true);
    // A file's name says what it is: folders are not offered for it, and say why.
    for (QRadioButton* folder : {asDirectory_, asHuggingFace_}) {
        folder->setEnabled(!tdz && !safetensors);
        folder->setToolTip(tdz ? tr("A name ending in .tdz is saved as an archive; remove .tdz to "
                                    "save a folder.")
                           : safetensors ? tr("A name ending in .safetensors is one file; remove "
                                              ".safetensors to save a folder.")
                                         : QString());
    }
    asArchive_->setEnabled(!safetensors);
    asSafetensors_->setEnabled(!tdz);
    validate();
}

tensordict::SaveOptions SaveOptionsDialog::options() const {
    tensordict::SaveOptions o;
    o.format = format();
    o.maxShardSize = nodetext::byteSizeFromText(shardSize_->text()).value_or(0);
    o.archive = archive();
    o.compression = archive() ? compression_->currentData().toInt() : kZipStored;
    o.compressionLevel = level_->value();
    o.numThreads = threads_->value();
    o.atomic = atomic_->isChecked();
    o.robustKey = robustKey_->isChecked();
    o.copyExisting = copyExisting_->isChecked();
    o.allowOutsideLinks = allowOutsideLinks_->isChecked();
    o.skipObjects = skipObjects_->isChecked();
    return o;
}

void SaveOptionsDialog::setDataCheck(DataCheck check) {
    dataCheck_ = std::move(check);
    dataCheckedFor_.clear();
    validate();
}

void SaveOptionsDialog::setSingleTensor(const QString& suggested) {
    keyName_->setText(suggested);
    keyNameRow_->setVisible(true);
    validate();
}

QString SaveOptionsDialog::keyName() const {
    return keyNameRow_->isVisibleTo(this) ? keyName_->text().trimmed() : QString();
}

// What the data check depends on, as one string to compare.
QString SaveOptionsDialog::dataInputs() const {
    return QString("%1|%2|%3|%4|%5")
        .arg(scope_)
        .arg(robustKey_->isChecked())
        .arg(skipObjects_->isChecked())
        .arg(allowOutsideLinks_->isChecked())
        .arg(keyName());
}

void SaveOptionsDialog::startDataCheck() {
    const QString inputs = dataInputs();
    if (!dataCheck_ || inputs == dataCheckedFor_ || dataJob_.isBusy())
        return;
    dataJob_.start([check = dataCheck_, scope = scope_, keyName = keyName(), options = options()](
                       const tensordict::CancelToken&) { return check(scope, keyName, options); },
                   [this, inputs](std::optional<tensordict::Failure> failure) {
                       dataProblem_ = std::move(failure);
                       dataCheckedFor_ = inputs;
                       validate();  // and the next check, if the choices changed meanwhile
                   });
}

void SaveOptionsDialog::setHasObjects(bool hasObjects) {
    skipObjects_->setVisible(hasObjects);
    if (!hasObjects)
        skipObjects_->setChecked(false);
}

bool SaveOptionsDialog::canSave() const {
    return problem_.isEmpty() && !isChecking();
}

bool SaveOptionsDialog::isChecking() const {
    return checkTimer_.isActive() || !checkApplied_ ||
           (dataCheck_ && dataInputs() != dataCheckedFor_) ||
           (!destination().isEmpty() && (!facts_ || facts_->destination != destination()));
}

void SaveOptionsDialog::startCheck() {
    checkTimer_.stop();
    if (destination().isEmpty() || destinationJob_.isBusy())
        return;  // a running check starts the next one when it finishes
    ++diskChecks_;
    checkApplied_ = false;
    destinationJob_.startUnawaited(
        [dest = destination(), source = sourcePath_](const tensordict::CancelToken&) {
            return checkDestination(dest, source);
        },
        [this](DestinationFacts facts) { checkFinished(std::move(facts)); });
}

void SaveOptionsDialog::checkFinished(DestinationFacts facts) {
    checkApplied_ = true;
    facts_ = std::move(facts);
    if (facts_->destination != destination() && !checkTimer_.isActive())
        startCheck();  // edited while it ran, and typing has paused since
    validate();
    Q_EMIT destinationChecked();
}

void SaveOptionsDialog::finishPendingCheck() {
    // For tests: every check under way, finished and applied here (the
    // dialog itself never waits: Save waits for them as events).
    while (isChecking()) {
        if (!destination().isEmpty() && !destinationJob_.isBusy() && checkApplied_ &&
            (!facts_ || facts_->destination != destination()))
            startCheck();
        startDataCheck();
        QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents, 50);
    }
}

void SaveOptionsDialog::trySave() {
    // Save decides on what the disk and the data say now: once the checks
    // under way are in (validate() then calls this again).
    if (isChecking()) {
        saveWhenChecked_ = true;
        if (checkTimer_.isActive())
            startCheck();
        validate();
        return;
    }
    saveWhenChecked_ = false;
    if (!canSave())
        return;
    // The next save starts from this one's compression.
    QSettings settings;
    if (archive()) {
        settings.setValue("save/compression", compressionChosen_);
        settings.setValue("save/level", level_->value());
    }
    accept();
}

QString SaveOptionsDialog::compressionNoteText() const {
    return compressionNote_->text();
}

// The trade-off of the chosen method and level, in a line or two
// (figures from bench_save: a float32 leaf and a dataset-like tensordict).
QString SaveOptionsDialog::compressionNote(int method, int level) {
    const QString copy =
        tr("Compressed entries are inflated on first use; stored ones load "
           "without a copy.");
    if (method == kZipStored)
        return tr(
            "Only stored entries load without a copy; compressed ones are inflated into "
            "memory on first use.");
    if (method != kZipDeflate)
        return tr("Smaller than deflate, many times slower to write and to read.") + " " + copy;
    if (level >= 1 && level <= 3)
        return tr("Fast: 10-30x faster than the default level 6, 1-20% larger.") + " " + copy;
    if (level == 0)
        return tr("Level 0 stores the bytes inside deflate: no smaller, and not mapped.");
    return tr("Level %1: the size Python's zipfile writes at that level; levels 1-3 are 10-30x "
              "faster, 1-20% larger.")
               .arg(level < 0 ? 6 : level) +
           " " + copy;
}

void SaveOptionsDialog::validate() {
    // Compression exists only for archives: not offered otherwise; nor the
    // tensordict's own options for safetensors, nor a shard size but for a folder.
    const bool ownFormat = format() == tensordict::SaveFormat::Tensordict;
    const bool folder = format() == tensordict::SaveFormat::HuggingFace;
    shardRow_->setEnabled(folder);
    robustKey_->setEnabled(ownFormat);
    copyExisting_->setEnabled(ownFormat);
    skipObjects_->setEnabled(ownFormat);
    compression_->setEnabled(archive());
    compressionNote_->setVisible(archive());
    {
        const QSignalBlocker quiet(compression_);
        compression_->setCurrentIndex(
            std::max(0, compression_->findData(archive() ? compressionChosen_ : kZipStored)));
    }
    level_->setEnabled(archive() && compression_->currentData().toInt() != kZipStored);
    compressionNote_->setText(
        compressionNote(compression_->currentData().toInt(), level_->value()));

    problem_.clear();
    warning_.clear();
    const QString dest = destination();
    // What the disk said about this destination; none while it is being checked.
    const DestinationFacts* facts = facts_ && facts_->destination == dest ? &*facts_ : nullptr;
    const std::uint64_t* free = facts && facts->freeBytes ? &*facts->freeBytes : nullptr;
    sizes_->setText(tr("%1 to write · %2 free at the destination")
                        .arg(nodetext::byteSizeText(bytes_), free ? nodetext::byteSizeText(*free)
                                                             : facts || dest.isEmpty()
                                                                 ? tr("unknown")
                                                                 : tr("checking…")));
    bool checking = false;
    startDataCheck();
    const bool dataChecked = !dataCheck_ || dataInputs() == dataCheckedFor_;
    const std::optional<std::uint64_t> shardSize = nodetext::byteSizeFromText(shardSize_->text());
    if (keyNameRow_->isVisibleTo(this) && keyName().isEmpty()) {
        problem_ = tr("The file holds one tensor: give the key to save it under.");
    } else if (folder && (!shardSize || *shardSize == 0)) {
        problem_ = tr("The largest shard \u201c%1\u201d is not a size: write it as 5GB, 500MB, "
                      "2GiB or a number of bytes.")
                       .arg(shardSize_->text());
    } else if (dataChecked && dataProblem_) {
        problem_ = QString::fromStdString(dataProblem_->text());
        if (dataProblem_->kind == tensordict::ErrorKind::Denied)
            problem_ += tr(" Check “%1” to copy it anyway.").arg(allowOutsideLinks_->text());
    } else if (dest.isEmpty()) {
        problem_ = tr("Choose a destination.");
    } else if (!facts || !dataChecked) {
        checking = true;  // Save stays offered: it waits for the check, then decides
    } else if (facts->parentIsFile) {
        problem_ = tr("%1 is a file, not a folder: the destination cannot be inside it.")
                       .arg(facts->parent);
    } else if (!facts->parentIsDir) {
        problem_ = tr("The folder %1 does not exist.").arg(facts->parent);
    } else if (facts->parentIsDir && facts->holdsNoFiles) {
        problem_ = tr("%1 cannot hold files (a virtual file system, such as /proc); choose "
                      "another folder.")
                       .arg(facts->parent);
    } else if (!facts->parentWritable) {
        problem_ = tr("You cannot write in %1; choose another folder.").arg(facts->parent);
    } else if (archive() && facts->isDir) {
        problem_ = tr("%1 is a directory; an archive needs a file name ending in .tdz.").arg(dest);
    } else if (format() == tensordict::SaveFormat::Safetensors && facts->isDir) {
        problem_ = tr("%1 is a directory; a safetensors file needs a file name.").arg(dest);
    } else if ((folder || (ownFormat && !archive())) && facts->exists && !facts->isDir) {
        problem_ = tr("%1 is a file; choose a directory, or a one-file format.").arg(dest);
    } else if (facts->isSource && (archive() || format() == tensordict::SaveFormat::Safetensors)) {
        problem_ = tr("This is the file being read; save to another name.");
    } else if (free && *free < bytes_) {
        problem_ = tr("Not enough free space: %1 needed, %2 free.")
                       .arg(nodetext::byteSizeText(bytes_), nodetext::byteSizeText(*free));
    } else if (folder && facts->exists && !facts->isEmptyDir) {
        warning_ = tr("The model's files in %1 are replaced when the save completes; its other "
                      "files (config.json) stay.")
                       .arg(dest);
    } else if (facts->exists && !facts->isEmptyDir) {
        warning_ = atomic_->isChecked()
                       ? tr("%1 exists and will be replaced when the save completes.").arg(dest)
                       : tr("%1 exists: files are overwritten in place, others stay. Atomic "
                            "replaces it as a whole.")
                             .arg(dest);
    }
    if (checking) {
        message_->setStyleSheet("color: #5e5c64;");
        message_->setText(tr("Checking the destination…"));
    } else if (!problem_.isEmpty()) {
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
    if (saveWhenChecked_ && !isChecking())  // Save was pressed while checking
        QMetaObject::invokeMethod(this, &SaveOptionsDialog::trySave, Qt::QueuedConnection);
}
