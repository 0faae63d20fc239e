// Every fixture written by Python tensordict 0.14 loads and matches its
// .expected.json exactly, through every storage backend: the directory
// itself, and archives of the same data packed by independent zip writers;
// each also through a transport that cannot map (ranged reads only), as a
// remote one will be.

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <QDirIterator>
#include <QFile>
#include <QMap>
#include <QMutex>
#include <cstring>

#include "memory_transport.h"
#include "tensordict/error.h"
#include "tensordict/report.h"
#include "tensordict/source.h"
#include "tensordict/tensordict.h"
#include "testsupport.h"

using namespace tensordict;
using testsupport::MemoryTransport;

namespace {

QByteArray readAll(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

}  // namespace

class FixtureTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void matchesExpected_data();
    void matchesExpected();

private:
    QString materialize(const QString& fixture, const QString& backend);
    QTemporaryDir scratch_;
    std::shared_ptr<MemoryTransport> memory_ = std::make_shared<MemoryTransport>();
};

void FixtureTest::initTestCase() {
    QVERIFY(scratch_.isValid());
    QVERIFY2(testsupport::fixtureNames().size() >= 18, "fixtures missing");
    registerTransport(memory_);
}

void FixtureTest::matchesExpected_data() {
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<QString>("backend");
    const QStringList backends{"directory",     "zip-stored",     "zip-deflate",
                               "zip-bzip2",     "zip-lzma",       "zip-0-r",
                               "mem-directory", "mem-zip-stored", "mem-zip-deflate"};
    for (const QString& name : testsupport::fixtureNames()) {
        if (name.startsWith("archive_")) {
            QTest::newRow(qPrintable(name + "/tdz")) << name << "tdz";
            QTest::newRow(qPrintable(name + "/mem-tdz")) << name << "mem-tdz";
            continue;
        }
        for (const QString& backend : backends)
            QTest::newRow(qPrintable(name + "/" + backend)) << name << backend;
    }
}

// The fixture as the backend stores it: the directory, or a fresh archive of it.
QString FixtureTest::materialize(const QString& fixture, const QString& backend) {
    const QString source = testsupport::fixturePath(fixture);
    if (backend.startsWith("mem-")) {
        // The same bytes, served from memory by range.
        const QString onDisk = materialize(fixture, backend.mid(4));
        if (onDisk.isEmpty())
            return {};
        const QString location = "mem://" + fixture + "/" + backend;
        if (QFileInfo(onDisk).isFile()) {
            memory_->add(location, readAll(onDisk));
            return location;
        }
        QDirIterator it(onDisk, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
        while (it.hasNext()) {
            const QString file = it.next();
            memory_->add(location + file.mid(onDisk.size()), readAll(file));
        }
        return location;
    }
    if (backend == "directory")
        return source;
    if (backend == "tdz")
        return source + ".tdz";
    const QString zip = scratch_.path() + "/" + fixture + "-" + backend + ".tdz";
    if (backend == "zip-0-r") {
        // Info-ZIP: directory entries, unaligned payloads.
        QProcess p;
        p.setWorkingDirectory(source);
        p.start("zip", {"-0", "-r", "-q", zip, "."});
        p.waitForFinished();
        if (p.exitCode() != 0)
            return {};
        return zip;
    }
    QString error;
    if (!testsupport::packWithPython(source, zip, backend.mid(4), &error)) {
        qWarning() << error;
        return {};
    }
    return zip;
}

static QJsonObject toJsonObject(const Value& v) {
    return QJsonDocument::fromJson(QByteArray::fromStdString(toJson(v, JsonStyle::Compact)))
        .object();
}

void FixtureTest::matchesExpected() {
    QFETCH(QString, fixture);
    QFETCH(QString, backend);
    const QString path = materialize(fixture, backend);
    QVERIFY2(!path.isEmpty(), "could not build the archive");

    const QJsonObject expected =
        testsupport::readJsonFile(testsupport::fixturePath(fixture + ".expected.json"));
    TensorDict td;
    try {
        td = load(path.toStdString());
    } catch (const Error& e) {
        QFAIL(e.what());
    }
    QCOMPARE(QString::fromStdString(td.format()),
             backend.endsWith("directory") ? "directory" : "archive");
    DescribeOptions options;
    options.sha256 = true;
    options.firstValues = 64;
    const QString mismatch = testsupport::compareWithExpected(toJsonObject(describe(td, options)),
                                                              expected, backend == "directory");
    QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
}

QTEST_GUILESS_MAIN(FixtureTest)
#include "tst_fixtures.moc"
