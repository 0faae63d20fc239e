#include "open_failure.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QUrl>

#include "node_text.h"

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

QString commandLineFailure(const std::exception& e) {
    const tensordict::Failure failure = tensordict::failureOf(e);
    QString text = nodetext::displayText(failure.text());
    if (!isWebUrl(QString::fromStdString(failure.where)))
        return text;
    if (failure.kind == tensordict::ErrorKind::Denied)
        text += tr(" (credentials: TDSTUDIO_HTTP_BEARER, TDSTUDIO_HTTP_HEADERS)");
    else if (failure.kind == tensordict::ErrorKind::Untrusted)
        text += tr(" (trust its certificate authority with TDSTUDIO_HTTP_CA_FILE)");
    return text;
}

QString openableSentence() {
    return tr(
        "tdstudio opens tensordict memmap directories and .tdz archives, PyTorch "
        "checkpoints (.pt, .pth), safetensors files and sharded models, NumPy files (.npy, "
        ".npz) and consolidated tensordicts.");
}

bool isWebUrl(const QString& location) {
    return location.startsWith("http://", Qt::CaseInsensitive) ||
           location.startsWith("https://", Qt::CaseInsensitive);
}

bool isRemote(const QString& location) {
    return isWebUrl(location) || location.startsWith("s3://", Qt::CaseInsensitive);
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

OpenFailure describeOpenFailure(const QString& path, const tensordict::Failure& failure) {
    using tensordict::ErrorKind;
    const QString error = QString::fromStdString(failure.text());
    if (isRemote(path)) {  // the server's answer is the reason: say what to check
        QString headline;
        switch (failure.kind) {
            case ErrorKind::NotFound:
                headline = tr("The server has no tensordict at this address. Check the URL.");
                break;
            case ErrorKind::Changed:
                headline = tr("The file changed on the server while it was read. Open it again.");
                break;
            case ErrorKind::Untrusted:
                headline =
                    tr("The server's certificate is not trusted: tdstudio did not connect. "
                       "Trust its certificate authority with TDSTUDIO_HTTP_CA_FILE.");
                break;
            case ErrorKind::Denied:
                headline =
                    tr("The server refused access to this address. Check the credentials "
                       "tdstudio sends (TDSTUDIO_HTTP_BEARER, TDSTUDIO_HTTP_HEADERS).");
                break;
            default:
                headline =
                    tr("This address could not be read. The reason below is the server's "
                       "or the network's.");
        }
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
    } else if (failure.kind == ErrorKind::Changed) {
        headline = tr("“%1” changed while it was read: another program is writing it. Open it "
                      "again when it is done.")
                       .arg(name);
    } else if (failure.kind == ErrorKind::NotReadHere) {
        headline = tr("“%1” is well-formed, but holds data of a kind tdstudio does not show (the "
                      "reason below says which). It is not damaged; open it in the library that "
                      "wrote it.")
                       .arg(name);
    } else if (failure.kind == ErrorKind::Truncated) {
        headline = tr("“%1” is cut short: it ends before the data it describes (an interrupted "
                      "copy, download or save?). Copy it again from where it came from.")
                       .arg(name);
    } else if (const QString kind = expectedKind(info); !kind.isEmpty()) {
        headline = tr("This file is not %1, or it is damaged.").arg(kind);
    } else {
        headline = tr("tdstudio does not read this file.") + " " + openableSentence();
    }
    return {headline, error};
}
