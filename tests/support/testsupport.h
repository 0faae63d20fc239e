#pragma once

#include <QDir>
#include <QJsonObject>
#include <QString>
#include <QStringList>
#include <string>

// Helpers shared by the test suites: fixture paths, scratch copies, and the
// independent Python tools (/usr/bin/python3 with zipfile, numpy, torch).
namespace testsupport {

// tests/fixtures/tensordict-0.14 (read-only: copy before writing).
QString fixturesDir();
QString fixturePath(const QString& name);
// Every fixture name that has an .expected.json, directories and archives.
QStringList fixtureNames();

// Recursively copies `src` to `dst` with writable permissions.
void copyTree(const QString& src, const QString& dst);

// Runs /usr/bin/python3 with `args`; returns stdout, fails the test (via
// exception text in `error`) if it exits non-zero.
bool runPython(const QStringList& args, QString* out = nullptr, QString* error = nullptr);
// Packs a directory into a zip with Python's zipfile ("stored", "deflate", "bzip2", "lzma").
bool packWithPython(const QString& dir, const QString& zipPath, const QString& method,
                    QString* error = nullptr);

// Points QSettings (recent files, preview modes) at a test-only location.
void isolateSettings(const QString& testName);

// Writes `content` to `path`, creating its directory.
void writeFile(const QString& path, const QByteArray& content);

// The file and file offset that `address` is mapped from (/proc/self/maps).
struct MappedFrom {
    QString file;
    quint64 offset = 0;
};
MappedFrom mappedFrom(const void* address);

// Resident memory of this process, in KiB.
qint64 residentKiB();

// sha256 and mtime of every file under `root`, for "unchanged" checks.
QStringList fileFingerprints(const QString& root);

// Compares a describe() report (as JSON) with a fixture's .expected.json:
// nodes, leaves (dtype, shape, sha256, leading values) and non-tensor values.
// Returns "" when they match, else what differs.
QString compareWithExpected(const QJsonObject& actual, const QJsonObject& expected,
                            bool compareFiles);
QJsonObject readJsonFile(const QString& path);

}  // namespace testsupport
