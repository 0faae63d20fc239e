#include "node_icon.h"

#include <QPainter>
#include <QPixmap>

#include <QApplication>
#include <QStyle>

using tensordict::NodeKind;

namespace {

QStyle::StandardPixmap pixmapOf(NodeKind kind) {
    switch (kind) {
        case NodeKind::Error:
            return QStyle::SP_MessageBoxWarning;
        case NodeKind::Tensor:
            return QStyle::SP_FileIcon;
        case NodeKind::NonTensorData:
        case NodeKind::NonTensorStack:
            return QStyle::SP_FileDialogDetailedView;
        default:
            return QStyle::SP_DirIcon;
    }
}

}  // namespace

QIcon nodeKindIcon(NodeKind kind) {
    static QHash<int, QIcon> icons;
    const QStyle::StandardPixmap pixmap = pixmapOf(kind);
    const auto cached = icons.constFind(pixmap);
    if (cached != icons.constEnd())
        return *cached;
    QStyle* style = QApplication::style();
    if (!style)
        return {};
    return *icons.insert(pixmap, style->standardIcon(pixmap));
}

QIcon flaggedIcon() {
    static const QIcon icon = [] {
        QPixmap pixmap(16, 16);
        pixmap.fill(Qt::transparent);
        QPainter p(&pixmap);
        p.setRenderHint(QPainter::Antialiasing);
        p.setPen(Qt::NoPen);
        p.setBrush(QColor(0xc0, 0x1c, 0x28));
        p.drawEllipse(QRectF(1.5, 1.5, 13, 13));
        p.setPen(QPen(Qt::white, 2));
        p.drawLine(QPointF(8, 4.5), QPointF(8, 9));
        p.drawPoint(QPointF(8, 11.5));
        return QIcon(pixmap);
    }();
    return icon;
}
