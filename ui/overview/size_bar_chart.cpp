#include "size_bar_chart.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>

namespace {
constexpr int kMargin = 4;
constexpr int kMinLabel = 48;  // a few letters, then the label elides
constexpr int kMinBar = 12;
constexpr int kGoodBar = 60;  // bars this long or longer compare well
constexpr int kGap = 6;       // between a bar and its value
}  // namespace

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

int SizeBarChart::widestValue() const {
    int widest = 0;
    for (const Bar& b : bars_)
        widest = std::max(widest, fontMetrics().horizontalAdvance(b.valueText));
    return widest;
}

int SizeBarChart::widestLabel() const {
    int widest = 0;
    for (const Bar& b : bars_)
        widest = std::max(widest, fontMetrics().horizontalAdvance(b.label));
    return widest + 12;  // + a little: elision rounds
}

QSize SizeBarChart::sizeHint() const {
    // Whole labels, bars long enough to compare, whole values.
    const int rows = std::max<int>(1, static_cast<int>(bars_.size()));
    return {2 * kMargin + widestLabel() + kGoodBar + kGap + widestValue() + 2,
            2 * kMargin + rows * rowHeight()};
}

QSize SizeBarChart::minimumSizeHint() const {
    // Values are never cut: a short label and bar, then the widest value.
    const int rows = std::max<int>(1, static_cast<int>(bars_.size()));
    return {2 * kMargin + kMinLabel + kMinBar + kGap + widestValue() + 2,
            2 * kMargin + rows * rowHeight()};
}

SizeBarChart::Columns SizeBarChart::columns() const {
    // The values' room first; then labels, leaving the bars room to compare; bars the rest.
    const int room = width() - 2 * kMargin - widestValue() - kGap - 2;
    const int labelWidth =
        std::clamp(widestLabel(), kMinLabel, std::max(kMinLabel, room - kGoodBar));
    Columns c;
    c.labelWidth = labelWidth;
    c.barLeft = kMargin + labelWidth;
    c.barSpan = std::max(kMinBar, room - labelWidth);
    return c;
}

int SizeBarChart::barLength(const Bar& bar, const Columns& c) const {
    std::uint64_t largest = 0;
    for (const Bar& b : bars_)
        largest = std::max(largest, b.bytes);
    const int length =
        largest > 0 ? static_cast<int>(double(bar.bytes) / double(largest) * c.barSpan) : 0;
    // Every non-empty bar stays visible, however small its share.
    return bar.bytes > 0 ? std::max(2, length) : 0;
}

bool SizeBarChart::valueFits(int index) const {
    if (index < 0 || index >= static_cast<int>(bars_.size()))
        return false;
    const Bar& b = bars_[static_cast<std::size_t>(index)];
    const Columns c = columns();
    return c.barLeft + barLength(b, c) + kGap + fontMetrics().horizontalAdvance(b.valueText) <=
           width();
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
    const Columns c = columns();
    const QColor barColor = pal.color(QPalette::Highlight);
    for (int i = 0; i < static_cast<int>(bars_.size()); ++i) {
        const Bar& b = bars_[static_cast<std::size_t>(i)];
        const QRect row = barRect(i);
        if (i == hovered_ && !b.keyPath.isEmpty())
            p.fillRect(row, pal.color(QPalette::AlternateBase));
        p.setPen(pal.color(QPalette::WindowText));
        p.drawText(QRect(kMargin, row.top(), c.labelWidth - 4, row.height()),
                   Qt::AlignLeft | Qt::AlignVCenter,
                   fm.elidedText(b.label, Qt::ElideMiddle, c.labelWidth - 4));
        const int shown = barLength(b, c);
        QColor fill = barColor;
        if (b.keyPath.isEmpty())
            fill.setAlpha(170);
        p.fillRect(QRect(c.barLeft, row.top() + 3, shown, row.height() - 6), fill);
        p.drawText(QRect(c.barLeft + shown + kGap, row.top(), width(), row.height()),
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
