#include "testsupport.h"

#include <QCryptographicHash>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QProcess>

namespace testsupport {

QString fixturesDir() { return QStringLiteral(TDSTUDIO_FIXTURES_DIR); }

QString fixturePath(const QString& name) { return fixturesDir() + "/" + name; }

QStringList fixtureNames() {
    QStringList names;
    const auto entries = QDir(fixturesDir()).entryList({"*.expected.json"}, QDir::Files, QDir::Name);
    for (const QString& e : entries) names << e.chopped(QStringLiteral(".expected.json").size());
    return names;
}

void copyTree(const QString& src, const QString& dst) {
    QDir().mkpath(dst);
    QFile::setPermissions(dst, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    const QDir dir(src);
    for (const QFileInfo& fi : dir.entryInfoList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden)) {
        const QString target = dst + "/" + fi.fileName();
        if (fi.isDir()) {
            copyTree(fi.filePath(), target);
        } else {
            QFile::copy(fi.filePath(), target);
            QFile::setPermissions(target, QFile::ReadOwner | QFile::WriteOwner);
        }
    }
}

bool runPython(const QStringList& args, QString* out, QString* error) {
    QProcess p;
    p.start(QStringLiteral("/usr/bin/python3"), args);
    if (!p.waitForFinished(300000)) {
        if (error) *error = "python3 did not finish: " + p.errorString();
        return false;
    }
    if (out) *out = QString::fromUtf8(p.readAllStandardOutput());
    if (p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        if (error) *error = QString::fromUtf8(p.readAllStandardError());
        return false;
    }
    return true;
}

bool packWithPython(const QString& dir, const QString& zipPath, const QString& method, QString* error) {
    return runPython({QStringLiteral(TDSTUDIO_TEST_SUPPORT_DIR "/pack_zip.py"), dir, zipPath, method},
                     nullptr, error);
}

QStringList fileFingerprints(const QString& root) {
    QStringList out;
    QFileInfo rootInfo(root);
    QStringList files;
    if (rootInfo.isFile()) {
        files << root;
    } else {
        QDirIterator it(root, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
        while (it.hasNext()) files << it.next();
    }
    files.sort();
    for (const QString& path : files) {
        QFile f(path);
        f.open(QIODevice::ReadOnly);
        const QByteArray hash = QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256).toHex();
        const QFileInfo fi(path);
        out << path + " " + hash + " " + QString::number(fi.lastModified().toMSecsSinceEpoch()) + " " +
                   QString::number(fi.size());
    }
    return out;
}

}  // namespace testsupport
