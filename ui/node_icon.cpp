#include "node_icon.h"

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
