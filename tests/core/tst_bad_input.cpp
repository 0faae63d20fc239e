// Every kind of bad input raises tensordict::Error whose message names the
// culprit (file, archive entry or key) and the reason; nothing crashes.

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include "tensordict/tensordict.h"
#include "testsupport.h"

using namespace tensordict;
using testsupport::writeFile;

namespace {

const QByteArray kLeafMeta =
    R"({"a": {"device": "cpu", "shape": [2], "dtype": "torch.float32", "is_nested": false}, "shape": [], "device": "cpu", "_type": "<class 'tensordict._td.TensorDict'>"})";

}  // namespace

class BadInputTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(scratch_.isValid());
        QString error;
        QVERIFY2(
            testsupport::runPython({TDSTUDIO_TEST_SUPPORT_DIR "/make_bad_zips.py", scratch_.path()},
                                   nullptr, &error),
            qPrintable(error));
        // The rows below load these files: one that is missing would fail
        // for the wrong reason ("No such file") and could still pass.
        for (const char* name :
             {"dotdot.tdz", "absolute.tdz", "nometa.tdz", "corrupt.tdz", "encrypted.tdz"})
            QVERIFY2(QFileInfo(scratch_.path() + "/" + name).size() > 0,
                     qPrintable(QString("make_bad_zips.py did not write %1").arg(name)));
    }

    void rejected_data() {
        QTest::addColumn<QString>("path");         // what to load
        QTest::addColumn<QStringList>("needles");  // what the message must name
        const QString s = scratch_.path();

        QDir().mkpath(s + "/no-meta");
        QTest::newRow("missing meta.json")
            << s + "/no-meta" << QStringList{"no-meta/meta.json", "missing"};

        writeFile(s + "/malformed/meta.json", R"({"a": {"device": "cpu", "shape": [2)");
        QTest::newRow("malformed meta.json")
            << s + "/malformed" << QStringList{"malformed/meta.json", "invalid JSON"};

        writeFile(s + "/not-object/meta.json", "[1, 2]");
        QTest::newRow("meta.json not an object")
            << s + "/not-object" << QStringList{"not-object/meta.json", "not a JSON object"};

        writeFile(s + "/short/meta.json", kLeafMeta);
        writeFile(s + "/short/a.memmap", QByteArray(5, '\0'));
        QTest::newRow("shape does not fit file")
            << s + "/short" << QStringList{"short/a.memmap", "5 bytes", "needs 8"};

        writeFile(s + "/dtype/meta.json",
                  QByteArray(kLeafMeta).replace("torch.float32", "torch.float128"));
        writeFile(s + "/dtype/a.memmap", QByteArray(8, '\0'));
        QTest::newRow("unknown dtype")
            << s + "/dtype"
            << QStringList{"dtype/meta.json", "\"a\"", "unknown dtype \"torch.float128\""};

        writeFile(s + "/badshape/meta.json", QByteArray(kLeafMeta).replace("[2]", "[-2]"));
        QTest::newRow("negative shape") << s + "/badshape" << QStringList{"\"a\"", "non-negative"};

        writeFile(s + "/nofile/meta.json", kLeafMeta);
        QTest::newRow("missing leaf file")
            << s + "/nofile" << QStringList{"nofile/a.memmap", "missing data file", "\"a\""};

        writeFile(
            s + "/nested-missing/meta.json",
            R"({"sub": {"type": "TensorDict"}, "shape": [], "device": "cpu", "_type": "<class 'tensordict._td.TensorDict'>"})");
        QTest::newRow("missing sub-node")
            << s + "/nested-missing" << QStringList{"nested-missing/sub/meta.json", "missing"};

        writeFile(s + "/huge/meta.json", kLeafMeta + QByteArray(70 << 20, ' '));
        QTest::newRow("metadata over the size cap")
            << s + "/huge" << QStringList{"huge/meta.json", "size limit"};

        writeFile(s + "/deep/meta.json", QByteArray(100000, '['));
        QTest::newRow("deeply nested JSON") << s + "/deep" << QStringList{"deep/meta.json", "512"};

        QTest::newRow("nonexistent path")
            << s + "/does-not-exist" << QStringList{"does-not-exist", "No such file"};

        writeFile(s + "/random.tdz", QByteArray(4096, 'x'));
        QTest::newRow("not a zip")
            << s + "/random.tdz" << QStringList{"random.tdz", "none of the formats tdstudio opens"};

        QFile::copy(testsupport::fixturePath("archive_simple.tdz"), s + "/truncated.tdz");
        QFile::resize(s + "/truncated.tdz", 300);
        QTest::newRow("truncated archive")
            << s + "/truncated.tdz" << QStringList{"truncated.tdz", "truncated"};

        QTest::newRow("entry with ..")
            << s + "/dotdot.tdz" << QStringList{"dotdot.tdz:../a.memmap", "unsafe entry name"};
        QTest::newRow("absolute entry")
            << s + "/absolute.tdz"
            << QStringList{"absolute.tdz:/etc/a.memmap", "unsafe entry name"};
        QTest::newRow("archive without meta.json")
            << s + "/nometa.tdz" << QStringList{"nometa.tdz", "no top-level meta.json"};

        // PKWARE traditional encryption, written by make_bad_zips.py (which
        // checks that Python's zipfile decrypts it with the password only).
        QTest::newRow("encrypted entry")
            << s + "/encrypted.tdz"
            << QStringList{"encrypted.tdz:", "encrypted entries are not supported"};
    }

    void rejected() {
        QFETCH(QString, path);
        QFETCH(QStringList, needles);
        const QStringList before =
            QFileInfo::exists(path) ? testsupport::fileFingerprints(path) : QStringList{};
        try {
            TensorDict td = load(path.toStdString());
            QFAIL("load() accepted bad input");
        } catch (const Error& e) {
            for (const QString& needle : needles)
                QVERIFY2(QString::fromUtf8(e.what()).contains(needle),
                         qPrintable(
                             QString("message \"%1\" does not name \"%2\"").arg(e.what(), needle)));
        }
        if (!before.isEmpty())
            QCOMPARE(testsupport::fileFingerprints(path), before);
    }

    void corruptCompressedEntryFailsOnAccess() {
        const QString path = scratch_.path() + "/corrupt.tdz";
        TensorDict td = load(path.toStdString());  // the directory is intact; the data is not
        try {
            td.root().child("a")->bytes();
            QFAIL("corrupt data accepted");
        } catch (const Error& e) {
            QVERIFY2(QString(e.what()).contains("corrupt.tdz:a.memmap"), e.what());
            QVERIFY2(QString(e.what()).contains("corrupt") || QString(e.what()).contains("CRC"),
                     e.what());
        }
    }

    void metadataCapIsConfigurable() {
        LoadOptions options;
        options.maxMetadataBytes = 64;
        try {
            load(testsupport::fixturePath("simple").toStdString(), options);
            QFAIL("cap not applied");
        } catch (const Error& e) {
            QVERIFY2(QString(e.what()).contains("over the metadata size limit of 64 bytes"),
                     e.what());
        }
    }

private:
    QTemporaryDir scratch_;
};

QTEST_GUILESS_MAIN(BadInputTest)
#include "tst_bad_input.moc"
