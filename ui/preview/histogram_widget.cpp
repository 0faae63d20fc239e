#include "histogram_widget.h"

#include <QHelpEvent>
#include <QLocale>
#include <QPainter>
#include <QToolTip>
#include <algorithm>
#include <cmath>
#include <numeric>

#include "plot_view.h"

namespace {

constexpr int kTicks = 4;  // intervals on the count axis

QString countText(std::int64_t n) {
    return QLocale().toString(qlonglong(n));
}

}  // namespace

HistogramWidget::HistogramWidget(QWidget* parent) : QWidget(parent) {
    setMinimumHeight(140);
    setMouseTracking(true);
}

void HistogramWidget::setData(std::vector<std::int64_t> bins, double lo, double hi) {
    bins_ = std::move(bins);
    total_ = std::accumulate(bins_.begin(), bins_.end(), std::int64_t(0));
    lo_ = lo, hi_ = hi;
    update();
}

std::int64_t HistogramWidget::axisTop() const {
    const std::int64_t largest = bins_.empty() ? 0 : *std::max_element(bins_.begin(), bins_.end());
    if (largest <= 0)
        return 1;
    // Whole counts: a step of at least one, the top a whole number of steps.
    const double step = std::max(1.0, niceTicks(0, double(largest), kTicks).step);
    return static_cast<std::int64_t>(std::ceil(double(largest) / step) * step);
}

QRect HistogramWidget::plotArea() const {
    const QFontMetrics fm = fontMetrics();
    const int labels = fm.horizontalAdvance(countText(axisTop())) + 10;
    return rect().adjusted(labels, fm.height() / 2 + 2, -6, -(fm.height() + 6));
}

int HistogramWidget::binAt(const QPoint& pos) const {
    const QRect area = plotArea();
    if (bins_.empty() || !area.contains(pos))
        return -1;
    const int bin = int(double(pos.x() - area.left()) * double(bins_.size()) / area.width());
    return std::clamp(bin, 0, int(bins_.size()) - 1);
}

QString HistogramWidget::binText(int bin) const {
    if (bin < 0 || bin >= int(bins_.size()))
        return {};
    const double width = (hi_ - lo_) / double(bins_.size());
    const double from = lo_ + width * bin, to = lo_ + width * (bin + 1);
    // numpy's bins are half-open but for the last, which holds the maximum.
    const bool last = bin + 1 == int(bins_.size());
    const std::int64_t n = bins_[std::size_t(bin)];
    return tr("[%1, %2%3: %4 values (%5%)")
        .arg(QString::number(from, 'g', 6), QString::number(to, 'g', 6), last ? "]" : ")",
             countText(n))
        .arg(total_ > 0 ? 100.0 * double(n) / double(total_) : 0.0, 0, 'f', 1);
}

void HistogramWidget::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.fillRect(rect(), palette().color(QPalette::Base));
    if (bins_.empty())
        return;
    const QRect area = plotArea();
    const QFontMetrics fm = fontMetrics();
    const std::int64_t top = axisTop();
    // The count axis: gridlines and labels at round counts.
    const double step = std::max(1.0, niceTicks(0, double(top), kTicks).step);
    QColor grid = palette().color(QPalette::Text);
    grid.setAlpha(40);
    for (double tick = 0; tick <= double(top) + 0.5; tick += step) {
        const int y = area.bottom() - int(double(area.height()) * tick / double(top));
        p.setPen(grid);
        p.drawLine(area.left(), y, area.right(), y);
        p.setPen(palette().color(QPalette::Text));
        p.drawText(QRect(0, y - fm.height() / 2, area.left() - 6, fm.height()),
                   Qt::AlignRight | Qt::AlignVCenter, countText(std::int64_t(tick)));
    }
    const double w = double(area.width()) / double(bins_.size());
    for (std::size_t i = 0; i < bins_.size(); ++i) {
        const double h = double(area.height()) * double(bins_[i]) / double(top);
        // A bin with any value shows, however few: one pixel at least.
        const double shown = bins_[i] > 0 ? std::max(1.0, h) : 0.0;
        p.fillRect(QRectF(area.left() + w * double(i), area.bottom() + 1 - shown,
                          std::max(1.0, w - 1), shown),
                   palette().color(QPalette::Highlight));
    }
    p.setPen(palette().color(QPalette::Text));
    p.drawLine(area.bottomLeft(), area.bottomRight());
    const QRect under(area.left(), area.bottom() + 3, area.width(), fm.height());
    p.drawText(under, Qt::AlignLeft, QString::number(lo_, 'g', 6));
    p.drawText(under, Qt::AlignRight, QString::number(hi_, 'g', 6));
    p.drawText(under, Qt::AlignHCenter, tr("%1 values").arg(countText(total_)));
}

bool HistogramWidget::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const int bin = binAt(help->pos());
        if (bin >= 0)
            QToolTip::showText(help->globalPos(), binText(bin), this);
        else
            QToolTip::hideText();
        return true;
    }
    return QWidget::event(event);
}
