#include "size_bar_chart.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>

namespace {
constexpr int kMargin = 4;
}

SizeBarChart::SizeBarChart(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

void SizeBarChart::setBars(std::vector<Bar> bars, const QString& emptyText) {
    bars_ = std::move(bars);
    emptyText_ = emptyText;
    hovered_ = -1;
    updateGeometry();
    update();
}

int SizeBarChart::rowHeight() const {
    return fontMetrics().height() + 8;
}

QRect SizeBarChart::barRect(int index) const {
    if (index < 0 || index >= static_cast<int>(bars_.size()))
        return {};
    return {0, kMargin + index * rowHeight(), width(), rowHeight()};
}

int SizeBarChart::barAt(const QPoint& pos) const {
    for (int i = 0; i < static_cast<int>(bars_.size()); ++i)
        if (barRect(i).contains(pos))
            return i;
    return -1;
}

QSize SizeBarChart::sizeHint() const {
    const int rows = std::max<int>(1, static_cast<int>(bars_.size()));
    return {360, 2 * kMargin + rows * rowHeight()};
}

QSize SizeBarChart::minimumSizeHint() const {
    return {200, sizeHint().height()};
}

void SizeBarChart::paintEvent(QPaintEvent*) {
    QPainter p(this);
    const QPalette& pal = palette();
    if (bars_.empty()) {
        p.setPen(pal.color(QPalette::PlaceholderText));
        p.drawText(rect().adjusted(kMargin, 0, 0, 0), Qt::AlignLeft | Qt::AlignVCenter, emptyText_);
        return;
    }
    const QFontMetrics fm = fontMetrics();
    // Labels and values get the room they need, up to a share of the width; bars the rest.
    int labelWidth = 0, valueWidth = 0;
    for (const Bar& b : bars_) {
        labelWidth = std::max(labelWidth, fm.horizontalAdvance(b.label));
        valueWidth = std::max(valueWidth, fm.horizontalAdvance(b.valueText));
    }
    labelWidth = std::min(labelWidth + 12, width() * 2 / 5);  // + a little: elision rounds
    valueWidth = std::min(valueWidth + 8, width() * 2 / 5);
    const int barLeft = kMargin + labelWidth;
    const int barSpan = std::max(10, width() - barLeft - valueWidth - kMargin);
    const std::uint64_t largest =
        std::max_element(bars_.begin(), bars_.end(), [](const Bar& a, const Bar& b) {
            return a.bytes < b.bytes;
        })->bytes;
    const QColor barColor = pal.color(QPalette::Highlight);
    for (int i = 0; i < static_cast<int>(bars_.size()); ++i) {
        const Bar& b = bars_[static_cast<std::size_t>(i)];
        const QRect row = barRect(i);
        if (i == hovered_ && !b.keyPath.isEmpty())
            p.fillRect(row, pal.color(QPalette::AlternateBase));
        p.setPen(pal.color(QPalette::WindowText));
        p.drawText(QRect(kMargin, row.top(), labelWidth - 4, row.height()),
                   Qt::AlignLeft | Qt::AlignVCenter,
                   fm.elidedText(b.label, Qt::ElideMiddle, labelWidth - 4));
        const int length =
            largest > 0 ? static_cast<int>(double(b.bytes) / double(largest) * barSpan) : 0;
        // Every non-empty bar stays visible, however small its share.
        const int shown = b.bytes > 0 ? std::max(2, length) : 0;
        QColor fill = barColor;
        if (b.keyPath.isEmpty())
            fill.setAlpha(170);
        p.fillRect(QRect(barLeft, row.top() + 3, shown, row.height() - 6), fill);
        p.drawText(QRect(barLeft + shown + 6, row.top(), width(), row.height()),
                   Qt::AlignLeft | Qt::AlignVCenter, b.valueText);
    }
}

void SizeBarChart::mouseMoveEvent(QMouseEvent* event) {
    const int bar = barAt(event->position().toPoint());
    if (bar != hovered_) {
        hovered_ = bar;
        const bool clickable = bar >= 0 && !bars_[static_cast<std::size_t>(bar)].keyPath.isEmpty();
        setCursor(clickable ? Qt::PointingHandCursor : Qt::ArrowCursor);
        update();
    }
}

void SizeBarChart::mousePressEvent(QMouseEvent* event) {
    const int bar = barAt(event->position().toPoint());
    if (event->button() == Qt::LeftButton && bar >= 0 &&
        !bars_[static_cast<std::size_t>(bar)].keyPath.isEmpty())
        Q_EMIT keyActivated(bars_[static_cast<std::size_t>(bar)].keyPath);
}

void SizeBarChart::leaveEvent(QEvent* event) {
    hovered_ = -1;
    update();
    QWidget::leaveEvent(event);
}

bool SizeBarChart::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const int bar = barAt(help->pos());
        if (bar >= 0 && !bars_[static_cast<std::size_t>(bar)].toolTip.isEmpty())
            QToolTip::showText(help->globalPos(), bars_[static_cast<std::size_t>(bar)].toolTip,
                               this);
        else
            QToolTip::hideText();
        return true;
    }
    return QWidget::event(event);
}
