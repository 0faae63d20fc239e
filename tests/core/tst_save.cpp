// save(): every fixture round-trips through directories and archives of each
// compression; output is checked file by file against Python's, and read
// back by independent tools (Python's zipfile, pickle and numpy).

#include <QDirIterator>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QtTest>

#include "tensordict/report.h"
#include "tensordict/save.h"
#include "testsupport.h"

using namespace tensordict;

namespace {

QJsonObject report(const TensorDict& td) {
    DescribeOptions options;
    options.sha256 = true;
    options.firstValues = 64;
    return QJsonDocument::fromJson(
               QByteArray::fromStdString(toJson(describe(td, options), JsonStyle::Compact)))
        .object();
}

QByteArray readAll(const QString& path) {
    QFile f(path);
    f.open(QIODevice::ReadOnly);
    return f.readAll();
}

QStringList relativeFiles(const QString& root) {
    QStringList out;
    QDirIterator it(root, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
    while (it.hasNext())
        out << QDir(root).relativeFilePath(it.next());
    out.sort();
    return out;
}

}  // namespace

class SaveTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QVERIFY(scratch_.isValid()); }

    void comparisonCanFail() {
        // The comparison used below does notice a different tensordict.
        TensorDict td = load(testsupport::fixturePath("simple").toStdString());
        QVERIFY(!testsupport::compareWithExpected(
                     report(td),
                     testsupport::readJsonFile(testsupport::fixturePath("nested3.expected.json")),
                     false)
                     .isEmpty());
    }

    void roundTrip_data() {
        QTest::addColumn<QString>("fixture");
        QTest::addColumn<QString>("target");  // dir, or an archive's compression
        QTest::addColumn<int>("threads");
        for (const QString& name : testsupport::fixtureNames()) {
            QTest::newRow(qPrintable(name + "/dir")) << name << "dir" << 0;
            QTest::newRow(qPrintable(name + "/dir-threads")) << name << "dir" << 2;
            for (const char* c : {"stored", "deflate", "bzip2", "lzma"})
                QTest::newRow(qPrintable(name + "/" + c))
                    << name << QString(c) << (QString(c) == "deflate" ? 2 : 0);
        }
    }
    void roundTrip() {
        QFETCH(QString, fixture);
        QFETCH(QString, target);
        QFETCH(int, threads);
        QString source = testsupport::fixturePath(fixture);
        if (fixture.startsWith("archive_"))
            source += ".tdz";
        const QJsonObject expected =
            testsupport::readJsonFile(testsupport::fixturePath(fixture + ".expected.json"));
        const TensorDict td = load(source.toStdString());

        SaveOptions options;
        options.copyExisting = true;
        options.numThreads = threads;
        options.robustKey = fixture != "legacy_keys";  // as it was written
        QString prefix =
            scratch_.path() + "/" + fixture + "-" + target + "-" + QString::number(threads);
        if (target != "dir") {
            prefix += ".tdz";
            options.compression = *zipMethodFromName(target.toStdString());
        }
        TensorDict saved;
        try {
            saved = save(td, prefix.toStdString(), options);
        } catch (const Error& e) {
            QFAIL(e.what());
        }
        QVERIFY(saved.isLocked());
        QString mismatch = testsupport::compareWithExpected(report(saved), expected, false);
        QVERIFY2(mismatch.isEmpty(), qPrintable("saved result: " + mismatch));
        LoadOptions loadOptions;
        loadOptions.robustKey = options.robustKey;
        mismatch = testsupport::compareWithExpected(report(load(prefix.toStdString(), loadOptions)),
                                                    expected, false);
        QVERIFY2(mismatch.isEmpty(), qPrintable("loaded again: " + mismatch));

        if (target == "dir" && !fixture.startsWith("archive_"))
            compareFilesWithFixture(fixture, prefix);
        verifyWithPython(prefix, expected, target);
    }

    void builtInMemoryAndSaved() {
        TensorDict td = TensorDict::create({2});
        Node& root = td.mutableRoot();
        const std::int64_t ints[4] = {1, -2, 3, -4};
        root.addBytes("x", DType::Int64, {2, 2},
                      ownedBytes(std::vector<std::int64_t>(ints, ints + 4)));
        root.addTensorDict("sub").addNonTensor("note", Value("h\xc3\xa9llo"));
        root.addNonTensor("blob", Value(Value::Bytes{"\x01\x02"}));
        root.addNonTensorStack("words", {Value("a"), Value("b")});
        const QString prefix = scratch_.path() + "/built";
        save(td, prefix.toStdString());
        QCOMPARE(readAll(prefix + "/x.memmap"),
                 QByteArray(reinterpret_cast<const char*>(ints), sizeof ints));
        QCOMPARE(
            readAll(prefix + "/meta.json"),
            QByteArray(
                R"({"x": {"device": "cpu", "shape": [2, 2], "dtype": "torch.int64", "is_nested": false}, )"
                R"("sub": {"type": "TensorDict"}, "blob": {"type": "NonTensorData"}, )"
                R"("words": {"type": "NonTensorStack"}, "shape": [2], "device": "cpu", )"
                R"("_type": "<class 'tensordict._td.TensorDict'>"})"));
        QCOMPARE(
            readAll(prefix + "/sub/note/meta.json"),
            QByteArray(
                R"({"_type": "<class 'tensordict.tensorclass.NonTensorData'>", "data": "h\u00e9llo", )"
                R"("_is_non_tensor": true, "_metadata": null})"));
        QCOMPARE(
            readAll(prefix + "/words/meta.json"),
            QByteArray(
                R"({"_type":"<class 'tensordict.tensorclass.NonTensorStack'>","stack_dim":0,"device":null,"data":["a","b"]})"));
        // bytes are not JSON: Python's own pickle reads the sidecar.
        QString out;
        QVERIFY(testsupport::runPython(
            {"-c", "import pickle,sys; print(pickle.load(open(sys.argv[1],'rb')))",
             prefix + "/blob/other.pickle"},
            &out));
        QCOMPARE(out.trimmed(), QString("{'data': b'\\x01\\x02'}"));
        QVERIFY_THROWS_EXCEPTION(Error,
                                 root.addTensorDict("y").addBytes("bad", DType::Int8, {3}, {}));
    }

private:
    void compareFilesWithFixture(const QString& fixture, const QString& prefix) {
        const QString source = testsupport::fixturePath(fixture);
        QStringList expectedFiles = relativeFiles(source);
        if (fixture ==
            "reserved_keys")  // Python loads these keys as nothing, so nothing is written for them
            for (const char* f : {"shape.memmap", "device.memmap", "_type.memmap"})
                expectedFiles.removeAll(f);
        QCOMPARE(relativeFiles(prefix), expectedFiles);
        for (const QString& f : expectedFiles) {
            const QByteArray ours = readAll(prefix + "/" + f), theirs = readAll(source + "/" + f);
            if (f.endsWith(".memmap")) {
                QVERIFY2(ours == theirs, qPrintable(f + " differs"));
            } else if (f.endsWith("meta.json")) {
                QCOMPARE(QJsonDocument::fromJson(ours), QJsonDocument::fromJson(theirs));
            }
        }
    }

    void verifyWithPython(const QString& prefix, const QJsonObject& expected,
                          const QString& target) {
        QString out, error;
        QVERIFY2(testsupport::runPython({TDSTUDIO_TEST_SUPPORT_DIR "/verify_output.py", prefix},
                                        &out, &error),
                 qPrintable(error));
        const QJsonObject py = QJsonDocument::fromJson(out.toUtf8()).object();
        if (target != "dir") {
            const QJsonObject zip = py["zip"].toObject();
            QVERIFY2(zip["testzip"].isNull(), "zipfile.testzip() found a bad entry");
            const int method = *zipMethodFromName(target.toStdString());
            for (const QJsonValue& v : zip["entries"].toArray()) {
                const QJsonObject e = v.toObject();
                const bool memmap = e["name"].toString().endsWith(".memmap") &&
                                    !e["name"].toString().endsWith(".shape.memmap");
                QCOMPARE(e["method"].toInt(), memmap ? method : 0);
                if (memmap && method == 0)
                    QVERIFY2(e["payload_offset"].toInt() % 64 == 0,
                             qPrintable(e["name"].toString()));
            }
        }
        const QJsonObject leaves = py["leaves"].toObject();
        const QJsonArray expLeaves = expected["leaves"].toArray();
        QCOMPARE(leaves.size(), expLeaves.size());
        for (const QJsonValue& v : expLeaves) {
            const QJsonObject e = v.toObject();
            QStringList key;
            for (const QJsonValue& k : e["key"].toArray())
                key << k.toString();
            const QJsonObject leaf = leaves[key.join("/")].toObject();
            QCOMPARE(leaf["sha256"], e["sha256"]);
            QCOMPARE(leaf["shape"], e["shape"]);
            QCOMPARE(leaf["dtype"], e["dtype"]);
        }
        const QJsonObject nonTensor = py["non_tensor"].toObject();
        for (const QJsonValue& v : expected["non_tensor"].toArray()) {
            const QJsonObject e = v.toObject();
            QStringList key;
            for (const QJsonValue& k : e["key"].toArray())
                key << k.toString();
            QCOMPARE(nonTensor[key.join("/")], e["data"]);
        }
    }

    QTemporaryDir scratch_;
};

QTEST_GUILESS_MAIN(SaveTest)
#include "tst_save.moc"
