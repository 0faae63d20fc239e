#include "color_bar.h"

#include <QPainter>

namespace {
constexpr int kStripHeight = 10;
constexpr int kSwatch = 10;
}  // namespace

ColorBar::ColorBar(QWidget* parent) : QWidget(parent) {
    // Hidden, it keeps its room: showing it must not resize the image above
    // (a new size is a new render).
    QSizePolicy policy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    policy.setRetainSizeWhenHidden(true);
    setSizePolicy(policy);
    setToolTip(tr("The colours of the values; NaN shows in magenta"));
}

void ColorBar::setRange(Colormap map, double low, double high) {
    map_ = map, low_ = low, high_ = high;
    update();
}

void ColorBar::setNanShown(bool shown) {
    nanShown_ = shown;
    update();
}

QStringList ColorBar::labels() const {
    return {QString::number(low_, 'g', 6), QString::number((low_ + high_) / 2, 'g', 6),
            QString::number(high_, 'g', 6)};
}

QSize ColorBar::sizeHint() const {
    return {300, kStripHeight + fontMetrics().height() + 6};
}

QSize ColorBar::minimumSizeHint() const {
    return {120, sizeHint().height()};
}

void ColorBar::paintEvent(QPaintEvent*) {
    QPainter p(this);
    const QFontMetrics fm = fontMetrics();
    const QString nan = tr("NaN");
    const int nanWidth = nanShown_ ? kSwatch + 4 + fm.horizontalAdvance(nan) + 12 : 0;
    const QRect strip(0, 2, std::max(10, width() - nanWidth), kStripHeight);
    const QVector<QRgb> table = colormapTable(map_);
    for (int x = 0; x < strip.width(); ++x) {
        const int level = int(double(x) / std::max(1, strip.width() - 1) * (table.size() - 1));
        p.setPen(QColor(table[std::clamp(level, 0, int(table.size()) - 1)]));
        p.drawLine(strip.left() + x, strip.top(), strip.left() + x, strip.bottom());
    }
    p.setPen(palette().color(QPalette::Mid));
    p.drawRect(strip.adjusted(0, 0, -1, -1));
    p.setPen(palette().color(QPalette::WindowText));
    const QStringList text = labels();
    const QRect under(strip.left(), strip.bottom() + 2, strip.width(), fm.height());
    p.drawText(under, Qt::AlignLeft, text[0]);
    p.drawText(under, Qt::AlignHCenter, text[1]);
    p.drawText(under, Qt::AlignRight, text[2]);
    if (nanShown_) {
        const QRect swatch(strip.right() + 12, strip.top(), kSwatch, kSwatch);
        p.fillRect(swatch, QColor(255, 0, 255));
        p.setPen(palette().color(QPalette::Mid));
        p.drawRect(swatch.adjusted(0, 0, -1, -1));
        p.setPen(palette().color(QPalette::WindowText));
        p.drawText(
            QRect(swatch.right() + 5, strip.top() - 2, fm.horizontalAdvance(nan) + 4, fm.height()),
            Qt::AlignLeft | Qt::AlignVCenter, nan);
    }
}
