#include "statistics_view.h"

#include "flow_layout.h"
#include "histogram_widget.h"

#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QPainter>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QThread>
#include <QVBoxLayout>
#include "widget_shortcut.h"

StatisticsView::StatisticsView(QWidget* parent)
    : QWidget(parent),
      scope_(new QComboBox),
      threads_(new QSpinBox),
      computeButton_(new QPushButton(tr("Compute"))),
      cancelButton_(new QPushButton(tr("Cancel"))),
      progress_(new QProgressBar),
      form_(new QFormLayout),
      histogram_(new HistogramWidget) {
    scope_->addItem(tr("Whole leaf"));
    scope_->addItem(tr("Current table slice"));
    threads_->setRange(1, std::max(1, QThread::idealThreadCount()));
    threads_->setValue(std::max(1, QThread::idealThreadCount()));
    threads_->setPrefix(tr("threads: "));
    cancelButton_->setEnabled(false);
    progress_->setRange(0, 1000);
    progress_->setValue(0);
    auto* bar = new FlowLayout;  // wraps when the pane is narrow
    bar->addWidget(scope_);
    bar->addWidget(threads_);
    bar->addWidget(computeButton_);
    bar->addWidget(cancelButton_);
    progress_->setMinimumWidth(160);
    bar->addWidget(progress_);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addLayout(form_);
    layout->addWidget(new QLabel(tr("Histogram of the finite values:")));
    layout->addWidget(histogram_, 1);
    setAccessibleName(tr("Statistics"));
    addButtonShortcut(this, computeButton_, tr("Compute the statistics"),
                      QKeySequence(Qt::CTRL | Qt::Key_Return));
    addButtonShortcut(this, cancelButton_, tr("Cancel the statistics"),
                      QKeySequence(Qt::Key_Escape));
    connect(computeButton_, &QPushButton::clicked, this, &StatisticsView::compute);
    connect(cancelButton_, &QPushButton::clicked, this, &StatisticsView::cancel);
}

void StatisticsView::computed(const Statistics& s) {
    stopping_ = false;
    computeButton_->setEnabled(true);
    cancelButton_->setEnabled(false);
    result_ = s;
    if (s.sourceChanged) {
        progress_->setFormat(tr("the file changed"));
        Q_EMIT sourceChanged();
    } else if (s.cancelled) {
        progress_->setFormat(tr("cancelled"));
    } else {
        progress_->setFormat(tr("done"));
        showStatistics(s);
    }
    Q_EMIT finished();
}

StatisticsView::~StatisticsView() = default;

void StatisticsView::setLeaf(tensordict::DType dtype, tensordict::LeafBytes bytes,
                             std::int64_t numel) {
    dropComputation();
    dtype_ = dtype;
    bytes_ = std::move(bytes);
    other_ = {};
    numel_ = numel;
    slice_ = {};
    showStatistics({});
    progress_->setValue(0);
    progress_->setFormat("%p%");
}

void StatisticsView::setOther(tensordict::DType dtype, tensordict::LeafBytes bytes) {
    dropComputation();
    otherDtype_ = dtype;
    other_ = std::move(bytes);
}

void StatisticsView::dropComputation() {
    job_.cancel();  // of the leaf before: its result is never shown
    stopping_ = false;
    computeButton_->setEnabled(true);
    cancelButton_->setEnabled(false);
}

void StatisticsView::clear() {
    setLeaf(tensordict::DType::Float32, {}, 0);
}

void StatisticsView::cancel() {
    job_.stop();  // the statistics end early and say "cancelled"
    stopping_ = job_.isBusy();
}

void StatisticsView::compute() {
    // One computation at a time; but one that was asked to stop (its tab
    // left a moment ago) is replaced, its "cancelled" never shown.
    if (job_.isBusy() && !stopping_)
        return;
    stopping_ = false;
    StatisticsRequest request;
    request.dtype = dtype_;
    request.bytes = bytes_;
    request.otherDtype = otherDtype_;
    request.other = other_;
    request.numel = numel_;
    request.threads = threads_->value();
    if (scope_->currentIndex() == 1 && !slice_.shape.empty())
        request.slice = slice_;
    computeButton_->setEnabled(false);
    cancelButton_->setEnabled(true);
    progress_->setFormat("%p%");
    job_.start(
        [request](const tensordict::CancelToken& token, const JobProgress& progress) {
            return computeStatistics(request, [&](double fraction) {
                progress(fraction);
                return !token.isCancelled();
            });
        },
        [this](const Statistics& s) { computed(s); },
        [this](double fraction) { progress_->setValue(static_cast<int>(fraction * 1000)); });
}

void StatisticsView::showStatistics(const Statistics& s) {
    while (form_->rowCount() > 0)
        form_->removeRow(0);
    auto row = [this](const QString& name, const QString& value) {
        auto* label = new QLabel(value);
        label->setObjectName(name);
        label->setTextInteractionFlags(Qt::TextSelectableByMouse);
        form_->addRow(name + ":", label);
    };
    const bool any = s.count > 0;
    const tensordict::DTypeCategory category =
        tensordict::dtypeInfo(other_.data ? otherDtype_ : dtype_).category;
    if (category == tensordict::DTypeCategory::Complex ||
        tensordict::dtypeInfo(dtype_).category == tensordict::DTypeCategory::Complex)
        row(tr("Of"), other_.data ? tr("|A − B|, the magnitude of each complex difference")
                                  : tr("|z|, the magnitude of each complex element"));
    row(tr("Elements"), any ? QLocale().toString(qlonglong(s.count)) : QString("—"));
    row(tr("Min"), s.finite ? QString::number(s.min, 'g', 10) : QString("—"));
    row(tr("Max"), s.finite ? QString::number(s.max, 'g', 10) : QString("—"));
    row(tr("Mean"), s.finite ? QString::number(s.mean, 'g', 10) : QString("—"));
    // Both: numpy's std divides by N, torch.std (and pandas) by N - 1.
    row(tr("Std (population, N)"), s.finite ? QString::number(s.std, 'g', 10) : QString("—"));
    row(tr("Std (sample, N − 1)"),
        s.finite > 1 ? QString::number(s.sampleStd, 'g', 10) : QString("—"));
    row(tr("NaN"), QLocale().toString(qlonglong(s.nans)));
    row(tr("Inf"), QLocale().toString(qlonglong(s.infs)));
    row(tr("Zeros"), QLocale().toString(qlonglong(s.zeros)));
    histogram_->setData(s.histogram, s.histogramLow, s.histogramHigh);
}

QString StatisticsView::field(const QString& name) const {
    const auto* label = findChild<QLabel*>(name);
    return label ? label->text() : QString();
}
