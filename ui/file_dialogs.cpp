#include "file_dialogs.h"

#include <QDesktopServices>
#include <QDir>
#include <QFileInfo>
#include <QSettings>
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

QString openFile(QWidget* parent, Kind kind, const QString& caption, const QString& filter) {
    const QString start = startFolder(parent, kind);
    if (chooser())
        return remember(kind, chooser()(kind, start));
    return remember(kind, QFileDialog::getOpenFileName(parent, caption, start, filter));
}

QString openDirectory(QWidget* parent, Kind kind, const QString& caption) {
    const QString start = startFolder(parent, kind);
    if (chooser())
        return remember(kind, chooser()(kind, start));
    return remember(kind, QFileDialog::getExistingDirectory(parent, caption, start));
}

QString saveFile(QWidget* parent, Kind kind, const QString& caption, const QString& name,
                 const QString& filter, QFileDialog::Options options) {
    const QString start = startFolder(parent, kind);
    if (chooser())
        return remember(kind, chooser()(kind, start));
    return remember(kind, QFileDialog::getSaveFileName(parent, caption, QDir(start).filePath(name),
                                                       filter, nullptr, options));
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
