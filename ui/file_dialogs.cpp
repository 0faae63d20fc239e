#include "file_dialogs.h"

#include <QDesktopServices>
#include <QDir>
#include <QFileInfo>
#include <QHeaderView>
#include <QScreen>
#include <QSettings>
#include <QTreeView>
#include <QUrl>
#include <QWidget>

namespace file_dialogs {
namespace {

constexpr char kDocumentPath[] = "tdstudio.documentPath";

// The settings key of a kind, stable across versions.
QString settingsKey(Kind kind) {
    switch (kind) {
        case Kind::Open:
            return "dialogs/open";
        case Kind::OpenDirectory:
            return "dialogs/openDirectory";
        case Kind::Compare:
            return "dialogs/compare";
        case Kind::CompareDirectory:
            return "dialogs/compareDirectory";
        case Kind::Series:
            return "dialogs/series";
        case Kind::ExportCsv:
            return "dialogs/exportCsv";
        case Kind::ExportNpy:
            return "dialogs/exportNpy";
        case Kind::ExportPng:
            return "dialogs/exportPng";
        case Kind::SaveArchive:
            return "dialogs/saveArchive";
        case Kind::SaveDirectory:
            return "dialogs/saveDirectory";
    }
    return "dialogs/other";
}

Chooser& chooser() {
    static Chooser instance;
    return instance;
}

std::function<void(const QString&)>& folderOpener() {
    static std::function<void(const QString&)> instance;
    return instance;
}

// Remembers where `path` was chosen: a file's folder, a directory's parent
// (the next directory chosen is often its sibling).
QString remember(Kind kind, const QString& path) {
    if (!path.isEmpty())
        QSettings().setValue(settingsKey(kind), QFileInfo(path).absolutePath());
    return path;
}

}  // namespace

void setDocumentPath(QWidget* window, const QString& path) {
    window->setProperty(kDocumentPath, path);
}

QString startFolder(const QWidget* parent, Kind kind) {
    const QString last = QSettings().value(settingsKey(kind)).toString();
    if (!last.isEmpty() && QFileInfo(last).isDir())
        return last;
    // The window's open file; a dialog's own window (Save As) asks its parent's.
    QString document;
    for (const QWidget* w = parent; w && document.isEmpty(); w = w->parentWidget())
        document = w->property(kDocumentPath).toString();
    // A directory's documents sit beside it, as an archive's do.
    if (!document.isEmpty() && QFileInfo(QFileInfo(document).absolutePath()).isDir())
        return QFileInfo(document).absolutePath();
    return QDir::homePath();
}

void prepareDialog(QFileDialog& dialog) {
    const QRect screen =
        dialog.screen() ? dialog.screen()->availableGeometry() : QRect(0, 0, 1280, 800);
    dialog.resize(std::min(980, screen.width() * 9 / 10), std::min(620, screen.height() * 9 / 10));
    dialog.setViewMode(QFileDialog::Detail);
    if (auto* list = dialog.findChild<QTreeView*>("treeView")) {
        list->header()->setStretchLastSection(false);
        list->header()->setSectionResizeMode(0, QHeaderView::Stretch);
        for (int c = 1; c < list->header()->count(); ++c)
            list->header()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    }
}

namespace {

// The dialog, prepared, run; "" when cancelled.
QString runDialog(QFileDialog& dialog) {
    prepareDialog(dialog);
    if (dialog.exec() != QDialog::Accepted || dialog.selectedFiles().isEmpty())
        return {};
    return dialog.selectedFiles().front();
}

}  // namespace

QString openFile(QWidget* parent, Kind kind, const QString& caption, const QString& filter) {
    const QString start = startFolder(parent, kind);
    if (chooser())
        return remember(kind, chooser()(kind, start, QString()));
    QFileDialog dialog(parent, caption, start, filter);
    dialog.setFileMode(QFileDialog::ExistingFile);
    return remember(kind, runDialog(dialog));
}

QString openDirectory(QWidget* parent, Kind kind, const QString& caption) {
    const QString start = startFolder(parent, kind);
    if (chooser())
        return remember(kind, chooser()(kind, start, QString()));
    QFileDialog dialog(parent, caption, start);
    dialog.setFileMode(QFileDialog::Directory);
    dialog.setOption(QFileDialog::ShowDirsOnly);
    return remember(kind, runDialog(dialog));
}

QString saveFile(QWidget* parent, Kind kind, const QString& caption, const QString& name,
                 const QString& filter, QFileDialog::Options options) {
    const QString start = startFolder(parent, kind);
    if (chooser())
        return remember(kind, chooser()(kind, start, name));
    QFileDialog dialog(parent, caption, QDir(start).filePath(name), filter);
    dialog.setAcceptMode(QFileDialog::AcceptSave);
    dialog.setOptions(options);
    return remember(kind, runDialog(dialog));
}

void setChooser(Chooser c) {
    chooser() = std::move(c);
}

void showInFolder(const QString& path) {
    const QFileInfo info(path);
    // A saved directory is shown among its siblings, as a file is.
    const QString folder = info.absolutePath();
    if (folderOpener())
        return folderOpener()(folder);
    QDesktopServices::openUrl(QUrl::fromLocalFile(folder));
}

void setFolderOpener(std::function<void(const QString& folder)> opener) {
    folderOpener() = std::move(opener);
}

}  // namespace file_dialogs
