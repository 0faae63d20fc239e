#include "recent_files.h"

#include <QFileInfo>
#include <QMenu>
#include <QSettings>

namespace {
constexpr char kKey[] = "recentFiles";
}

RecentFiles::RecentFiles(QMenu* menu, QObject* parent) : QObject(parent), menu_(menu) {
    rebuildMenu();
}

QStringList RecentFiles::files() const {
    return QSettings().value(kKey).toStringList();
}

void RecentFiles::add(const QString& location) {
    // Local paths absolute, so that another working folder finds them; URLs as they are.
    const QString path =
        location.contains("://") ? location : QFileInfo(location).absoluteFilePath();
    QStringList list = files();
    list.removeAll(path);
    list.prepend(path);
    while (list.size() > kMaxFiles)
        list.removeLast();
    QSettings().setValue(kKey, list);
    rebuildMenu();
}

void RecentFiles::clear() {
    QSettings().remove(kKey);
    rebuildMenu();
}

void RecentFiles::rebuildMenu() {
    menu_->clear();
    const QStringList list = files();
    for (const QString& path : list)
        menu_->addAction(path, this, [this, path] { Q_EMIT openRequested(path); });
    menu_->setEnabled(!list.isEmpty());
    if (!list.isEmpty()) {
        menu_->addSeparator();
        menu_->addAction(tr("Clear"), this, &RecentFiles::clear);
    }
}
