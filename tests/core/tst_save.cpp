// save(): every fixture round-trips through directories and archives of each
// compression; output is checked file by file against Python's, and read
// back by independent tools (Python's zipfile, pickle and numpy).

#include <QCryptographicHash>
#include <QDirIterator>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "libzip_reader.h"
#include "tensordict/compare.h"
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

// An archive's bytes with the DOS time and date of every local and central
// header zeroed: the one field that differs from run to run.
QByteArray withoutTimestamps(QByteArray zip) {
    for (const auto& [signature, offset] :
         {std::pair{QByteArray("PK\x03\x04", 4), 10}, std::pair{QByteArray("PK\x01\x02", 4), 12}})
        for (qsizetype at = zip.indexOf(signature); at >= 0; at = zip.indexOf(signature, at + 4))
            zip.replace(at + offset, 4, QByteArray(4, '\0'));
    return zip;
}

// What zipfile (3.11.7 and later) writes for an entry opened with
// force_zip64, from what 3.11.2 wrote: version 4.5 needed (and made by), and
// the local header's sizes as 0xFFFFFFFF, its zip64 block holding them.
QByteArray asCurrentZipfileWrites(QByteArray zip) {
    for (qsizetype at = zip.indexOf("PK\x03\x04"); at >= 0;
         at = zip.indexOf("PK\x03\x04", at + 4)) {
        zip[at + 4] = char(45);
        zip.replace(at + 18, 8, QByteArray(8, '\xff'));
    }
    for (qsizetype at = zip.indexOf("PK\x01\x02"); at >= 0;
         at = zip.indexOf("PK\x01\x02", at + 4)) {
        zip[at + 4] = char(45);
        zip[at + 6] = char(45);
    }
    return zip;
}

// Deterministic bytes that compress somewhat, like real data.
std::vector<std::uint8_t> sampleBytes(std::size_t n, std::uint32_t seed) {
    std::vector<std::uint8_t> v(n);
    std::uint32_t x = seed;
    for (std::size_t i = 0; i < n; ++i) {
        x = x * 1664525u + 1013904223u;
        v[i] = static_cast<std::uint8_t>((x >> 24) & (i % 3 ? 0x0F : 0xFF));
    }
    return v;
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
    void cleanup() { testsupport::verifyArchivesWithLibzip(scratch_.path()); }

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

    void libzipNoticesACorruptEntry() {
        // The libzip reading every archive goes through does notice damage:
        // one payload byte flipped, its CRC-32 left as it was.
        const QString archive = scratch_.path() + "/flipped.tdz";
        SaveOptions options;
        options.compression = kZipDeflate;
        save(load(testsupport::fixturePath("dtypes").toStdString()), archive.toStdString(),
             options);
        QCOMPARE(testsupport::readWithLibzip(archive).error, QString());
        const TensorDict saved = load(archive.toStdString());
        const Node* leaf = saved.root().child("float64");
        QVERIFY(leaf && leaf->payloadOffset());
        const qint64 offset = qint64(*leaf->payloadOffset()) + 2;
        QFile file(archive);
        QVERIFY(file.open(QIODevice::ReadWrite));
        QVERIFY(file.seek(offset));
        const char byte = file.read(1).at(0);
        QVERIFY(file.seek(offset));
        QCOMPARE(file.write(QByteArray(1, char(byte ^ 0x10))), qint64(1));
        file.close();
        const testsupport::LibzipReading reading = testsupport::readWithLibzip(archive);
        QVERIFY2(!reading.error.isEmpty(), "libzip read a damaged entry without complaint");
        QVERIFY2(reading.error.contains("float64"), qPrintable(reading.error));
        QFile::remove(archive);  // damaged on purpose: not for cleanup()'s check
    }

    void roundTrip_data() {
        QTest::addColumn<QString>("fixture");
        QTest::addColumn<QString>("target");  // dir, or an archive's compression
        QTest::addColumn<int>("threads");
        for (const QString& name : testsupport::fixtureNames()) {
            QTest::newRow(qPrintable(name + "/dir")) << name << "dir" << 0;
            QTest::newRow(qPrintable(name + "/dir-threads")) << name << "dir" << 2;
            // deflate-1: ISA-L's deflate; the others zlib's, libbz2's, liblzma's.
            for (const char* c : {"stored", "deflate", "deflate-1", "bzip2", "lzma"})
                QTest::newRow(qPrintable(name + "/" + c))
                    << name << QString(c) << (QString(c).startsWith("deflate") ? 2 : 0);
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
            options.compression = *zipMethodFromName(target.section('-', 0, 0).toStdString());
            if (target.contains('-'))
                options.compressionLevel = target.section('-', 1).toInt();
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

    void storedArchiveIsPythonsByteForByte() {
        // Python's own archive, re-saved: the same bytes but for the
        // timestamps and the zip64 form of the headers. The fixture was
        // written by Python 3.11.2, whose force_zip64 local headers keep the
        // real sizes beside their zip64 block (version 2.0); zipfile since
        // 3.11.7 and 3.12 writes 0xFFFFFFFF there and version 4.5, as APPNOTE
        // 4.5.3 requires, and so do we.
        const QString fixture = testsupport::fixturePath("archive_simple.tdz");
        const QString prefix = scratch_.path() + "/same-bytes.tdz";
        SaveOptions options;
        options.copyExisting = true;
        save(load(fixture.toStdString()), prefix.toStdString(), options);
        const QByteArray ours = readAll(prefix), python = readAll(fixture);
        QCOMPARE(ours.size(), python.size());
        QCOMPARE(withoutTimestamps(ours).toHex(),
                 withoutTimestamps(asCurrentZipfileWrites(python)).toHex());
        // Each local header: version 4.5, sizes 0xFFFFFFFF, the real ones in its zip64 block.
        int headers = 0;
        for (qsizetype at = ours.indexOf("PK\x03\x04"); at >= 0;
             at = ours.indexOf("PK\x03\x04", at + 4), ++headers) {
            QCOMPARE(quint8(ours[at + 4]), quint8(45));
            QCOMPARE(ours.mid(at + 18, 8), QByteArray(8, '\xff'));
        }
        QCOMPARE(headers, 4);
        QString error;
        QVERIFY2(testsupport::runPython({"-c", QString("import zipfile; z = zipfile.ZipFile('%1'); "
                                                       "assert z.testzip() is None")
                                                   .arg(prefix)},
                                        nullptr, &error),
                 qPrintable(error));
    }

    void filesWithoutTheLoadBack() {
        // saveFiles() writes what save() writes, and returns where, without
        // loading it back; both refuse the same things, and it needs a prefix.
        const TensorDict td = load(testsupport::fixturePath("nested3").toStdString());
        SaveOptions options;
        options.copyExisting = true;
        for (const QString name : {"files.tdz", "files-dir"}) {
            const QString viaSave = scratch_.path() + "/save-" + name,
                          viaFiles = scratch_.path() + "/" + name;
            save(td, viaSave.toStdString(), options);
            const std::string written = saveFiles(td, viaFiles.toStdString(), options);
            QCOMPARE(QString::fromStdString(written), QFileInfo(viaFiles).absoluteFilePath());
            if (name.endsWith(".tdz")) {
                QCOMPARE(withoutTimestamps(readAll(viaFiles)).toHex(),
                         withoutTimestamps(readAll(viaSave)).toHex());
            } else {
                const TensorDict a = load(viaSave.toStdString()), b = load(written);
                QVERIFY(compare(a, b).equal());
            }
        }
        for (const std::string& prefix : {std::string(), scratch_.path().toStdString() + "/x"}) {
            SaveOptions bad = options;
            bad.numThreads = -1;
            try {
                saveFiles(td, prefix, bad);
                QFAIL("saveFiles() accepted a refused save");
            } catch (const Error& e) {
                QCOMPARE(int(e.kind()), int(ErrorKind::Invalid));
            }
        }
        QVERIFY(!QFileInfo::exists(scratch_.path() + "/x"));
    }

    void largeEntriesEveryMethod_data() {
        QTest::addColumn<QString>("method");
        QTest::addColumn<int>("threads");
        QTest::addColumn<int>("level");  // -1: the method's default
        for (const char* m : {"stored", "deflate", "bzip2", "lzma"})
            for (int threads : {1, 2})
                QTest::newRow(qPrintable(QString("%1-%2").arg(m).arg(threads)))
                    << QString(m) << threads << -1;
        // ISA-L writes levels 1 to 3, libdeflate 4 to 7 (and the default), zlib 8 and 9.
        for (int level : {1, 2, 3, 4, 7, 9})
            for (int threads : {1, 2})
                QTest::newRow(qPrintable(QString("deflate-%1-level%2").arg(threads).arg(level)))
                    << QString("deflate") << threads << level;
    }
    void largeEntriesEveryMethod() {
        // Entries that span several copy and deflate chunks (1 MiB), an empty
        // leaf, and more small entries than one write groups together.
        QFETCH(QString, method);
        QFETCH(int, threads);
        QFETCH(int, level);
        TensorDict td = TensorDict::create();
        Node& root = td.mutableRoot();
        std::map<QString, QByteArray> sha;
        auto add = [&](Node& parent, const QString& key, std::vector<std::uint8_t> bytes) {
            sha[key] =
                QCryptographicHash::hash(QByteArrayView(reinterpret_cast<const char*>(bytes.data()),
                                                        static_cast<qsizetype>(bytes.size())),
                                         QCryptographicHash::Sha256)
                    .toHex();
            const auto n = static_cast<std::int64_t>(bytes.size());
            parent.addBytes(key.section('/', -1).toStdString(), DType::UInt8, {n},
                            ownedBytes(std::move(bytes)));
        };
        add(root, "big", sampleBytes((5u << 20) + 17, 1));
        add(root, "exact", sampleBytes(2u << 20, 2));
        add(root, "empty", {});
        Node& many = root.addTensorDict("many");
        for (int i = 0; i < 700; ++i)
            add(many, QString("many/k%1").arg(i, 3, 10, QChar('0')), sampleBytes(100 + i, 10 + i));

        SaveOptions options;
        options.numThreads = threads;
        options.compression = *zipMethodFromName(method.toStdString());
        options.compressionLevel = level;
        const QString prefix = scratch_.path() + "/large-" + method + QString::number(threads) +
                               "-" + QString::number(level) + ".tdz";
        try {
            save(td, prefix.toStdString(), options);
        } catch (const Error& e) {
            QFAIL(e.what());
        }
        QString out, error;
        QVERIFY2(testsupport::runPython({TDSTUDIO_TEST_SUPPORT_DIR "/verify_output.py", prefix},
                                        &out, &error),
                 qPrintable(error));
        const QJsonObject py = QJsonDocument::fromJson(out.toUtf8()).object();
        QVERIFY2(py["zip"].toObject()["testzip"].isNull(), "zipfile found a bad CRC");
        if (method == "deflate") {  // Info-ZIP's unzip reads it too
            QProcess unzip;
            unzip.start("unzip", {"-tq", prefix});
            QVERIFY(unzip.waitForFinished(60000));
            QVERIFY2(unzip.exitCode() == 0, unzip.readAllStandardOutput().constData());
        }
        const QJsonObject leaves = py["leaves"].toObject();
        QCOMPARE(leaves.size(), int(sha.size()));
        for (const auto& [key, digest] : sha)
            QVERIFY2(leaves[key].toObject()["sha256"].toString().toLatin1() == digest,
                     qPrintable(key));
        const TensorDict back = load(prefix.toStdString());
        QCOMPARE(QByteArray::fromStdString(leafSha256(*back.root().child("big"))), sha["big"]);
        if (method == "deflate") {
            // Within 2% of one zlib stream at the same level; ISA-L's levels (1
            // to 3) within 10% of zlib's level 1 (bench_save measures the ratio).
            const auto big = sampleBytes((5u << 20) + 17, 1);
            QString size;
            const int zlibLevel = level >= 1 && level <= 3 ? 1 : level < 0 ? 6 : level;
            QVERIFY(testsupport::runPython(
                {"-c",
                 "import sys, zlib; d = open(sys.argv[1], 'rb').read(); "
                 "c = zlib.compressobj(int(sys.argv[2]), zlib.DEFLATED, -15); "
                 "print(len(c.compress(d) + c.flush()))",
                 writeTemp(big), QString::number(zlibLevel)},
                &size));
            const double ours = double(back.root().child("big")->leaf().storage.storedSize);
            const double slack = zlibLevel == 1 ? 1.10 : 1.02;
            QVERIFY2(ours <= size.trimmed().toDouble() * slack,
                     qPrintable(QString("%1 vs zlib %2").arg(ours).arg(size.trimmed())));
        }
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
            const int method = *zipMethodFromName(target.section('-', 0, 0).toStdString());
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

    QString writeTemp(const std::vector<std::uint8_t>& bytes) {
        const QString path = scratch_.path() + "/raw.bin";
        QFile f(path);
        if (f.open(QIODevice::WriteOnly))
            f.write(reinterpret_cast<const char*>(bytes.data()), qint64(bytes.size()));
        return path;
    }

    QTemporaryDir scratch_;
};

QTEST_GUILESS_MAIN(SaveTest)
#include "tst_save.moc"
