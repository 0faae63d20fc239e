#include "plot_view.h"

#include <QCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegend>
#include <QLineSeries>
#include <QListWidget>
#include <QPushButton>
#include <QStyle>
#include <QTimer>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

#include "slice_selector.h"
#include "tensordict/element.h"
#include "tensordict/guarded_read.h"
#include "widget_shortcut.h"

std::optional<QList<QPointF>> plotPoints(tensordict::DType dtype,
                                         const tensordict::LeafBytes& bytes,
                                         const TensorSlice& slice, std::int64_t first,
                                         std::int64_t last, int buckets,
                                         const tensordict::CancelToken* cancel) {
    QList<QPointF> points;
    if (!bytes.data)
        return points;
    first = std::clamp<std::int64_t>(first, 0, slice.rows());
    last = std::clamp<std::int64_t>(last, first, slice.rows());
    const SliceHold held = requireSpan(bytes, dtype, slice.span(first, last), cancel);
    if (held.cancelled)
        return points;  // dropped unseen
    if (held.failed())
        return std::nullopt;
    // Reads the mapping in place, guarded: nullopt when the file lost data.
    const bool read = tensordict::tryGuardedRun([&] {
        const std::size_t item = tensordict::itemSize(dtype);
        const TensorSlice::Layout at = slice.layout();  // once: no per-element index arithmetic
        auto value = [&](std::int64_t i) {
            return tensordict::elementAsDouble(
                bytes.data.get() + static_cast<std::size_t>(at.at(i, 0)) * item, dtype);
        };
        const std::int64_t n = last - first;
        if (n <= 2 * buckets) {
            for (std::int64_t i = first; i < last; ++i) {
                const double v = value(i);
                if (std::isfinite(v))
                    points.append(QPointF(double(i), v));
            }
            return;
        }
        // Bucket by bucket: the envelope holds 2 points per bucket, whatever the length.
        for (int b = 0; b < buckets; ++b) {
            if (cancel && cancel->isCancelled())
                return;  // superseded, or the leaf is no longer shown
            const std::int64_t begin = first + n * b / buckets, end = first + n * (b + 1) / buckets;
            double mn = INFINITY, mx = -INFINITY;
            std::int64_t at_mn = begin, at_mx = begin;
            for (std::int64_t i = begin; i < end; ++i) {
                const double v = value(i);
                if (!std::isfinite(v))
                    continue;
                if (v < mn)
                    mn = v, at_mn = i;
                if (v > mx)
                    mx = v, at_mx = i;
            }
            if (!std::isfinite(mn))
                continue;
            if (at_mn <= at_mx) {
                points.append(QPointF(double(at_mn), mn));
                if (at_mx != at_mn)
                    points.append(QPointF(double(at_mx), mx));
            } else {
                points.append(QPointF(double(at_mx), mx));
                points.append(QPointF(double(at_mn), mn));
            }
        }
        return;
    });
    if (!read)
        return std::nullopt;
    return points;
}

NiceTicks niceTicks(double lo, double hi, int intervals) {
    NiceTicks ticks;
    const double span = hi - lo;
    if (!std::isfinite(span) || span <= 0 || intervals < 1)
        return ticks;
    const double raw = span / intervals;
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    const double n = raw / magnitude;
    ticks.step = (n < 1.5 ? 1 : n < 3 ? 2 : n < 7 ? 5 : 10) * magnitude;
    const int stepExponent = static_cast<int>(std::floor(std::log10(ticks.step) + 1e-9));
    const double largest = std::max(std::abs(lo), std::abs(hi));
    if (largest >= 1e6 || stepExponent < -4) {
        // As many mantissa digits as the step needs below the largest value's.
        const int valueExponent = static_cast<int>(std::floor(std::log10(largest)));
        ticks.format = QString("%.%1e").arg(std::clamp(valueExponent - stepExponent, 0, 6));
    } else {
        ticks.format = QString("%.%1f").arg(std::max(0, -stepExponent));
    }
    return ticks;
}

namespace {

// numpy's spelling of `slice` with its x dimension as ":", e.g. "[:, 3]".
QString indexText(const TensorSlice& slice) {
    QStringList parts;
    for (int d = 0; d < static_cast<int>(slice.shape.size()); ++d)
        parts << (d == slice.rowDim ? QString(":")
                                    : QString::number(slice.index[static_cast<std::size_t>(d)]));
    return "[" + parts.join(", ") + "]";
}

// Labels every nice step of [lo, hi], written here: "-0" as "0", and the
// format's precision (QtCharts' own dynamic ticks printed -0.0).
void labelTicks(QCategoryAxis* axis, double lo, double hi, const NiceTicks& ticks) {
    for (const QString& label : axis->categoriesLabels())
        axis->remove(label);
    if (!(hi > lo) || !(ticks.step > 0))
        return;
    const double first = std::ceil(lo / ticks.step - 1e-9) * ticks.step;
    axis->setStartValue(std::min(lo, first) - ticks.step * 1e-6);
    const QByteArray format = ticks.format.toLatin1();
    for (int k = 0;; ++k) {
        double v = first + k * ticks.step;
        if (v > hi + ticks.step * 1e-9 || k > 1000)
            break;
        if (std::abs(v) < ticks.step * 1e-9)
            v = 0;  // never "-0.0"
        const QString label = QString::asprintf(format.constData(), v);
        if (!axis->categoriesLabels().contains(label))
            axis->append(label, v);
    }
}

// How many intervals fit `length` pixels with labels `labelLength` long.
int intervalsFitting(double length, double labelLength) {
    return std::clamp(static_cast<int>(length / std::max(1.0, labelLength)), 1, 8);
}

// The list shows this many indices at most; larger dimensions are chosen from their start.
constexpr int kMaxListed = 4096;

}  // namespace

PlotView::PlotView(QWidget* parent)
    : QWidget(parent),
      selector_(new SliceSelector(SliceSelector::Mode::Plot)),
      seriesPanel_(new QWidget),
      seriesDimBox_(new QComboBox),
      seriesList_(new QListWidget),
      chart_(new QChart),
      xAxis_(new QCategoryAxis),
      yAxis_(new QCategoryAxis),
      status_(new QLabel) {
    chart_->addAxis(xAxis_, Qt::AlignBottom);
    chart_->addAxis(yAxis_, Qt::AlignLeft);
    chart_->legend()->hide();
    chart_->legend()->setAlignment(Qt::AlignTop);
    chart_->setMargins(QMargins(4, 4, 4, 4));
    for (QCategoryAxis* axis : {xAxis_, yAxis_})
        axis->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
    view_ = new QChartView(chart_);
    view_->setRenderHint(QPainter::Antialiasing);
    view_->setRubberBand(QChartView::HorizontalRubberBand);
    auto* reset = new QPushButton(tr("Reset zoom"));
    setAccessibleName(tr("Plot"));
    addButtonShortcut(this, reset, tr("Reset the plot's zoom"), QKeySequence(Qt::CTRL | Qt::Key_0));
    auto* bar = new QHBoxLayout;
    auto* hint = new QLabel(tr("Drag to zoom into a range; right-click zooms out."));
    hint->setWordWrap(true);  // the pane may be narrow
    bar->addWidget(hint, 1);
    bar->addStretch();
    bar->addWidget(reset);

    // The lines to draw, beside the plot: which dimension, which of its indices.
    auto* seriesLayout = new QVBoxLayout(seriesPanel_);
    seriesLayout->setContentsMargins(0, 0, 0, 0);
    seriesLayout->addWidget(new QLabel(tr("Series along:")));
    seriesLayout->addWidget(seriesDimBox_);
    seriesLayout->addWidget(seriesList_, 1);
    seriesLayout->addStretch(0);  // keeps the label and box on top while the list is hidden
    seriesList_->setToolTip(tr("Check the indices to draw as lines (at most %1).").arg(kMaxLines));
    seriesList_->setSpacing(2);  // check boxes a row apart, not touching
    seriesList_->setUniformItemSizes(true);
    seriesPanel_->setFixedWidth(150);
    seriesPanel_->hide();
    auto* plotRow = new QHBoxLayout;
    plotRow->addWidget(view_, 1);
    plotRow->addWidget(seriesPanel_);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(selector_);
    layout->addLayout(plotRow, 1);
    layout->addWidget(status_);

    connect(selector_, &SliceSelector::sliceChanged, this, [this](const TensorSlice& slice) {
        // The dimensions offered follow the x axis; the lines' names ("[3, :, 0]") the sliders.
        if (seriesPanel_->isVisible() &&
            (slice.rowDim != listedFor_.rowDim || slice.index != listedFor_.index))
            fillSeriesPanel();
        replotAll();
    });
    connect(reset, &QPushButton::clicked, this, &PlotView::replotAll);
    connect(xAxis_, &QValueAxis::rangeChanged, this, [this](qreal min, qreal max) {
        if (!settingRange_)
            replot(min, max);  // a rubber-band zoom: fetch the detail of that range
    });
    connect(seriesDimBox_, &QComboBox::activated, this,
            [this] { setSeriesDim(seriesDimBox_->currentData().toInt()); });
    connect(seriesList_, &QListWidget::itemChanged, this, &PlotView::seriesChecked);
}

PlotView::~PlotView() = default;

void PlotView::setLeaf(tensordict::DType dtype, tensordict::LeafBytes bytes,
                       const std::vector<std::int64_t>& shape) {
    series_.clear();
    dtype_ = dtype;
    bytes_ = std::move(bytes);
    TensorSlice slice = TensorSlice::defaultFor(shape);
    seriesDim_ = -1;
    if (shape.size() >= 2) {
        // Along the longest dimension: [1000, 4] and [4, 1000] both plot 1000 values.
        const auto longest = std::max_element(shape.begin(), shape.end());
        const int x = static_cast<int>(longest - shape.begin());
        slice.setDims(x, -1);
        // A short other dimension gives the lines (not when comparing: A and B are the lines).
        for (int d = 0; d < static_cast<int>(shape.size()) && !other_.data; ++d) {
            const std::int64_t size = shape[static_cast<std::size_t>(d)];
            if (d != x && size >= 2 && size <= 8 &&
                (seriesDim_ < 0 || size < shape[static_cast<std::size_t>(seriesDim_)]))
                seriesDim_ = d;
        }
    }
    selector_->setSlice(slice, seriesDim_);
    chosen_ = defaultIndices(seriesDim_);
    fillSeriesPanel();
    replotAll();
}

void PlotView::setSeries(std::vector<Series> leaves, std::int64_t length) {
    bytes_ = {};
    other_ = {};
    series_ = std::move(leaves);
    seriesDim_ = -1;
    chosen_.clear();
    selector_->setSlice(TensorSlice::defaultFor({length}));
    fillSeriesPanel();
    replotAll();
}

void PlotView::clear() {
    read_.cancel();  // the leaf is no longer shown: its reduction stops, unseen
    bytes_ = {};
    other_ = {};
    series_.clear();
    drawn_.clear();
    seriesDim_ = -1;
    chosen_.clear();
    for (QLineSeries* line : lines_)
        line->clear();
    chart_->legend()->hide();
    seriesPanel_->hide();
}

void PlotView::setOther(tensordict::DType dtype, tensordict::LeafBytes bytes, const QString& name,
                        const QString& otherName) {
    otherDtype_ = dtype;
    other_ = std::move(bytes);
    name_ = name;
    otherName_ = otherName;
}

QList<qint64> PlotView::defaultIndices(int dim) const {
    const TensorSlice& slice = selector_->slice();
    if (dim < 0 || dim >= static_cast<int>(slice.shape.size()))
        return {};
    const std::int64_t size = slice.shape[static_cast<std::size_t>(dim)];
    if (size > 8)
        return {slice.index[static_cast<std::size_t>(dim)]};  // where its slider was
    QList<qint64> all;
    for (std::int64_t i = 0; i < size; ++i)
        all << i;
    return all;
}

void PlotView::setSeriesDim(int dim) {
    if (!bytes_.data || other_.data)
        return;
    TensorSlice slice = selector_->slice();
    const int n = static_cast<int>(slice.shape.size());
    if (dim >= n || dim == seriesDim_)
        return;
    if (dim >= 0 && dim == slice.rowDim) {
        // The x axis' dimension becomes the lines': x takes the old lines' dimension,
        // or the longest other one.
        int x = seriesDim_;
        for (int d = 0; d < n && x < 0; ++d)
            if (d != dim)
                x = d;
        for (int d = 0; d < n; ++d)
            if (seriesDim_ < 0 && d != dim &&
                slice.shape[static_cast<std::size_t>(d)] > slice.shape[static_cast<std::size_t>(x)])
                x = d;
        slice.setDims(x, -1);
    }
    seriesDim_ = dim;
    selector_->setSlice(slice, seriesDim_);
    chosen_ = defaultIndices(seriesDim_);
    fillSeriesPanel();
    replotAll();
}

void PlotView::setSeriesIndices(const QList<qint64>& indices) {
    if (seriesDim_ < 0)
        return;
    const std::int64_t size = selector_->slice().shape[static_cast<std::size_t>(seriesDim_)];
    chosen_.clear();
    for (qint64 i : indices)
        if (i >= 0 && i < size && !chosen_.contains(i))
            chosen_ << i;
    std::sort(chosen_.begin(), chosen_.end());
    fillSeriesPanel();
    replot(xAxis_->min(), xAxis_->max());
}

void PlotView::fillSeriesPanel() {
    const TensorSlice& slice = selector_->slice();
    listedFor_ = slice;
    const int n = static_cast<int>(slice.shape.size());
    // Only a single leaf of two or more dimensions has indices to choose lines from.
    seriesPanel_->setVisible(bytes_.data && !other_.data && n >= 2);
    const QSignalBlocker blockBox(seriesDimBox_), blockList(seriesList_);
    seriesDimBox_->clear();
    seriesDimBox_->addItem(tr("— (one line)"), -1);
    for (int d = 0; d < n; ++d)
        if (d != slice.rowDim)  // the x axis runs along its own dimension
            seriesDimBox_->addItem(
                tr("dim %1 (%2)").arg(d).arg(slice.shape[static_cast<std::size_t>(d)]), d);
    seriesDimBox_->setCurrentIndex(std::max(0, seriesDimBox_->findData(seriesDim_)));
    seriesList_->clear();
    // No dimension chosen, no list: an empty grey box looked broken.
    seriesList_->setVisible(seriesDim_ >= 0);
    if (seriesDim_ < 0)
        return;
    const std::int64_t size = slice.shape[static_cast<std::size_t>(seriesDim_)];
    // As tall as the check box or the text, whichever is taller, with a margin.
    const int rowHeight = std::max(seriesList_->fontMetrics().height(),
                                   seriesList_->style()->pixelMetric(QStyle::PM_IndicatorHeight)) +
                          6;
    for (std::int64_t i = 0; i < std::min<std::int64_t>(size, kMaxListed); ++i) {
        TensorSlice at = slice;
        at.index[static_cast<std::size_t>(seriesDim_)] = i;
        auto* item = new QListWidgetItem(indexText(at), seriesList_);
        item->setSizeHint({0, rowHeight});
        item->setData(Qt::UserRole, qint64(i));
        item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable);
        item->setCheckState(chosen_.contains(i) ? Qt::Checked : Qt::Unchecked);
    }
}

void PlotView::seriesChecked() {
    chosen_.clear();
    for (int row = 0; row < seriesList_->count(); ++row)
        if (seriesList_->item(row)->checkState() == Qt::Checked)
            chosen_ << seriesList_->item(row)->data(Qt::UserRole).toLongLong();
    replot(xAxis_->min(), xAxis_->max());
}

std::vector<PlotView::Line> PlotView::linesToDraw() const {
    const TensorSlice& slice = selector_->slice();
    std::vector<Line> lines;
    if (!series_.empty()) {
        for (const Series& s : series_)
            lines.push_back({s.name, s.dtype, s.bytes, slice});
    } else if (other_.data) {
        lines.push_back({name_, dtype_, bytes_, slice});
        lines.push_back({otherName_, otherDtype_, other_, slice});
    } else if (seriesDim_ >= 0) {
        for (qint64 i : chosen_) {
            Line line{{}, dtype_, bytes_, slice};
            line.slice.index[static_cast<std::size_t>(seriesDim_)] = i;
            line.name = indexText(line.slice);
            lines.push_back(std::move(line));
        }
    } else if (bytes_.data) {
        lines.push_back({indexText(slice), dtype_, bytes_, slice});
    }
    return lines;
}

void PlotView::zoomTo(double first, double last) {
    replot(first, last);
}

int PlotView::pointCount() const {
    return lines_.empty() ? 0 : static_cast<int>(lines_[0]->count());
}

int PlotView::otherPointCount() const {
    return lines_.size() < 2 ? 0 : static_cast<int>(lines_[1]->count());
}

void PlotView::replotAll() {
    replot(0, double(selector_->slice().rows()));
}

void PlotView::replot(double first, double last) {
    if (!hasData())
        return;
    settingRange_ = true;
    xAxis_->setRange(first, std::max(last, first + 1));
    labelAxes();
    settingRange_ = false;
    drawing_ = linesToDraw();
    leftOut_ = std::max(0, static_cast<int>(drawing_.size()) - kMaxLines);
    drawing_.resize(std::min<std::size_t>(drawing_.size(), kMaxLines));
    const auto b = static_cast<std::int64_t>(std::floor(first)),
               e = static_cast<std::int64_t>(std::ceil(last)) + 1;
    // A newer range: the running reduction stops at its next bucket, unseen.
    read_.start(
        [lines = drawing_, b, e](const tensordict::CancelToken& cancel) -> std::optional<Points> {
            Points points;
            for (const Line& line : lines) {
                auto read = plotPoints(line.dtype, line.bytes, line.slice, b, e, 2000, &cancel);
                if (!read)
                    return std::nullopt;
                points.push_back(std::move(*read));
            }
            return points;
        },
        [this](const std::optional<Points>& read) {
            if (!read) {
                Q_EMIT sourceChanged();
                return;
            }
            showPoints(*read);
        });
}

void PlotView::labelAxes() {
    const QFontMetricsF metrics(xAxis_->labelsFont());
    const QRectF area = chart_->plotArea().isEmpty() ? QRectF(0, 0, 400, 300) : chart_->plotArea();
    // x: indices, whole numbers; as many labels as fit side by side with room between.
    const auto xLabel = [&](double v) {
        return metrics.horizontalAdvance(QString::number(v, 'f', 0));
    };
    const double xWidth = std::max(xLabel(xAxis_->min()), xLabel(xAxis_->max())) * 1.8 + 12;
    NiceTicks x = niceTicks(xAxis_->min(), xAxis_->max(), intervalsFitting(area.width(), xWidth));
    if (x.step <= 1)
        x = {1, "%.0f"};
    labelTicks(xAxis_, xAxis_->min(), xAxis_->max(), x);
    // y: a label's height and a half between labels.
    const NiceTicks y = niceTicks(yAxis_->min(), yAxis_->max(),
                                  intervalsFitting(area.height(), metrics.height() * 2.5));
    labelTicks(yAxis_, yAxis_->min(), yAxis_->max(), y);
}

void PlotView::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    if (hasData())  // as many labels as fit the new size, once it is laid out
        QTimer::singleShot(0, this, [this] {
            const bool setting = std::exchange(settingRange_, true);
            labelAxes();
            settingRange_ = setting;
        });
}

QStringList PlotView::xTickLabels() const {
    return xAxis_->categoriesLabels();
}

QStringList PlotView::yTickLabels() const {
    return yAxis_->categoriesLabels();
}

void PlotView::showPoints(const Points& points) {
    drawn_ = drawing_;
    // As many line series as lines; kept from one plot to the next so that they keep their colours.
    while (lines_.size() > points.size()) {
        chart_->removeSeries(lines_.back());
        delete lines_.back();
        lines_.pop_back();
    }
    while (lines_.size() < points.size()) {
        auto* line = new QLineSeries;
        chart_->addSeries(line);
        line->attachAxis(xAxis_);
        line->attachAxis(yAxis_);
        connect(line, &QLineSeries::hovered, this, &PlotView::hover);
        lines_.push_back(line);
    }
    double lo = INFINITY, hi = -INFINITY;
    int total = 0;
    for (std::size_t i = 0; i < points.size(); ++i) {
        lines_[i]->setName(drawn_[i].name);
        lines_[i]->replace(points[i]);
        total += static_cast<int>(points[i].size());
        for (const QPointF& p : points[i])
            lo = std::min(lo, p.y()), hi = std::max(hi, p.y());
    }
    chart_->legend()->setVisible(points.size() > 1);
    if (std::isfinite(lo)) {
        const double pad = hi > lo ? (hi - lo) * 0.05 : std::max(0.5, std::abs(hi) * 0.05);
        // The range runs from tick to tick, so that its ends are labelled with round values.
        const NiceTicks ticks = niceTicks(lo - pad, hi + pad, 6);
        double bottom = std::floor((lo - pad) / ticks.step) * ticks.step;
        double top = std::ceil((hi + pad) / ticks.step) * ticks.step;
        if (top <= bottom)
            top = bottom + ticks.step;
        settingRange_ = true;
        yAxis_->setRange(bottom, top);
        labelAxes();
        settingRange_ = false;
    }
    QString status = points.size() > 1 ? tr("%n lines, ", "", static_cast<int>(points.size())) +
                                             tr("%n points drawn", "", total)
                                       : tr("%n points drawn", "", total);
    if (points.empty() && seriesDim_ >= 0)
        status = tr("Check the series to draw.");
    if (leftOut_ > 0)
        status += tr(" · %n more chosen, not drawn", "", leftOut_);
    status_->setText(status);
    Q_EMIT plotted();
}

void PlotView::hover(const QPointF& point, bool state) {
    if (!state || drawn_.empty())
        return;
    const auto i = static_cast<std::int64_t>(std::llround(point.x()));
    if (i < 0 || i >= drawn_.front().slice.rows())
        return;
    // Through the guarded path: the file may have shrunk under the mapping.
    QStringList values;
    for (const Line& line : drawn_) {
        const std::size_t item = tensordict::itemSize(line.dtype);
        std::byte element[16];
        const auto held = holdIfFilled(line.bytes, line.dtype, line.slice.span(i, i + 1));
        if (!held)
            return;  // its page was given back: no value until the next plot
        if (!tensordict::tryGuardedCopy(
                element,
                line.bytes.data.get() +
                    static_cast<std::size_t>(line.slice.elementIndex(i, 0)) * item,
                item)) {
            Q_EMIT sourceChanged();
            return;
        }
        const QString value =
            QString::fromStdString(tensordict::formatElement(element, line.dtype));
        values << (drawn_.size() == 1 ? value : tr("%1 = %2").arg(line.name, value));
    }
    if (drawn_.size() == 1)
        status_->setText(tr("[%1] = %2").arg(i).arg(values.front()));
    else
        status_->setText(tr("[%1]  %2").arg(i).arg(values.join(QStringLiteral("  ·  "))));
}

QString PlotView::statusText() const {
    return status_->text();
}

QString PlotView::hoverText() const {
    return status_->text();
}
