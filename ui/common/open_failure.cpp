#include "open_failure.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QUrl>

namespace {

QString tr(const char* text) {
    return QCoreApplication::translate("OpenFailure", text);
}

// What a file of this name was taken for, from its suffix ("" when none says).
QString expectedKind(const QFileInfo& info) {
    const QString suffix = info.suffix().toLower();
    if (suffix == "tdz" || suffix == "zip")
        return tr("a tensordict archive");
    if (suffix == "pt" || suffix == "pth")
        return tr("a PyTorch checkpoint tdstudio can read");
    if (suffix == "safetensors")
        return tr("a safetensors file");
    if (suffix == "npy" || suffix == "npz")
        return tr("a NumPy array file");
    return {};
}

}  // namespace

bool isRemote(const QString& location) {
    return location.startsWith("http://", Qt::CaseInsensitive) ||
           location.startsWith("https://", Qt::CaseInsensitive);
}

QString locationName(const QString& location) {
    if (!isRemote(location))
        return QFileInfo(location).fileName();
    const QString trimmed = location.endsWith('/') ? location.chopped(1) : location;
    return QUrl(trimmed).fileName();
}

QString locationFolder(const QString& location) {
    if (!isRemote(location))
        return QFileInfo(location).absolutePath();
    const QString trimmed = location.endsWith('/') ? location.chopped(1) : location;
    return QUrl(trimmed).adjusted(QUrl::RemoveFilename).toString();
}

OpenFailure describeOpenFailure(const QString& path, const QString& error) {
    if (isRemote(path)) {  // the server's answer is the reason: say what to check
        const QString headline =
            error.contains("HTTP 404") || error.contains("No such file")
                ? tr("The server has no tensordict at this address. Check the URL.")
            : error.contains("changed on the server")
                ? tr("The file changed on the server while it was read. Open it again.")
            : error.contains("not trusted")
                ? tr("The server's certificate is not trusted: tdstudio did not connect.")
                : tr("This address could not be read. The reason below is the server's or the "
                     "network's.");
        return {headline, error};
    }
    const QFileInfo info(path);
    const QString name = info.fileName().isEmpty() ? path : info.fileName();
    QString headline;
    if (!info.exists()) {
        headline = tr("“%1” does not exist. It may have been moved, renamed or deleted; open it "
                      "from where it is now.")
                       .arg(name);
    } else if (!info.isReadable()) {
        headline = tr("You may not read “%1”. Ask its owner for access, or open a copy.").arg(name);
    } else if (info.isDir() && !QFileInfo::exists(QDir(path).filePath("meta.json"))) {
        headline = tr("“%1” is a folder but not a memmap directory: it has no meta.json. Open the "
                      "folder that holds the dataset's meta.json, or a file inside it.")
                       .arg(name);
    } else if (info.isDir()) {
        headline =
            tr("This memmap directory could not be read. The reason below names the file "
               "at fault.");
    } else if (const QString kind = expectedKind(info); !kind.isEmpty()) {
        headline = tr("This file is not %1, or it is damaged.").arg(kind);
    } else {
        headline =
            tr("tdstudio does not read this file: it opens tensordict archives (.tdz) and "
               "memmap directories, PyTorch checkpoints, safetensors and NumPy files.");
    }
    return {headline, error};
}
