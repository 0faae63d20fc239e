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
      otherSeries_(new QLineSeries),
      xAxis_(new QValueAxis),
      yAxis_(new QValueAxis),
      status_(new QLabel) {
    chart_->addSeries(series_);
    chart_->addSeries(otherSeries_);
    chart_->addAxis(xAxis_, Qt::AlignBottom);
    chart_->addAxis(yAxis_, Qt::AlignLeft);
    for (QLineSeries* s : {series_, otherSeries_}) {
        s->attachAxis(xAxis_);
        s->attachAxis(yAxis_);
    }
    otherSeries_->setVisible(false);
    chart_->legend()->hide();
    chart_->legend()->setAlignment(Qt::AlignTop);
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
    connect(otherSeries_, &QLineSeries::hovered, this, &PlotView::hover);
    connect(&watcher_, &QFutureWatcherBase::finished, this, [this] {
        const std::optional<Lines> read = watcher_.result();
        if (!read) {
            Q_EMIT sourceChanged();
            return;
        }
        const QList<QPointF>& points = read->points;
        series_->replace(points);
        otherSeries_->replace(read->otherPoints);
        double lo = INFINITY, hi = -INFINITY;
        for (const QList<QPointF>* line : {&points, &read->otherPoints})
            for (const QPointF& p : *line)
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
    if (shape.size() >= 2) {
        // Along the last dimension with more than one element: [N, 1] plots its N values.
        int x = static_cast<int>(shape.size()) - 1;
        while (x > 0 && shape[static_cast<std::size_t>(x)] == 1)
            --x;
        slice.setDims(x, -1);
    }
    selector_->setSlice(slice);
    replot(0, double(slice.rows()));
}

void PlotView::clear() {
    bytes_ = {};
    other_ = {};
    series_->clear();
    otherSeries_->clear();
    otherSeries_->setVisible(false);
    chart_->legend()->hide();
}

void PlotView::setOther(tensordict::DType dtype, tensordict::LeafBytes bytes, const QString& name,
                        const QString& otherName) {
    otherDtype_ = dtype;
    other_ = std::move(bytes);
    series_->setName(name);
    otherSeries_->setName(otherName);
    otherSeries_->setVisible(other_.data != nullptr);
    chart_->legend()->setVisible(other_.data != nullptr);
}

int PlotView::otherPointCount() const {
    return static_cast<int>(otherSeries_->count());
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
    watcher_.setFuture(QtConcurrent::run([dtype = dtype_, bytes = bytes_, otherDtype = otherDtype_,
                                          other = other_, slice, b, e]() -> std::optional<Lines> {
        Lines lines;
        auto points = plotPoints(dtype, bytes, slice, b, e);
        if (!points)
            return std::nullopt;
        lines.points = std::move(*points);
        if (other.data) {
            points = plotPoints(otherDtype, other, slice, b, e);
            if (!points)
                return std::nullopt;
            lines.otherPoints = std::move(*points);
        }
        return lines;
    }));
}

void PlotView::hover(const QPointF& point, bool state) {
    if (!state || !bytes_.data)
        return;
    const auto i = static_cast<std::int64_t>(std::llround(point.x()));
    const TensorSlice slice = selector_->slice();
    if (i < 0 || i >= slice.rows())
        return;
    // Through the guarded path: the file may have shrunk under the mapping.
    auto read = [&](tensordict::DType dtype, const tensordict::LeafBytes& bytes, QString* text) {
        const std::size_t item = tensordict::itemSize(dtype);
        std::byte element[16];
        if (!tensordict::tryGuardedCopy(
                element,
                bytes.data.get() + static_cast<std::size_t>(slice.elementIndex(i, 0)) * item, item))
            return false;
        *text = QString::fromStdString(tensordict::formatElement(element, dtype));
        return true;
    };
    QString value, other;
    if (!read(dtype_, bytes_, &value) || (other_.data && !read(otherDtype_, other_, &other))) {
        Q_EMIT sourceChanged();
        return;
    }
    if (other_.data)
        status_->setText(tr("[%1]  %2 = %3  ·  %4 = %5")
                             .arg(i)
                             .arg(series_->name(), value, otherSeries_->name(), other));
    else
        status_->setText(tr("[%1] = %2").arg(i).arg(value));
}

QString PlotView::hoverText() const {
    return status_->text();
}
