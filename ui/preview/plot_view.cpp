#include "plot_view.h"

#include <QChart>
#include <QChartView>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineSeries>
#include <QPushButton>
#include <QVBoxLayout>
#include <QValueAxis>
#include <QtConcurrent/QtConcurrentRun>
#include <cmath>

#include "slice_selector.h"
#include "tensordict/element.h"
#include "tensordict/guarded_read.h"

std::optional<QList<QPointF>> plotPoints(tensordict::DType dtype,
                                         const tensordict::LeafBytes& bytes,
                                         const TensorSlice& slice, std::int64_t first,
                                         std::int64_t last, int buckets) {
    QList<QPointF> points;
    if (!bytes.data)
        return points;
    // Reads the mapping in place, guarded: nullopt when the file lost data.
    const bool read = tensordict::tryGuardedRun([&] {
        first = std::clamp<std::int64_t>(first, 0, slice.rows());
        last = std::clamp<std::int64_t>(last, first, slice.rows());
        const std::size_t item = tensordict::itemSize(dtype);
        auto value = [&](std::int64_t i) {
            return tensordict::elementAsDouble(
                bytes.data.get() + static_cast<std::size_t>(slice.elementIndex(i, 0)) * item,
                dtype);
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
        for (int b = 0; b < buckets; ++b) {
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

PlotView::PlotView(QWidget* parent)
    : QWidget(parent),
      selector_(new SliceSelector(SliceSelector::Mode::Plot)),
      chart_(new QChart),
      series_(new QLineSeries),
      xAxis_(new QValueAxis),
      yAxis_(new QValueAxis),
      status_(new QLabel) {
    chart_->addSeries(series_);
    chart_->addAxis(xAxis_, Qt::AlignBottom);
    chart_->addAxis(yAxis_, Qt::AlignLeft);
    series_->attachAxis(xAxis_);
    series_->attachAxis(yAxis_);
    chart_->legend()->hide();
    chart_->setMargins(QMargins(4, 4, 4, 4));
    xAxis_->setLabelFormat("%g");
    yAxis_->setLabelFormat("%g");
    view_ = new QChartView(chart_);
    view_->setRenderHint(QPainter::Antialiasing);
    view_->setRubberBand(QChartView::HorizontalRubberBand);
    auto* reset = new QPushButton(tr("Reset zoom"));
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Drag to zoom into a range; right-click zooms out.")));
    bar->addStretch();
    bar->addWidget(reset);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(selector_);
    layout->addWidget(view_, 1);
    layout->addWidget(status_);

    connect(selector_, &SliceSelector::sliceChanged, this,
            [this] { replot(0, double(selector_->slice().rows())); });
    connect(reset, &QPushButton::clicked, this,
            [this] { replot(0, double(selector_->slice().rows())); });
    connect(xAxis_, &QValueAxis::rangeChanged, this, [this](qreal min, qreal max) {
        if (!settingRange_)
            replot(min, max);  // a rubber-band zoom: fetch the detail of that range
    });
    connect(series_, &QLineSeries::hovered, this, &PlotView::hover);
    connect(&watcher_, &QFutureWatcherBase::finished, this, [this] {
        const std::optional<QList<QPointF>> read = watcher_.result();
        if (!read) {
            Q_EMIT sourceChanged();
            return;
        }
        const QList<QPointF>& points = *read;
        series_->replace(points);
        double lo = INFINITY, hi = -INFINITY;
        for (const QPointF& p : points)
            lo = std::min(lo, p.y()), hi = std::max(hi, p.y());
        if (std::isfinite(lo)) {
            const double pad = hi > lo ? (hi - lo) * 0.05 : 0.5;
            settingRange_ = true;
            yAxis_->setRange(lo - pad, hi + pad);
            settingRange_ = false;
        }
        status_->setText(tr("%1 points drawn").arg(points.size()));
        Q_EMIT plotted();
    });
}

PlotView::~PlotView() {
    watcher_.waitForFinished();
}

void PlotView::setLeaf(tensordict::DType dtype, tensordict::LeafBytes bytes,
                       const std::vector<std::int64_t>& shape) {
    dtype_ = dtype;
    bytes_ = std::move(bytes);
    TensorSlice slice = TensorSlice::defaultFor(shape);
    if (shape.size() >= 2)
        slice.setDims(static_cast<int>(shape.size()) - 1, -1);
    selector_->setSlice(slice);
    replot(0, double(slice.rows()));
}

void PlotView::clear() {
    bytes_ = {};
    series_->clear();
}

void PlotView::zoomTo(double first, double last) {
    replot(first, last);
}

int PlotView::pointCount() const {
    return static_cast<int>(series_->count());
}

void PlotView::replot(double first, double last) {
    if (!bytes_.data)
        return;
    watcher_.waitForFinished();
    settingRange_ = true;
    xAxis_->setRange(first, std::max(last, first + 1));
    settingRange_ = false;
    const TensorSlice slice = selector_->slice();
    const auto b = static_cast<std::int64_t>(std::floor(first)),
               e = static_cast<std::int64_t>(std::ceil(last)) + 1;
    watcher_.setFuture(QtConcurrent::run([dtype = dtype_, bytes = bytes_, slice, b, e] {
        return plotPoints(dtype, bytes, slice, b, e);
    }));
}

void PlotView::hover(const QPointF& point, bool state) {
    if (!state || !bytes_.data)
        return;
    const auto i = static_cast<std::int64_t>(std::llround(point.x()));
    const TensorSlice slice = selector_->slice();
    if (i < 0 || i >= slice.rows())
        return;
    const std::byte* p = bytes_.data.get() + static_cast<std::size_t>(slice.elementIndex(i, 0)) *
                                                 tensordict::itemSize(dtype_);
    std::byte element[16];
    if (!tensordict::tryGuardedCopy(element, p, tensordict::itemSize(dtype_))) {
        Q_EMIT sourceChanged();
        return;
    }
    status_->setText(tr("[%1] = %2")
                         .arg(i)
                         .arg(QString::fromStdString(tensordict::formatElement(element, dtype_))));
}

QString PlotView::hoverText() const {
    return status_->text();
}
