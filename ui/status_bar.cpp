#include "status_bar.h"

#include <QPaintEvent>
#include <QPainter>
#include <QStyleOption>

namespace {
constexpr int kMargin = 6;  // QStatusBar's own, before a message
constexpr int kGap = 12;    // between a message and the widgets to its right
}  // namespace

StatusBar::StatusBar(QWidget* parent) : QStatusBar(parent) {
    connect(this, &QStatusBar::messageChanged, this, &StatusBar::updateToolTip);
}

void StatusBar::addRightWidget(QWidget* widget) {
    addPermanentWidget(widget);
    right_.append(widget);
}

QRect StatusBar::messageRect() const {
    int right = width() - kMargin;
    for (const QWidget* w : right_)
        if (w && w->isVisible())
            right = std::min(right, w->geometry().left() - kGap);
    return QRect(kMargin, 0, std::max(0, right - kMargin), height());
}

QString StatusBar::shownMessage() const {
    return fontMetrics().elidedText(currentMessage(), Qt::ElideRight, messageRect().width());
}

void StatusBar::updateToolTip() {
    setToolTip(shownMessage() == currentMessage() ? QString() : currentMessage());
}

void StatusBar::resizeEvent(QResizeEvent* event) {
    QStatusBar::resizeEvent(event);
    updateToolTip();
}

void StatusBar::paintEvent(QPaintEvent* event) {
    // As QStatusBar paints, with the message elided to its room.
    QPainter p(this);
    QStyleOption panel;
    panel.initFrom(this);
    style()->drawPrimitive(QStyle::PE_PanelStatusBar, &panel, &p, this);
    for (QWidget* w : right_) {
        if (!w || !w->isVisible())
            continue;
        const QRect frame = w->geometry().adjusted(-2, -1, 2, 1);
        if (!event->rect().intersects(frame))
            continue;
        QStyleOption item;
        item.rect = frame;
        item.palette = palette();
        item.state = QStyle::State_None;
        style()->drawPrimitive(QStyle::PE_FrameStatusBarItem, &item, &p, w);
    }
    if (!currentMessage().isEmpty()) {
        p.setPen(palette().windowText().color());
        p.drawText(messageRect(), Qt::AlignLeading | Qt::AlignVCenter | Qt::TextSingleLine,
                   shownMessage());
    }
}
