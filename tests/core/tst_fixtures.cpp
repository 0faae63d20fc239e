// Every fixture written by Python tensordict 0.14 loads and matches its
// .expected.json exactly, through every storage backend: the directory
// itself, and archives of the same data packed by independent zip writers.

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "tensordict/report.h"
#include "tensordict/tensordict.h"
#include "testsupport.h"

using namespace tensordict;

class FixtureTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void matchesExpected_data();
    void matchesExpected();

private:
    QString materialize(const QString& fixture, const QString& backend);
    QTemporaryDir scratch_;
};

void FixtureTest::initTestCase() {
    QVERIFY(scratch_.isValid());
    QVERIFY2(testsupport::fixtureNames().size() >= 18, "fixtures missing");
}

void FixtureTest::matchesExpected_data() {
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<QString>("backend");
    const QStringList backends{"directory", "zip-stored", "zip-deflate", "zip-bzip2", "zip-lzma", "zip-0-r"};
    for (const QString& name : testsupport::fixtureNames()) {
        if (name.startsWith("archive_")) {
            QTest::newRow(qPrintable(name + "/tdz")) << name << "tdz";
            continue;
        }
        for (const QString& backend : backends)
            QTest::newRow(qPrintable(name + "/" + backend)) << name << backend;
    }
}

// The fixture as the backend stores it: the directory, or a fresh archive of it.
QString FixtureTest::materialize(const QString& fixture, const QString& backend) {
    const QString source = testsupport::fixturePath(fixture);
    if (backend == "directory") return source;
    if (backend == "tdz") return source + ".tdz";
    const QString zip = scratch_.path() + "/" + fixture + "-" + backend + ".tdz";
    if (backend == "zip-0-r") {
        // Info-ZIP: directory entries, unaligned payloads.
        QProcess p;
        p.setWorkingDirectory(source);
        p.start("zip", {"-0", "-r", "-q", zip, "."});
        p.waitForFinished();
        if (p.exitCode() != 0) return {};
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
    return QJsonDocument::fromJson(QByteArray::fromStdString(toJson(v, JsonStyle::Compact))).object();
}

void FixtureTest::matchesExpected() {
    QFETCH(QString, fixture);
    QFETCH(QString, backend);
    const QString path = materialize(fixture, backend);
    QVERIFY2(!path.isEmpty(), "could not build the archive");

    QFile expectedFile(testsupport::fixturePath(fixture + ".expected.json"));
    QVERIFY(expectedFile.open(QIODevice::ReadOnly));
    const QJsonObject expected = QJsonDocument::fromJson(expectedFile.readAll()).object();

    TensorDict td;
    try {
        td = load(path.toStdString());
    } catch (const Error& e) {
        QFAIL(e.what());
    }
    QCOMPARE(td.format(), backend == "directory" ? SourceFormat::Directory : SourceFormat::Archive);
    DescribeOptions options;
    options.sha256 = true;
    options.firstValues = 64;
    const QJsonObject actual = toJsonObject(describe(td, options));

    QCOMPARE(actual["errors"].toArray().size(), 0);
    QCOMPARE(actual["root_class"].toString(), expected["root_class"].toString());
    QCOMPARE(actual["batch_size"], expected["batch_size"]);

    const QJsonArray expNodes = expected["nodes"].toArray();
    const QJsonArray actNodes = actual["nodes"].toArray();
    QCOMPARE(actNodes.size(), expNodes.size());
    for (int i = 0; i < expNodes.size(); ++i) {
        const QJsonObject e = expNodes[i].toObject(), a = actNodes[i].toObject();
        for (const char* field : {"key", "class", "batch_size", "device", "stack_dim", "is_tensorclass",
                                  "non_tensor_fields"}) {
            if (e.contains(field)) QCOMPARE(a[field], e[field]);
        }
    }

    const QJsonArray expLeaves = expected["leaves"].toArray();
    const QJsonArray actLeaves = actual["leaves"].toArray();
    QCOMPARE(actLeaves.size(), expLeaves.size());
    for (int i = 0; i < expLeaves.size(); ++i) {
        const QJsonObject e = expLeaves[i].toObject(), a = actLeaves[i].toObject();
        for (const char* field : {"key", "dtype", "shape", "numel", "nbytes", "sha256"})
            QCOMPARE(a[field], e[field]);
        const QJsonArray expValues = e["first_values"].toArray();
        const QJsonArray actValues = a["first_values"].toArray();
        QVERIFY(actValues.size() >= expValues.size());
        for (int j = 0; j < expValues.size(); ++j) QCOMPARE(actValues[j], expValues[j]);
        if (backend == "directory") {
            QCOMPARE(a["file"], e["file"]);
            if (!e["file"].isNull()) QCOMPARE(a["file_size"], e["file_size"]);
        }
    }

    const QJsonArray expNt = expected["non_tensor"].toArray();
    const QJsonArray actNt = actual["non_tensor"].toArray();
    QCOMPARE(actNt.size(), expNt.size());
    for (int i = 0; i < expNt.size(); ++i) {
        const QJsonObject e = expNt[i].toObject(), a = actNt[i].toObject();
        for (const char* field : {"key", "class", "batch_size", "data"}) QCOMPARE(a[field], e[field]);
    }
}

QTEST_GUILESS_MAIN(FixtureTest)
#include "tst_fixtures.moc"
