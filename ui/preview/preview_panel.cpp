#include "preview_panel.h"

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
#include <QtConcurrent/QtConcurrentRun>

#include "image_view.h"
#include "node_text.h"
#include "plot_view.h"
#include "slice_export.h"
#include "slice_selector.h"
#include "statistics_view.h"
#include "tensor_table_model.h"
#include "tensor_table_view.h"
#include "tensordict/guarded_read.h"

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
      tabs_(new QTabWidget),
      tableModel_(new TensorTableModel(this)),
      tableSlice_(new SliceSelector(SliceSelector::Mode::Table)),
      format_(new QComboBox),
      precision_(new QSpinBox),
      goTo_(new QLineEdit),
      imageView_(new ImageView),
      plotView_(new PlotView),
      statisticsView_(new StatisticsView) {
    message_->setAlignment(Qt::AlignCenter);
    message_->setWordWrap(true);
    message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    value_->setReadOnly(true);
    value_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    tableView_ = new TensorTableView(tableModel_);

    tabs_->addTab(makeTablePage(), tr("Table"));
    tabs_->addTab(imageView_, tr("Image"));
    tabs_->addTab(plotView_, tr("Plot"));
    tabs_->addTab(statisticsView_, tr("Statistics"));
    connect(tabs_, &QTabWidget::currentChanged, this, &PreviewPanel::modeChosen);

    auto* tensorLayout = new QVBoxLayout(tensorPage_);
    tensorLayout->setContentsMargins(0, 0, 0, 0);
    title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    tensorLayout->addWidget(title_);
    tensorLayout->addWidget(tabs_, 1);

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

    connect(&watcher_, &QFutureWatcherBase::finished, this, &PreviewPanel::leafLoaded);
    connect(&seriesWatcher_, &QFutureWatcherBase::finished, this, &PreviewPanel::seriesLoaded);
    connect(tableModel_, &TensorTableModel::sourceChanged, this, &PreviewPanel::sourceChanged);
    connect(imageView_, &ImageView::sourceChanged, this, &PreviewPanel::sourceChanged);
    connect(imageView_, &ImageView::exported, this, [this](const QString& error) {
        if (error.isEmpty())
            return;
        // Not exec(): never block the event loop.
        auto* box = new QMessageBox(QMessageBox::Warning, tr("Export failed"),
                                    tr("The image could not be written as a PNG file: %1. Check "
                                       "that its folder exists and that you may write there.")
                                        .arg(error),
                                    QMessageBox::Ok, this);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    });
    connect(plotView_, &PlotView::sourceChanged, this, &PreviewPanel::sourceChanged);
    connect(statisticsView_, &StatisticsView::sourceChanged, this, &PreviewPanel::sourceChanged);
    connect(tableSlice_, &SliceSelector::sliceChanged, this, [this](const TensorSlice& slice) {
        tableModel_->setSlice(slice);
        tableView_->fitColumns();
        statisticsView_->setCurrentSlice(slice);
    });
}

PreviewPanel::~PreviewPanel() {
    watcher_.waitForFinished();
    seriesWatcher_.waitForFinished();
}

QWidget* PreviewPanel::makeTablePage() {
    auto* page = new QWidget;
    format_->addItems({tr("Shortest"), tr("Fixed"), tr("Scientific")});
    precision_->setRange(0, 17);
    precision_->setValue(6);
    precision_->setPrefix(tr("digits: "));
    precision_->setEnabled(false);
    goTo_->setPlaceholderText(tr("Go to row…"));
    goTo_->setClearButtonEnabled(true);
    goTo_->setMaximumWidth(160);
    auto* copy = new QPushButton(tr("Copy"));
    copy->setToolTip(tr("Copy the selected cells as tab-separated text (Ctrl+C)"));
    auto* csv = new QPushButton(tr("CSV…"));
    auto* npy = new QPushButton(tr(".npy…"));
    csv->setToolTip(tr("Export the current slice as comma-separated values"));
    npy->setToolTip(tr("Export the current slice as a NumPy .npy file"));
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Floats:")));
    bar->addWidget(format_);
    bar->addWidget(precision_);
    bar->addWidget(goTo_);
    bar->addStretch();
    bar->addWidget(copy);
    bar->addWidget(new QLabel(tr("Export:")));
    bar->addWidget(csv);
    bar->addWidget(npy);
    auto* layout = new QVBoxLayout(page);
    layout->addLayout(bar);
    layout->addWidget(tableSlice_);
    layout->addWidget(tableView_, 1);
    connect(format_, &QComboBox::currentIndexChanged, this, &PreviewPanel::applyFormat);
    connect(precision_, &QSpinBox::valueChanged, this, &PreviewPanel::applyFormat);
    connect(copy, &QPushButton::clicked, tableView_, &TensorTableView::copySelection);
    connect(goTo_, &QLineEdit::returnPressed, this, [this] {
        bool ok = false;
        const qlonglong row = goTo_->text().trimmed().toLongLong(&ok);
        if (ok)
            tableView_->scrollTo(row < 0 ? tableModel_->totalRows() + row : row,
                                 tableModel_->firstCol());
    });
    auto exportTo = [this](const QString& filter, const QString& suffix,
                           SliceExportJob::Format format) {
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Export slice"),
            QString::fromStdString(node_ ? node_->key() : "slice") + suffix, filter);
        if (!path.isEmpty())
            exportSlice(format, path);
    };
    connect(csv, &QPushButton::clicked, this,
            [=] { exportTo(tr("CSV files (*.csv)"), ".csv", SliceExportJob::Format::Csv); });
    connect(npy, &QPushButton::clicked, this,
            [=] { exportTo(tr("NumPy arrays (*.npy)"), ".npy", SliceExportJob::Format::Npy); });
    return page;
}

void PreviewPanel::applyFormat() {
    const auto format = static_cast<tensordict::FloatFormat>(format_->currentIndex());
    precision_->setEnabled(format != tensordict::FloatFormat::Shortest);
    tableModel_->setFloatFormat(format, precision_->value());
    tableView_->fitColumns();
}

QString PreviewPanel::shapeKind(const std::vector<std::int64_t>& shape) {
    const std::size_t n = shape.size();
    if (n == 0)
        return "0d";
    if (n == 1)
        return "1d";
    int channel = -1;
    ImageView::canShow(shape, &channel);
    if (channel >= 0)
        return channel == static_cast<int>(n) - 1 ? "hwc" : "chw";
    if (n == 2)
        return "2d";
    return "nd";
}

PreviewPanel::Mode PreviewPanel::mode() const {
    return static_cast<Mode>(tabs_->currentIndex());
}

void PreviewPanel::setMode(Mode mode) {
    tabs_->setCurrentIndex(mode);
}

bool PreviewPanel::canShow(Mode mode) const {
    return tabs_->isTabEnabled(mode);
}

void PreviewPanel::modeChosen(int index) {
    if (!node_ || !node_->isTensor())
        return;
    if (!restoringMode_ && seriesNodes_.empty())  // remember the choice for this kind of shape
        QSettings().setValue("preview/mode/" + shapeKind(node_->leaf().shape), index);
    if (index != StatisticsMode && statisticsView_->isRunning()) {
        statisticsView_->cancel();  // nothing for a hidden tab; computed again when shown
        statisticsStale_ = true;
    }
    // Queued: when a mode is restored and then overridden at once (--view),
    // only the tab finally shown starts its work.
    QMetaObject::invokeMethod(this, &PreviewPanel::startShownWork, Qt::QueuedConnection);
}

void PreviewPanel::startShownWork() {
    if (!bytes_.data || pages_->currentWidget() != tensorPage_)
        return;
    if (mode() == StatisticsMode && statisticsStale_) {
        statisticsStale_ = false;
        statisticsView_->compute();
    }
    if (mode() == PlotMode && plotStale_) {
        plotStale_ = false;
        plotView_->setLeaf(node_->leaf().dtype, bytes_, node_->leaf().shape);
    }
    // The image view starts on its own when it is shown.
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
    // Drop the lost mapping from every view; the rest of the tree stays usable.
    bytes_ = {};
    tableModel_->clear();
    imageView_->clear();
    plotView_->clear();
    statisticsView_->clear();
    QString text = QString::fromStdString(tensordict::fileChangedMessage(*node_));
    text[0] = text[0].toUpper();
    showMessage(text, true);
}

QString PreviewPanel::valueText() const {
    return value_->toPlainText();
}

void PreviewPanel::showNode(std::shared_ptr<const tensordict::TensorDict> owner, const Node* node) {
    // A read still running for the previous leaf finishes on its own (it keeps its
    // tree alive); the watcher only reports the newest.
    owner_ = std::move(owner);
    node_ = node;
    seriesNodes_.clear();
    bytes_ = {};
    tableModel_->clear();
    imageView_->clear();
    plotView_->clear();
    statisticsView_->clear();
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
            showMessage(tr("%1 with %n key(s). Select a tensor leaf to see its values.", "",
                           static_cast<int>(node->children().size()))
                            .arg(QString::fromStdString(node->className())));
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
    watcher_.setFuture(QtConcurrent::run([node, owner = owner_] { return node->bytes(); }));
}

void PreviewPanel::leafLoaded() {
    if (!node_ || !node_->isTensor() || !seriesNodes_.empty())
        return;
    try {
        bytes_ = watcher_.result();
    } catch (const std::exception& e) {
        showMessage(tr("Cannot read this leaf: %1").arg(QString::fromUtf8(e.what())));
        Q_EMIT leafFailed(message());
        return;
    }
    const Node& leaf = *node_;
    title_->setText(tr("<b>%1</b> · %2 · %3 · %4")
                        .arg(nodetext::keyPathText(leaf.keyPath()).toHtmlEscaped(),
                             nodetext::torchDtypeText(leaf.leaf().dtype),
                             nodetext::shapeText(leaf.leaf().shape),
                             nodetext::byteSizeText(leaf.leaf().nbytes)));
    const TensorSlice slice = TensorSlice::defaultFor(leaf.leaf().shape);
    tableSlice_->setSlice(slice);
    tableModel_->setLeaf(leaf.leaf().dtype, bytes_, slice);
    tableView_->fitColumns();
    const bool image = leaf.leaf().shape.size() >= 2 && leaf.leaf().numel > 0;
    const bool plot = !leaf.leaf().shape.empty() && leaf.leaf().numel > 0;
    tabs_->setTabEnabled(TableMode, true);
    tabs_->setTabEnabled(ImageMode, image);
    tabs_->setTabEnabled(PlotMode, plot);
    tabs_->setTabEnabled(StatisticsMode, true);
    if (image)
        imageView_->setLeaf(leaf.leaf().dtype, bytes_, leaf.leaf().shape);
    plotStale_ = plot;  // read when the plot tab is shown (startShownWork)
    statisticsView_->setLeaf(leaf.leaf().dtype, bytes_, leaf.leaf().numel);
    statisticsView_->setCurrentSlice(slice);
    statisticsStale_ = true;

    const QString kind = shapeKind(leaf.leaf().shape);
    const int fallback = kind == "hwc" || kind == "chw" ? ImageMode : TableMode;
    int wanted = QSettings().value("preview/mode/" + kind, fallback).toInt();
    if (!tabs_->isTabEnabled(wanted))
        wanted = TableMode;
    restoringMode_ = true;
    tabs_->setCurrentIndex(wanted);
    restoringMode_ = false;
    pages_->setCurrentWidget(tensorPage_);
    modeChosen(wanted);
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
    // As showNode() does; a single leaf's read still running is ignored (seriesNodes_).
    owner_ = std::move(owner);
    node_ = nodes.front();
    seriesNodes_ = nodes;
    bytes_ = {};
    tableModel_->clear();
    imageView_->clear();
    plotView_->clear();
    statisticsView_->clear();
    showMessage(tr("Mapping %n leaves…", "", static_cast<int>(nodes.size())));
    seriesWatcher_.setFuture(QtConcurrent::run([nodes, owner = owner_] {
        std::vector<tensordict::LeafBytes> bytes;
        for (const Node* n : nodes)
            bytes.push_back(n->bytes());
        return bytes;
    }));
    return true;
}

void PreviewPanel::seriesLoaded() {
    if (seriesNodes_.empty())
        return;
    std::vector<tensordict::LeafBytes> bytes;
    try {
        bytes = seriesWatcher_.result();
    } catch (const std::exception& e) {
        showMessage(tr("Cannot read these leaves: %1").arg(QString::fromUtf8(e.what())));
        Q_EMIT leafFailed(message());
        return;
    }
    if (bytes.size() != seriesNodes_.size())
        return;  // a read for another selection
    std::vector<PlotView::Series> series;
    QStringList names;
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        const Node& leaf = *seriesNodes_[i];
        names << nodetext::keyPathText(leaf.keyPath());
        // The legend names the path plainly: next/reward rather than ("next", "reward").
        QStringList parts;
        for (const std::string& key : leaf.keyPath())
            parts << nodetext::displayKey(key);
        series.push_back({parts.join('/'), leaf.leaf().dtype, std::move(bytes[i])});
    }
    title_->setText(tr("<b>%n series</b> · %1 · %2 values each", "", static_cast<int>(names.size()))
                        .arg(names.join(", ").toHtmlEscaped())
                        .arg(seriesNodes_.front()->leaf().numel));
    // Only the plot shows several leaves at once.
    for (Mode m : {TableMode, ImageMode, StatisticsMode})
        tabs_->setTabEnabled(m, false);
    tabs_->setTabEnabled(PlotMode, true);
    plotView_->setSeries(std::move(series), seriesNodes_.front()->leaf().numel);
    restoringMode_ = true;
    tabs_->setCurrentIndex(PlotMode);
    restoringMode_ = false;
    pages_->setCurrentWidget(tensorPage_);
    Q_EMIT leafReady();
}

SliceExportJob* PreviewPanel::exportSlice(SliceExportJob::Format format, const QString& path) {
    if (!node_ || !bytes_.data || exportJob_)
        return nullptr;
    auto* job =
        new SliceExportJob(format, path, node_->leaf().dtype, bytes_, tableModel_->slice(), this);
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
            [this, job, progress](const QString& error, bool cancelled) {
                if (progress)
                    progress->close();
                job->deleteLater();
                if (!error.isEmpty()) {
                    auto* box = new QMessageBox(QMessageBox::Warning, tr("Export failed"), error,
                                                QMessageBox::Ok, this);
                    box->setAttribute(Qt::WA_DeleteOnClose);
                    box->open();  // not exec(): never block the event loop
                }
                Q_EMIT exportFinished(error, cancelled);
            });
    job->start();
    return job;
}
