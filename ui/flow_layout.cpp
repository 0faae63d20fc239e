#include "flow_layout.h"

#include <QSpacerItem>
#include <QWidget>
#include <algorithm>
#include <vector>

namespace {

bool isStretch(QLayoutItem* item) {
    return item->spacerItem() && (item->expandingDirections() & Qt::Horizontal);
}

}  // namespace

FlowLayout::FlowLayout(QWidget* parent, int spacing) : QLayout(parent), spacing_(spacing) {
    setContentsMargins(0, 0, 0, 0);
}

FlowLayout::~FlowLayout() {
    while (QLayoutItem* item = takeAt(0))
        delete item;
}

void FlowLayout::addStretch() {
    addItem(new QSpacerItem(0, 0, QSizePolicy::Expanding, QSizePolicy::Minimum));
}

void FlowLayout::addItem(QLayoutItem* item) {
    items_.append(item);
    invalidate();
}

QLayoutItem* FlowLayout::takeAt(int index) {
    if (index < 0 || index >= items_.size())
        return nullptr;
    QLayoutItem* item = items_.takeAt(index);
    invalidate();
    return item;
}

int FlowLayout::heightForWidth(int width) const {
    return arrange(QRect(0, 0, width, 0), false);
}

QSize FlowLayout::minimumSize() const {
    // One control a line at the narrowest.
    QSize size;
    for (QLayoutItem* item : items_)
        if (!item->isEmpty() && !isStretch(item))
            size = size.expandedTo(item->minimumSize());
    const QMargins m = contentsMargins();
    return size + QSize(m.left() + m.right(), m.top() + m.bottom());
}

QSize FlowLayout::sizeHint() const {
    // Everything on one line.
    int width = 0, height = 0, shown = 0;
    for (QLayoutItem* item : items_) {
        if (item->isEmpty() || isStretch(item))
            continue;
        const QSize hint = item->sizeHint();
        width += hint.width();
        height = std::max(height, hint.height());
        ++shown;
    }
    const QMargins m = contentsMargins();
    return {width + spacing_ * std::max(0, shown - 1) + m.left() + m.right(),
            height + m.top() + m.bottom()};
}

void FlowLayout::setGeometry(const QRect& rect) {
    QLayout::setGeometry(rect);
    arrange(rect, true);
}

int FlowLayout::arrange(const QRect& rect, bool apply) const {
    const QRect area = rect.marginsRemoved(contentsMargins());
    struct Placed {
        QLayoutItem* item;
        QSize size;
    };
    std::vector<Placed> line;
    int stretchAt = -1;  // index in `line` of the first item after a stretch
    int lineWidth = 0, y = area.top(), lineHeight = 0;

    const auto flush = [&] {
        if (line.empty())
            return;
        // After a stretch, the rest of the line goes to its right end.
        const int shift = stretchAt >= 0 ? std::max(0, area.width() - lineWidth) : 0;
        int x = area.left();
        for (int i = 0; i < static_cast<int>(line.size()); ++i) {
            if (i == stretchAt)
                x += shift;
            const Placed& p = line[std::size_t(i)];
            if (apply)
                p.item->setGeometry(
                    QRect(QPoint(x, y + (lineHeight - p.size.height()) / 2), p.size));
            x += p.size.width() + spacing_;
        }
        y += lineHeight + spacing_;
        line.clear();
        stretchAt = -1;
        lineWidth = lineHeight = 0;
    };

    for (QLayoutItem* item : items_) {
        if (item->isEmpty())
            continue;
        if (isStretch(item)) {
            if (!line.empty() && stretchAt < 0)
                stretchAt = static_cast<int>(line.size());
            continue;
        }
        QSize size = item->sizeHint().expandedTo(item->minimumSize());
        size.setWidth(std::min(size.width(), std::max(area.width(), item->minimumSize().width())));
        const int needed = (line.empty() ? 0 : lineWidth + spacing_) + size.width();
        if (!line.empty() && needed > area.width())
            flush();
        lineWidth = (line.empty() ? 0 : lineWidth + spacing_) + size.width();
        lineHeight = std::max(lineHeight, size.height());
        line.push_back({item, size});
    }
    flush();
    const QMargins m = contentsMargins();
    return std::max(0, y - spacing_ - area.top()) + m.top() + m.bottom();
}
