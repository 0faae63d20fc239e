#include "preview_panel.h"

#include "file_dialogs.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressDialog>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QStackedWidget>
#include <QTabWidget>
#include <QVBoxLayout>

#include "image_mode.h"
#include "image_view.h"
#include "node_text.h"
#include "plot_mode.h"
#include "slice_export.h"
#include "statistics_mode.h"
#include "table_mode.h"
#include "tensor_table_model.h"
#include "tensordict/guarded_read.h"
#include "tensordict/leaf_pages.h"

using tensordict::Node;
using tensordict::NodeKind;

PreviewPanel::PreviewPanel(QWidget* parent)
    : QWidget(parent),
      pages_(new QStackedWidget),
      messagePage_(new QWidget),
      message_(new QLabel),
      reload_(new QPushButton(tr("Reload"))),
      value_(new QPlainTextEdit),
      tensorPage_(new QWidget),
      title_(new QLabel),
      leafView_(new LeafView("preview/mode/")) {
    table_ = leafView_->find<TableLeafMode>();
    message_->setAlignment(Qt::AlignCenter);
    message_->setWordWrap(true);
    message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    value_->setReadOnly(true);
    value_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));

    auto* tensorLayout = new QVBoxLayout(tensorPage_);
    tensorLayout->setContentsMargins(0, 0, 0, 0);
    title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    tensorLayout->addWidget(title_);
    tensorLayout->addWidget(leafView_, 1);

    auto* messageLayout = new QVBoxLayout(messagePage_);
    messageLayout->addStretch(1);
    messageLayout->addWidget(message_);
    messageLayout->addWidget(reload_, 0, Qt::AlignHCenter);
    messageLayout->addStretch(1);
    reload_->setVisible(false);
    connect(reload_, &QPushButton::clicked, this, &PreviewPanel::reloadRequested);
    pages_->addWidget(messagePage_);
    pages_->addWidget(value_);
    pages_->addWidget(tensorPage_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(pages_);
    showMessage(tr("Select a tensor leaf to see its values."));

    connect(leafView_, &LeafView::sourceChanged, this, &PreviewPanel::sourceChanged);
    connect(imageView(), &ImageView::exported, this,
            [this](const QString& path, const QString& error) {
                if (error.isEmpty())
                    return Q_EMIT exported(path);
                // Not exec(): never block the event loop.
                auto* box =
                    new QMessageBox(QMessageBox::Warning, tr("Export failed"),
                                    tr("The image could not be written as a PNG file: %1. Check "
                                       "that its folder exists and that you may write there.")
                                        .arg(error),
                                    QMessageBox::Ok, this);
                box->setAttribute(Qt::WA_DeleteOnClose);
                box->open();
            });
    connect(table_, &TableLeafMode::exportRequested, this, [this](SliceExportJob::Format format) {
        const bool csv = format == SliceExportJob::Format::Csv;
        const QString path = file_dialogs::saveFile(
            this, csv ? file_dialogs::Kind::ExportCsv : file_dialogs::Kind::ExportNpy,
            tr("Export slice"),
            table_->sliceSelector()->fileName(nodetext::exportStem(node_), csv ? ".csv" : ".npy"),
            csv ? tr("CSV files (*.csv)") : tr("NumPy arrays (*.npy)"));
        if (!path.isEmpty())
            exportSlice(format, path);
    });
}

PreviewPanel::~PreviewPanel() = default;

QString PreviewPanel::titleText() const {
    return title_->text();
}

TensorTableModel* PreviewPanel::tableModel() const {
    return table_->model();
}
TensorTableView* PreviewPanel::tableView() const {
    return table_->view();
}
SliceSelector* PreviewPanel::tableSlice() const {
    return table_->sliceSelector();
}
QLineEdit* PreviewPanel::goToRowField() const {
    return table_->goToRowField();
}
ImageView* PreviewPanel::imageView() const {
    return leafView_->find<ImageLeafMode>()->imageView();
}
PlotView* PreviewPanel::plotView() const {
    return leafView_->find<PlotLeafMode>()->view();
}
StatisticsView* PreviewPanel::statisticsView() const {
    return leafView_->find<StatisticsLeafMode>()->view();
}

PreviewPanel::Mode PreviewPanel::mode() const {
    return leafView_->mode();
}

void PreviewPanel::setMode(Mode mode) {
    leafView_->setMode(mode);
}

void PreviewPanel::showRow(const tensordict::Node* leaf, std::int64_t row) {
    table_->showRow(leaf, row);
    leafView_->setMode(TableMode);
}

bool PreviewPanel::canShow(Mode mode) const {
    return leafView_->canShow(mode);
}

void PreviewPanel::showMessage(const QString& text, bool offerReload) {
    message_->setText(text);
    reload_->setVisible(offerReload);
    pages_->setCurrentWidget(messagePage_);
}

QString PreviewPanel::message() const {
    return pages_->currentWidget() == messagePage_ ? message_->text() : QString();
}

bool PreviewPanel::offersReload() const {
    return pages_->currentWidget() == messagePage_ && reload_->isVisibleTo(messagePage_);
}

void PreviewPanel::sourceChanged() {
    if (!node_ || !node_->isTensor())
        return;
    // A leaf read page by page whose page could not be read says why; a
    // mapped one lost pages under a view: its file changed.
    const tensordict::Failure failure =
        bytes_.pages && bytes_.pages->failure()
            ? *bytes_.pages->failure()
            : tensordict::Error::changed(node_->fileName()).failure();
    // Drop the lost mapping from every view; the rest of the tree stays usable.
    bytes_ = {};
    leafView_->clear();
    showFailure(tr("Cannot read this leaf: %1"), failure);
}

void PreviewPanel::showFailure(const QString& headline, const tensordict::Failure& failure) {
    // A new version of the file (on disk, or on the server): Reload reads it.
    showMessage(headline.arg(QString::fromStdString(failure.text())),
                failure.kind == tensordict::ErrorKind::Changed);
    Q_EMIT leafFailed(message());
}

QString PreviewPanel::valueText() const {
    return value_->toPlainText();
}

void PreviewPanel::reset() {
    read_.cancel();  // a read still running finishes on its own; its result is dropped
    seriesNodes_.clear();
    bytes_ = {};
    leafView_->clear();
}

void PreviewPanel::cancelReads() {
    const bool reading = read_.isBusy() || tableModel()->isFilling() ||
                         (pages_->currentWidget() != messagePage_ && imageView()->isRendering());
    if (!node_ || !node_->isTensor() || !reading)
        return;
    reset();
    showMessage(tr("Reading was cancelled. Select the leaf again to read it."));
}

PreviewPanel::Read PreviewPanel::readLeaves(const std::vector<const Node*>& nodes,
                                            const std::shared_ptr<const void>& owner) {
    Read read;
    try {
        // A lone leaf is read as the core reads a viewed one (page by page
        // where it can be); two leaves compared are read whole.
        for (const Node* n : nodes)
            read.bytes.push_back(nodes.size() == 1 ? tensordict::LeafPages::forViewing(owner, *n)
                                                   : n->bytes());
    } catch (const tensordict::Cancelled&) {
        read.bytes.clear();
        read.cancelled = true;
    } catch (const std::exception& e) {
        read.bytes.clear();
        read.failure = tensordict::failureOf(e);
    }
    return read;
}

void PreviewPanel::showNode(std::shared_ptr<const tensordict::TensorDict> owner, const Node* node) {
    reset();
    owner_ = std::move(owner);
    node_ = node;
    if (!node) {
        showMessage(tr("Select a tensor leaf to see its values."));
        return;
    }
    switch (node->kind()) {
        case NodeKind::NonTensorData:
        case NodeKind::NonTensorStack:
            value_->setPlainText(
                node->nonTensor().pickleOpaque
                    ? tr("<pickled Python object in %1: not shown, never unpickled>")
                          .arg(QString::fromStdString(node->nonTensor().pickleFile))
                    : QString::fromStdString(
                          tensordict::toJson(node->value(), tensordict::JsonStyle::Pretty)));
            pages_->setCurrentWidget(value_);
            return;
        case NodeKind::Tensor:
            break;
        case NodeKind::Error:
            showMessage(QString::fromStdString(node->error()));
            return;
        default:
            showMessage(tr("%1 with %2. Select a tensor leaf to see its values.")
                            .arg(QString::fromStdString(node->className()),
                                 nodetext::countText(std::int64_t(node->children().size()),
                                                     tr("key"), tr("keys"))));
            return;
    }
    if (node->leaf().isNested) {
        showMessage(tr("Nested (ragged) leaf with %1 parts; its parts are listed in the details.")
                        .arg(node->leaf().nestedShapes.size()));
        return;
    }
    showMessage(node->leaf().storage.kind == tensordict::StorageKind::CompressedEntry
                    ? tr("Inflating %1…").arg(nodetext::byteSizeText(node->leaf().nbytes))
                    : tr("Mapping…"));
    // Mapping is quick, inflating a compressed entry is not: never on this thread.
    read_.start([node, owner = owner_](
                    const tensordict::CancelToken&) { return readLeaves({node}, owner); },
                [this](Read read) { leafLoaded(std::move(read)); });
}

void PreviewPanel::leafLoaded(Read read) {
    if (read.cancelled) {
        showMessage(tr("Reading was cancelled. Select the leaf again to read it."));
        return;
    }
    if (read.failure) {
        showFailure(tr("Cannot read this leaf: %1"), *read.failure);
        return;
    }
    bytes_ = read.bytes.front();
    const Node& leaf = *node_;
    title_->setText(tr("<b>%1</b> · %2 · %3 · %4")
                        .arg(leaf.parent() ? nodetext::keyPathText(leaf.keyPath()).toHtmlEscaped()
                                           : tr("(root)"),
                             nodetext::leafDtypeText(leaf), nodetext::shapeText(leaf.leaf().shape),
                             nodetext::byteSizeText(leaf.leaf().dataBytes())));
    ShownLeaves shown;
    shown.ownerA = owner_;
    shown.a = {node_, bytes_};
    pages_->setCurrentWidget(tensorPage_);
    leafView_->setLeaves(shown);
    Q_EMIT leafReady();
}

bool PreviewPanel::areSeries(const std::vector<const Node*>& nodes) {
    if (nodes.size() < 2)
        return false;
    for (const Node* n : nodes) {
        if (!n || !n->isTensor() || n->leaf().isNested || n->leaf().numel < 2 ||
            n->leaf().numel != nodes.front()->leaf().numel)
            return false;
        // One dimension holds every element: [N], [N, 1], [1, N]...
        if (std::none_of(n->leaf().shape.begin(), n->leaf().shape.end(),
                         [n](auto d) { return d == n->leaf().numel; }))
            return false;
    }
    return true;
}

bool PreviewPanel::showSeries(std::shared_ptr<const tensordict::TensorDict> owner,
                              const std::vector<const Node*>& nodes) {
    if (!areSeries(nodes))
        return false;
    reset();
    owner_ = std::move(owner);
    node_ = nodes.front();
    seriesNodes_ = nodes;
    showMessage(tr("Mapping %n leaves…", "", static_cast<int>(nodes.size())));
    read_.start([nodes, owner = owner_](
                    const tensordict::CancelToken&) { return readLeaves(nodes, owner); },
                [this](Read read) { seriesLoaded(std::move(read)); });
    return true;
}

void PreviewPanel::seriesLoaded(Read read) {
    if (read.cancelled) {
        showMessage(tr("Reading was cancelled. Select the leaves again to read them."));
        return;
    }
    if (read.failure) {
        showFailure(tr("Cannot read these leaves: %1"), *read.failure);
        return;
    }
    std::vector<LeafSide> sides;
    QStringList names;
    for (std::size_t i = 0; i < read.bytes.size(); ++i) {
        sides.push_back({seriesNodes_[i], std::move(read.bytes[i])});
        names << nodetext::keyPathText(seriesNodes_[i]->keyPath());
    }
    title_->setText(tr("<b>%n series</b> · %1 · %2 values each", "", static_cast<int>(names.size()))
                        .arg(names.join(", ").toHtmlEscaped())
                        .arg(seriesNodes_.front()->leaf().numel));
    ShownLeaves owner;
    owner.ownerA = owner_;
    pages_->setCurrentWidget(tensorPage_);
    leafView_->showSeries(owner, sides);
    Q_EMIT leafReady();
}

SliceExportJob* PreviewPanel::exportSlice(SliceExportJob::Format format, const QString& path) {
    if (!node_ || !bytes_.data || exportJob_)
        return nullptr;
    auto* job =
        new SliceExportJob(format, path, node_->leaf().dtype, bytes_, tableModel()->slice(), this);
    exportJob_ = job;
    job->setWorkerHook(exportHook_);
    auto* progress = new QProgressDialog(tr("Exporting %1…").arg(QFileInfo(path).fileName()),
                                         tr("Cancel"), 0, 1000, this);
    progress->setWindowTitle(tr("Export slice"));
    progress->setAttribute(Qt::WA_DeleteOnClose);
    progress->setAutoClose(false);
    progress->setAutoReset(false);
    progress->setMinimumDuration(300);  // quick exports finish before it shows
    progress->setValue(0);
    exportProgress_ = progress;
    connect(progress, &QProgressDialog::canceled, job, &SliceExportJob::cancel);
    connect(job, &SliceExportJob::progressed, progress, [progress](qint64 done, qint64 rows) {
        progress->setValue(rows > 0 ? static_cast<int>(done * 1000 / rows) : 1000);
    });
    connect(job, &SliceExportJob::finished, this,
            [this, job, progress, path](const JobOutcome& outcome) {
                if (progress)
                    progress->close();
                job->deleteLater();
                const QString error = outcome.text();
                const bool cancelled = outcome.isCancelled();
                if (!error.isEmpty()) {
                    auto* box = new QMessageBox(QMessageBox::Warning, tr("Export failed"), error,
                                                QMessageBox::Ok, this);
                    box->setAttribute(Qt::WA_DeleteOnClose);
                    box->open();  // not exec(): never block the event loop
                }
                Q_EMIT exportFinished(error, cancelled);
                if (error.isEmpty() && !cancelled)
                    Q_EMIT exported(path);
            });
    job->start();
    return job;
}
