// The integrity check (tensordict::check) and its repair, SQLite-style: a
// corpus of broken files made here, each found, named and classified; every
// clean fixture sound; an in-place write made as Python's "r+" mode makes
// it found and repaired, after which Python's zipfile, unzip and libzip read
// the archive cleanly and every leaf's bytes are what they were.

#include <utime.h>

#include <QCryptographicHash>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QtTest>
#include <fstream>
#include <tuple>

#include "libzip_reader.h"
#include "tensordict/check.h"
#include "tensordict/compare.h"
#include "tensordict/keys.h"
#include "tensordict/report.h"
#include "tensordict/save.h"
#include "tensordict/tensordict.h"
#include "testsupport.h"

using namespace tensordict;

namespace {

// "kind file key" of every problem, for messages.
QString describeProblems(const CheckReport& r) {
    QStringList lines;
    for (const Problem& p : r.problems)
        lines << QString("%1 %2 %3 [%4]: %5")
                     .arg(p.severity == Severity::Error ? "error" : "warning",
                          QString::fromStdString(p.kind), QString::fromStdString(p.file),
                          QString::fromStdString(formatKeyPath(p.key)),
                          QString::fromStdString(p.message));
    return lines.join('\n');
}

const Problem* findKind(const CheckReport& r, const std::string& kind) {
    for (const Problem& p : r.problems)
        if (p.kind == kind)
            return &p;
    return nullptr;
}

std::vector<float> ramp(int n, float start = 0) {
    std::vector<float> v(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i)
        v[static_cast<std::size_t>(i)] = start + float(i);
    return v;
}

// A small dataset: a [8] and b [4] float32, and sub/c [2, 3].
TensorDict smallDataset() {
    TensorDict td = TensorDict::create();
    td.mutableRoot().addBytes("a", DType::Float32, {8}, ownedBytes(ramp(8)));
    td.mutableRoot().addBytes("b", DType::Float32, {4}, ownedBytes(ramp(4, 100)));
    td.mutableRoot().addTensorDict("sub").addBytes("c", DType::Float32, {2, 3},
                                                   ownedBytes(ramp(6, 7)));
    return td;
}

// The sha256 of every leaf, by key path.
QMap<QString, QString> leafHashes(const QString& path) {
    DescribeOptions options;
    options.sha256 = true;
    const Value report = describe(load(path.toStdString()), options);
    QMap<QString, QString> hashes;
    for (const Value& leaf : report.find("leaves")->asList())
        hashes[QString::fromStdString(toJson(*leaf.find("key")))] =
            QString::fromStdString(leaf.find("sha256")->asString());
    return hashes;
}

QByteArray fileBytes(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// Where a.memmap's payload starts in `archive`, as Python's zipfile sees it.
qint64 payloadOffset(const QString& archive, const QString& entry) {
    QString out, error;
    if (!testsupport::runPython(
            {"-c",
             "import sys, zipfile\n"
             "z = zipfile.ZipFile(sys.argv[1]); i = z.getinfo(sys.argv[2])\n"
             "f = open(sys.argv[1], 'rb'); f.seek(i.header_offset + 26)\n"
             "n, e = int.from_bytes(f.read(2), 'little'), int.from_bytes(f.read(2), 'little')\n"
             "print(i.header_offset + 30 + n + e)\n",
             archive, entry},
            &out, &error))
        return -1;
    return out.trimmed().toLongLong();
}

}  // namespace

class CheckTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QVERIFY(scratch_.isValid()); }

private:
    // The folder of tests/support/make_object_pickles.py's files, written
    // once; false, with the script's error, when it fails.
    bool objectPickles(QString* dir, QString* error) {
        *dir = scratch_.filePath("objects");
        if (QFile::exists(*dir + "/expected.json"))
            return true;
        QDir().mkpath(*dir);
        return testsupport::runPython({TDSTUDIO_TEST_SUPPORT_DIR "/make_object_pickles.py", *dir},
                                      nullptr, error);
    }

private Q_SLOTS:
    void cleanup() {
        // The archives that should be clean (repaired ones included) read cleanly in libzip.
        testsupport::verifyArchivesWithLibzip(scratch_.filePath("clean"));
    }

    // Every fixture, written by the real Python libraries, is sound.
    void cleanFixturesAreSound_data() {
        QTest::addColumn<QString>("path");
        for (const QString& dir : {testsupport::fixturesDir(), testsupport::torchFixturesDir()})
            for (const QFileInfo& f :
                 QDir(dir).entryInfoList(QDir::Files | QDir::Dirs | QDir::NoDotAndDotDot)) {
                if (f.suffix() == "json" || f.suffix() == "md")
                    continue;
                QTest::newRow(qPrintable(f.fileName())) << f.filePath();
            }
    }
    void cleanFixturesAreSound() {
        QFETCH(QString, path);
        const CheckReport r = check(path.toStdString());
        QVERIFY2(r.sound(), qPrintable(describeProblems(r)));
        QVERIFY(r.files >= 1);
        QVERIFY(r.bytes > 0);
    }

    // The corpus: each broken file found, named, and of the right kind.
    void brokenFilesAreFoundAndNamed_data() {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("kind");
        QTest::addColumn<bool>("isError");
        QTest::addColumn<QString>("file");  // the problem names this file or entry
        QTest::addColumn<QStringList>("key");
        const QString s = scratch_.filePath("corpus");
        QDir().mkpath(s);

        // A flipped byte in a stored entry, and in a deflate stream.
        save(smallDataset(), (s + "/stored.tdz").toStdString());
        flipByte(s + "/stored.tdz", payloadOffset(s + "/stored.tdz", "a.memmap") + 5);
        QTest::newRow("flipped byte, stored")
            << s + "/stored.tdz"
            << "crc_mismatch" << true << "stored.tdz:a.memmap" << QStringList{"a"};
        SaveOptions deflate;
        deflate.compression = kZipDeflate;
        TensorDict big = TensorDict::create();
        big.mutableRoot().addBytes("x", DType::Float32, {20000}, ownedBytes(ramp(20000)));
        save(big, (s + "/deflated.tdz").toStdString(), deflate);
        flipByte(s + "/deflated.tdz", payloadOffset(s + "/deflated.tdz", "x.memmap") + 200);
        QTest::newRow("flipped byte, deflate")
            << s + "/deflated.tdz"
            << "" << true << "deflated.tdz:x.memmap" << QStringList{"x"};

        // A truncated leaf file.
        save(smallDataset(), (s + "/truncated").toStdString());
        QVERIFY(QFile::resize(s + "/truncated/b.memmap", 10));
        QTest::newRow("truncated leaf")
            << s + "/truncated"
            << "short_file" << true << "truncated/b.memmap" << QStringList{"b"};

        // meta.json missing: at the root, in a lazy stack member, deep in a tree.
        save(smallDataset(), (s + "/no-root-meta").toStdString());
        QVERIFY(QFile::remove(s + "/no-root-meta/meta.json"));
        QTest::newRow("missing root meta.json")
            << s + "/no-root-meta"
            << "missing_meta_json" << true << "no-root-meta/meta.json" << QStringList{};
        testsupport::copyTree(testsupport::fixturePath("lazy_stack"), s + "/stack");
        QVERIFY(QFile::remove(s + "/stack/ls/1/meta.json"));
        QTest::newRow("missing meta.json in a lazy stack")
            << s + "/stack"
            << "missing_meta_json" << true << "stack/ls/1/meta.json" << QStringList{"ls", "1"};
        testsupport::copyTree(testsupport::fixturePath("nested3"), s + "/deep");
        QVERIFY(QFile::remove(s + "/deep/l1/l2/meta.json"));
        QTest::newRow("missing meta.json deep")
            << s + "/deep"
            << "missing_meta_json" << true << "deep/l1/l2/meta.json" << QStringList{"l1", "l2"};

        // Archives Python's zipfile wrote, patched where zipfile would refuse.
        save(smallDataset(), (s + "/good").toStdString());
        QString error;
        QVERIFY2(testsupport::runPython(
                     {TDSTUDIO_TEST_SUPPORT_DIR "/make_broken_archives.py", s, s + "/good"},
                     nullptr, &error),
                 qPrintable(error));
        QTest::newRow("short entry, consistent CRC")
            << s + "/short_entry.tdz"
            << "short_file" << true << "short_entry.tdz:a.memmap" << QStringList{"a"};
        QTest::newRow("overlapping entry") << s + "/overlap.tdz"
                                           << "overlap" << true << "overlap.tdz:" << QStringList{};
        QTest::newRow("local header disagrees")
            << s + "/local_header.tdz"
            << "local_header" << true << "local_header.tdz:a.memmap" << QStringList{"a"};
        QTest::newRow("data descriptor disagrees")
            << s + "/descriptor.tdz"
            << "data_descriptor" << true << "descriptor.tdz:a.memmap" << QStringList{"a"};

        // An orphan file.
        save(smallDataset(), (s + "/orphan").toStdString());
        testsupport::writeFile(s + "/orphan/sub/old.memmap", QByteArray(16, '\1'));
        QTest::newRow("orphan file")
            << s + "/orphan"
            << "orphan" << false << "orphan/sub/old.memmap" << QStringList{};

        // A leaf's missing file (a zero-element leaf needs none: sound, below).
        save(smallDataset(), (s + "/missing").toStdString());
        QVERIFY(QFile::remove(s + "/missing/sub/c.memmap"));
        QTest::newRow("missing leaf file")
            << s + "/missing"
            << "missing_file" << true << "missing/sub/c.memmap" << QStringList{"sub", "c"};

        // A __main__ class.
        testsupport::copyTree(testsupport::fixturePath("tensorclass"), s + "/main");
        QFile meta(s + "/main/meta.json");
        QVERIFY(meta.open(QIODevice::ReadOnly));
        QByteArray text = meta.readAll();
        meta.close();
        QVERIFY(text.contains("fixture_classes.MyTC"));
        testsupport::writeFile(s + "/main/meta.json",
                               text.replace("fixture_classes.MyTC", "__main__.MyTC"));
        QTest::newRow("__main__ class")
            << s + "/main"
            << "main_class" << false << "main/meta.json" << QStringList{};

        // A pickle sidecar that needs code to load.
        testsupport::copyTree(testsupport::fixturePath("nontensor_pickle"), s + "/pickled");
        QVERIFY(testsupport::runPython(
            {"-c",
             "import sys, pickle, fractions\n"
             "for p in __import__('glob').glob(sys.argv[1] + '/**/other.pickle', recursive=True):\n"
             "    pickle.dump({'data': fractions.Fraction(1, 3)}, open(p, 'wb'))\n",
             s + "/pickled"}));
        QTest::newRow("pickle sidecar")
            << s + "/pickled"
            << "pickle_sidecar" << false << "other.pickle" << QStringList{};

        // A stale temporary of an interrupted atomic save.
        save(smallDataset(), (s + "/tmp-beside").toStdString());
        testsupport::writeFile(s + "/.tmp-beside.tdstudio-0123abcd/meta.json", "{}");
        QTest::newRow("stale temporary")
            << s + "/tmp-beside"
            << "stale_temporary" << false << ".tmp-beside.tdstudio-0123abcd" << QStringList{};
    }
    void brokenFilesAreFoundAndNamed() {
        QFETCH(QString, path);
        QFETCH(QString, kind);
        QFETCH(bool, isError);
        QFETCH(QString, file);
        QFETCH(QStringList, key);
        const CheckReport r = check(path.toStdString());
        QVERIFY2(!r.sound(), qPrintable(path));
        const Problem* p = nullptr;
        for (const Problem& q : r.problems)
            if ((kind.isEmpty() || q.kind == kind.toStdString()) &&
                QString::fromStdString(q.file).contains(file))
                p = p ? p : &q;
        QVERIFY2(p, qPrintable("no " + kind + " naming " + file + " in\n" + describeProblems(r)));
        QCOMPARE(p->severity == Severity::Error, isError);
        if (!key.isEmpty()) {
            QStringList actual;
            for (const std::string& k : p->key)
                actual << QString::fromStdString(k);
            QCOMPARE(actual, key);
        }
        QVERIFY(!p->message.empty());
        if (kind.isEmpty())  // a deflate stream: broken data or a wrong CRC, an error either way
            QVERIFY2(p->kind == "corrupt_stream" || p->kind == "crc_mismatch" ||
                         p->kind == "size_mismatch",
                     p->kind.c_str());
        QCOMPARE(r.errorCount() > 0, isError || r.errorCount() > 0);
    }

    // Data descriptors with 8-byte sizes and no zip64 block in the local
    // header (what Go's and Java's writers give entries over 4 GiB; APPNOTE
    // 4.3.9.2 lets any writer use them): the width that agrees with the
    // central directory is read, as libzip does, so they are no finding.
    // zipfile reads the archive, and it loads as the original.
    void wideDataDescriptorsWithoutZip64LocalBlocksAreRead() {
        const QString dir = scratch_.filePath("wide-descriptors");
        QDir().mkpath(dir);
        save(smallDataset(), (dir + "/plain.tdz").toStdString());
        QString error;
        QVERIFY2(
            testsupport::runPython(
                {"-c",
                 "import sys, struct, zipfile\n"
                 "src, dst = sys.argv[1], sys.argv[2]\n"
                 "out, central = bytearray(), bytearray()\n"
                 "with zipfile.ZipFile(src) as z:\n"
                 "    infos = z.infolist()\n"
                 "    for i in infos:\n"
                 "        data, name, at = z.read(i), i.filename.encode(), len(out)\n"
                 "        out += struct.pack('<IHHHHHIIIHH', 0x04034b50, 45, 8, 0, 0, 0x21,\n"
                 "                           0, 0, 0, len(name), 0) + name + data\n"
                 "        out += struct.pack('<IIQQ', 0x08074b50, i.CRC, len(data), len(data))\n"
                 "        central += struct.pack('<IHHHHHHIIIHHHHHII', 0x02014b50, 45, 45, 8, 0,\n"
                 "                               0, 0x21, i.CRC, len(data), len(data),\n"
                 "                               len(name), 0, 0, 0, 0, 0, at) + name\n"
                 "start = len(out)\n"
                 "out += central + struct.pack('<IHHHHIIH', 0x06054b50, 0, 0, len(infos),\n"
                 "                             len(infos), len(central), start, 0)\n"
                 "open(dst, 'wb').write(out)\n"
                 "assert zipfile.ZipFile(dst).testzip() is None\n",
                 dir + "/plain.tdz", dir + "/wide.tdz"},
                nullptr, &error),
            qPrintable(error));
        const CheckReport r = check((dir + "/wide.tdz").toStdString());
        for (const Problem& p : r.problems)
            QVERIFY2(p.severity == Severity::Warning && p.kind == "unaligned_payload",
                     qPrintable(QString::fromStdString(p.kind + " " + p.file + ": " + p.message)));
        QVERIFY(r.files >= 1);
        QVERIFY(compare(load((dir + "/wide.tdz").toStdString()),
                        load((dir + "/plain.tdz").toStdString()))
                    .equal());
    }

    // Arrays NumPy reads and tdstudio does not (strings, dates, records,
    // objects, long doubles) are well-formed: a not_read warning, never an
    // error that calls them damage, and the arrays beside them are still
    // checked. But such an array cut short, a code NumPy has no dtype for,
    // or a .npy version that does not exist is still an error; and NumPy's
    // one-letter codes are read.
    void numpyArraysNotReadHereAreWarnings() {
        const QString dir = scratch_.filePath("numpy-not-read");
        QDir().mkpath(dir);
        QString error;
        QVERIFY2(
            testsupport::runPython(
                {"-c",
                 "import sys, numpy as np\n"
                 "d = sys.argv[1]\n"
                 "rec = np.dtype([('a', '<f4'), ('b', [('c', '<i8')], (2,)), ('s', 'S3')])\n"
                 "np.savez(d + '/mixed.npz', x=np.arange(6, dtype=np.float32),\n"
                 "         labels=np.array(['a', 'bc']),\n"
                 "         when=np.array(['2026-12-07'], dtype='datetime64[D]'),\n"
                 "         records=np.zeros(3, dtype=rec),\n"
                 "         objects=np.array([{'a': 1}, None], dtype=object),\n"
                 "         wide=np.arange(3, dtype=np.longdouble))\n"
                 "np.save(d + '/labels.npy', np.array(['a', 'bc', 'def']))\n"
                 "b = open(d + '/labels.npy', 'rb').read()\n"
                 "open(d + '/cut.npy', 'wb').write(b[:-4])\n"
                 "def patched(name, array, old, new):\n"
                 "    np.save(d + '/' + name, array)\n"
                 "    b = open(d + '/' + name, 'rb').read()\n"
                 "    assert len(old) == len(new) and old in b\n"
                 "    open(d + '/' + name, 'wb').write(b.replace(old, new, 1))\n"
                 "patched('nine.npy', np.arange(3), b\"'<i8'\", b\"'<i9'\")\n"
                 "patched('d.npy', np.arange(3.0), b\"'<f8',\", b\"'<d', \")\n"
                 "patched('q.npy', np.array([True, False]), b\"'|b1',\", b\"'|?', \")\n"
                 "assert np.load(d + '/d.npy').tolist() == [0.0, 1.0, 2.0]\n"
                 "assert np.load(d + '/q.npy').tolist() == [True, False]\n"
                 "b = bytearray(open(d + '/labels.npy', 'rb').read())\n"
                 "b[6] = 5\n"
                 "open(d + '/v5.npy', 'wb').write(b)\n"
                 "def cut(name, array, n):\n"
                 "    np.save(d + '/' + name, array)\n"
                 "    b = open(d + '/' + name, 'rb').read()\n"
                 "    open(d + '/' + name, 'wb').write(b[:-n])\n"
                 "cut('records_cut.npy', np.zeros(3, dtype=rec), 1)\n"
                 "cut('when_cut.npy', np.array(['2026-12-07'], dtype='datetime64[D]'), 1)\n"
                 "cut('objects_cut.npy', np.array([{'a': 1}, 'x'], dtype=object), 3)\n"
                 "patched('a8.npy', np.arange(3), b\"'<i8'\", b\"'<a8'\")\n"
                 "patched('S8.npy', np.arange(3), b\"'<i8'\", b\"'<S8'\")\n"
                 "def refused(name):\n"
                 "    try:\n"
                 "        np.load(d + '/' + name)\n"
                 "    except ValueError:\n"
                 "        return\n"
                 "    raise SystemExit(name + ': numpy read it')\n"
                 "patched('v11.npy', np.arange(3), b'NUMPY\\x01\\x00', b'NUMPY\\x01\\x01')\n"
                 "patched('int_shape.npy', np.arange(3), b'(3,)', b'(3) ')\n"
                 "patched('after.npy', np.arange(3), b'}   ', b'} x ')\n"
                 "patched('octal.npy', np.arange(12), b'(12,)', b'(01,)')\n"
                 "for name in ('v11.npy', 'int_shape.npy', 'after.npy', 'octal.npy'):\n"
                 "    refused(name)\n"
                 "np.savez(d + '/empty.npz')\n"
                 "assert len(np.load(d + '/empty.npz').files) == 0\n"
                 "import zipfile\n"
                 "with zipfile.ZipFile(d + '/notes.npz', 'w') as z:\n"
                 "    z.writestr('readme.txt', b'hi')\n"
                 "    z.writestr('arr.npy', open(d + '/d.npy', 'rb').read())\n"
                 "    z.writestr('data.bin', open(d + '/d.npy', 'rb').read())\n"
                 "assert np.load(d + '/notes.npz')['readme.txt'] == b'hi'\n"
                 "assert np.load(d + '/notes.npz')['data.bin'].dtype == np.float64\n"
                 "np.save(d + '/m8.npy', np.array([1, 2], dtype='m8'))\n"
                 "np.save(d + '/M8.npy', np.zeros(2, dtype='M8'))\n"
                 "assert b\"'<m8'\" in open(d + '/m8.npy', 'rb').read()\n"
                 "patched('O8.npy', np.array([1, 'a'], dtype=object), b\"'|O', \", b\"'|O8',\")\n"
                 "assert np.load(d + '/O8.npy', allow_pickle=True).tolist() == [1, 'a']\n"
                 "assert np.load(d + '/a8.npy').dtype == np.dtype('S8')\n",
                 dir},
                nullptr, &error),
            qPrintable(error));
        const CheckReport mixed = check((dir + "/mixed.npz").toStdString());
        QStringList found;
        for (const Problem& p : mixed.problems)
            found << QString::fromStdString((p.severity == Severity::Error ? "error " : "") +
                                            p.kind + " " + p.file)
                         .remove(dir + "/");
        found.sort();
        QCOMPARE(found,
                 QStringList({"not_read mixed.npz:labels.npy", "not_read mixed.npz:objects.npy",
                              "not_read mixed.npz:records.npy", "not_read mixed.npz:when.npy",
                              "not_read mixed.npz:wide.npy"}));
        QCOMPARE(mixed.errorCount(), std::size_t(0));
        const TensorDict npz = load((dir + "/mixed.npz").toStdString());
        QVERIFY(npz.root().child("x") && npz.root().child("x")->isTensor());

        const CheckReport labels = check((dir + "/labels.npy").toStdString());
        QVERIFY2(labels.errorCount() == 0 && findKind(labels, "not_read"),
                 qPrintable(describeProblems(labels)));
        try {
            load((dir + "/labels.npy").toStdString());
            QFAIL("a string array was opened");
        } catch (const Error& e) {
            QCOMPARE(e.failure().kind, ErrorKind::NotReadHere);
        }
        // Cut short, a header NumPy refuses (a version 1.1, a shape "(3)", text
        // after the dict, "(01,)"), or a dtype np.save never writes one bit from one it
        // does ("<a8" from "<i8"): errors.
        for (const auto& [name, kind] : {std::pair<QString, std::string>{"cut.npy", "short_file"},
                                         {"records_cut.npy", "short_file"},
                                         {"when_cut.npy", "short_file"},
                                         {"objects_cut.npy", "short_file"},
                                         {"a8.npy", "unreadable"},
                                         {"S8.npy", "unreadable"},
                                         {"nine.npy", "unreadable"},
                                         {"v11.npy", "unreadable"},
                                         {"int_shape.npy", "unreadable"},
                                         {"after.npy", "unreadable"},
                                         {"octal.npy", "unreadable"},
                                         {"v5.npy", "unreadable"}}) {
            const CheckReport r = check((dir + "/" + name).toStdString());
            QVERIFY2(r.errorCount() == 1 && findKind(r, kind) &&
                         findKind(r, kind)->severity == Severity::Error,
                     qPrintable(name + ": " + describeProblems(r)));
        }
        const TensorDict d = load((dir + "/d.npy").toStdString());
        QCOMPARE(d.root().leaf().dtype, DType::Float64);
        QCOMPARE(d.root().leaf().shape, std::vector<std::int64_t>({3}));
        // An .npz of no arrays (np.savez()) opens empty; a member that is no
        // array (numpy.load gives its bytes) is not read, beside the arrays;
        // one that is, by its magic, is an array whatever its name.
        const CheckReport empty = check((dir + "/empty.npz").toStdString());
        QVERIFY2(empty.problems.empty(), qPrintable(describeProblems(empty)));
        QVERIFY(load((dir + "/empty.npz").toStdString()).root().children().empty());
        const CheckReport notes = check((dir + "/notes.npz").toStdString());
        QVERIFY2(notes.errorCount() == 0 && notes.problems.size() == 1 &&
                     notes.problems[0].kind == "not_read" &&
                     notes.problems[0].key == std::vector<std::string>{"readme.txt"},
                 qPrintable(describeProblems(notes)));
        const TensorDict notesTree = load((dir + "/notes.npz").toStdString());
        QVERIFY(notesTree.root().child("arr")->isTensor());
        const Node* named = notesTree.root().child("data.bin");
        QVERIFY(named && named->isTensor() && named->leaf().dtype == DType::Float64);
        // np.save writes datetimes and timedeltas of no unit as "<M8", "<m8".
        for (const QString name : {"m8.npy", "M8.npy"}) {
            const CheckReport r = check((dir + "/" + name).toStdString());
            QVERIFY2(r.errorCount() == 0 && findKind(r, "not_read"),
                     qPrintable(name + ": " + describeProblems(r)));
        }
        // NumPy before 1.10 wrote object arrays as "|O8".
        const CheckReport o8 = check((dir + "/O8.npy").toStdString());
        QVERIFY2(o8.errorCount() == 0 && findKind(o8, "not_read"),
                 qPrintable(describeProblems(o8)));
        const TensorDict q = load((dir + "/q.npy").toStdString());
        QCOMPARE(q.root().leaf().dtype, DType::Bool);
        QVERIFY(check((dir + "/d.npy").toStdString()).sound());
    }

    // A torch.save checkpoint's quantized tensors (make_quantized.py) are
    // not read here, and not damage: a not_read warning each, once all they
    // name is found sound. One thing wrong in one is an error.
    void quantizedTensorsAreNotReadNotDamaged() {
        const QString dir = scratch_.filePath("quantized");
        QDir().mkpath(dir);
        QString error;
        QVERIFY2(testsupport::runPython({TDSTUDIO_TEST_SUPPORT_DIR "/make_quantized.py", dir},
                                        nullptr, &error),
                 qPrintable(error));
        // What torch.save writes (and torch.load reads back): each quantized
        // tensor is one not_read warning under its own key, nothing is an error.
        const QStringList quantizedKeys = {"q2", "q32", "q4",     "q8",  "qc",
                                           "qf", "qu8", "scalar", "view"};
        for (const auto& [name, keys] : {std::pair<QString, QStringList>{"state.pt", quantizedKeys},
                                         {"state_legacy.pt", quantizedKeys},
                                         {"model.pt", {"0._packed_params._packed_params/0"}}}) {
            const CheckReport r = check((dir + "/" + name).toStdString());
            QStringList found;
            for (const Problem& p : r.problems) {
                QVERIFY2(p.severity == Severity::Warning && p.kind == "not_read",
                         qPrintable(name + ": " + describeProblems(r)));
                found << QString::fromStdString(formatKeyPath(p.key));
            }
            found.sort();
            QCOMPARE(found, keys);
            const Problem* q = nullptr;
            for (const Problem& p : r.problems)
                if (p.key == std::vector<std::string>{"q8"})
                    q = &p;
            if (name != "model.pt")
                QVERIFY2(q && QString::fromStdString(q->message)
                                  .contains("torch.qint8, shape [4, 6], per-tensor affine: "
                                            "scale 0.1, zero point 3"),
                         qPrintable(describeProblems(r)));
        }
        const TensorDict state = load((dir + "/state.pt").toStdString());
        QVERIFY(state.root().child("plain") && state.root().child("plain")->isTensor());
        QCOMPARE(state.root().child("qc")->failure()->kind, ErrorKind::NotReadHere);

        // One thing wrong in each: an error, for what is wrong.
        for (const auto& [name, kind, reason] :
             {std::tuple<QString, std::string, QString>{"cut_entry.pt", "short_file",
                                                        "needs 24 bytes from byte 0"},
              {"cut_legacy.pt", "short_file", "needs 24 bytes"},
              {"unknown_type.pt", "unreadable", "torch.QInt7Storage"},
              {"past_storage.pt", "unreadable", "reaches past its storage of 24 bytes"},
              {"offset_past.pt", "unreadable", "reaches past its storage of 24 bytes"},
              {"packed_past.pt", "unreadable", "take more than its storage's 6 bytes"},
              {"packed_offset.pt", "unreadable", "a view of packed torch.quint4x2 values"},
              {"packed_strides.pt", "unreadable", "strides [100000, 1]"},
              {"requires_grad.pt", "unreadable", "quantizer parameters, False, hooks"},
              {"unknown_call.pt", "unreadable",
               "torch._utils._rebuild_ptensor, which tdstudio does not know"},
              {"few_scales.pt", "unreadable", "has 3 scales and 3 zero points"},
              {"bad_axis.pt", "unreadable", "quantized along dimension 2"},
              {"scales_stride0.pt", "unreadable", "scales are a torch.float64 [4] view"},
              {"scales_long.pt", "unreadable", "scales are a torch.int64 [4] view"},
              {"bad_scheme.pt", "unreadable", "torch.per_tensor_symmetric"},
              {"float_zero.pt", "unreadable", "not (scheme, scale, zero point)"}}) {
            const CheckReport r = check((dir + "/" + name).toStdString());
            const Problem* p = findKind(r, kind);
            QVERIFY2(r.errorCount() >= 1 && p && p->severity == Severity::Error &&
                         QString::fromStdString(p->message).contains(reason),
                     qPrintable(name + ": " + describeProblems(r)));
            for (const Problem& other : r.problems)
                QVERIFY2(other.severity == Severity::Warning || other.kind == kind,
                         qPrintable(name + ": " + describeProblems(r)));
        }
        // The cut entry spoils the two tensors over it, no other.
        QCOMPARE(check((dir + "/cut_entry.pt").toStdString()).errorCount(), std::size_t(2));
    }

    // Tensors inside Python objects that torch.load rebuilds (an
    // optimizer's state, a defaultdict, list and dict subclasses at
    // protocols 1 and 2, a whole module in the legacy layout) are shown
    // where torch puts them, with its values, and checked: nothing is an
    // error or a warning.
    void tensorsInsideObjectsAreShownWithTheirValues() {
        QString dir, error;
        QVERIFY2(objectPickles(&dir, &error), qPrintable(error));
        QFile file(dir + "/expected.json");
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QJsonObject expected = QJsonDocument::fromJson(file.readAll()).object();
        QCOMPARE(expected.keys(),
                 QStringList({"defaultdict.pt", "module_legacy.pt", "optimizer.pt", "scheduler.pt",
                              "state_dict.pt", "subclasses.pt", "subclasses_p1.pt", "tensor_key.pt",
                              "tensor_subclass.pt", "version_padded.pt", "version_plus.pt",
                              "version_text.pt", "version_zeros.pt"}));
        for (const QString& name : expected.keys()) {
            const std::string path = (dir + "/" + name).toStdString();
            const CheckReport r = check(path);
            QVERIFY2(r.problems.empty(), qPrintable(name + ": " + describeProblems(r)));
            const TensorDict td = load(path);
            QStringList found;  // every tensor of the tree
            std::vector<const Node*> pending{&td.root()};
            while (!pending.empty()) {
                const Node* n = pending.back();
                pending.pop_back();
                if (n->isTensor())
                    found << QString::fromStdString(formatKeyPath(n->keyPath()));
                for (const Node* child : n->children())
                    pending.push_back(child);
            }
            const QJsonObject tensors = expected[name].toObject();
            found.sort();
            QCOMPARE(found, tensors.keys());
            for (const QString& key : tensors.keys()) {
                std::vector<std::string> path;  // (no key here holds a '/')
                for (const QString& part : key.split('/'))
                    path.push_back(part.toStdString());
                const Node* n = td.root().find(path);
                QVERIFY2(n && n->isTensor() && n->leaf().dtype == DType::Float32,
                         qPrintable(name + ": " + key));
                const LeafBytes bytes = n->bytes();
                const QJsonArray want = tensors[key].toArray();
                QCOMPARE(bytes.size, std::size_t(want.size()) * sizeof(float));
                for (qsizetype i = 0; i < want.size(); ++i) {
                    float got = 0;
                    std::memcpy(&got, bytes.data.get() + i * qsizetype(sizeof(float)), sizeof got);
                    QCOMPARE(got, float(want[i].toDouble()));
                }
            }
        }
        // An optimizer's state is keyed by its parameters: named by their
        // dtype, shape and storage (expected.json's keys say which).
        const TensorDict opt = load((dir + "/optimizer.pt").toStdString());
        const Node* state = opt.root().find({"state", "dictitems"});
        QVERIFY(state && state->children().size() == 2);
        QVERIFY(QString::fromStdString(state->children()[0]->key())
                    .startsWith("<Parameter torch.float32 [2, 3] of storage "));
        // A tensor subclass with attributes is an object of its class, its
        // attributes beside its tensor; one without is that tensor.
        const TensorDict sub = load((dir + "/tensor_subclass.pt").toStdString());
        QCOMPARE(sub.root().child("sub")->className(), std::string("__main__.Sub"));
        QCOMPARE(sub.root().find({"sub", "meta"})->value(), Value("x"));
        QCOMPARE(sub.root().find({"slotted", "label"})->value(), Value("s"));
        QCOMPARE(sub.root().find({"plain", "note"})->value(), Value("y"));
        QVERIFY(sub.root().child("view")->isTensor());
        // A bare untyped storage is its bytes, and a uint8 tensor may share
        // it (one key named as two types of byte); a bytearray is bytes.
        const CheckReport bytesCheck = check((dir + "/untyped.pt").toStdString());
        QVERIFY2(bytesCheck.problems.empty(), qPrintable(describeProblems(bytesCheck)));
        const TensorDict untyped = load((dir + "/untyped.pt").toStdString());
        QVERIFY(untyped.root().child("view")->isTensor());
        QCOMPARE(untyped.root().child("ba")->value(), Value(Value::Bytes{"xy"}));
        QCOMPARE(untyped.root().child("e")->value(), Value(Value::Bytes{""}));
        const Node* ust = untyped.root().child("ust");
        QVERIFY(ust && ust->isTensor() && ust->leaf().dtype == DType::UInt8);
        const LeafBytes ustBytes = ust->bytes();
        QCOMPARE(QByteArray(reinterpret_cast<const char*>(ustBytes.data.get()),
                            qsizetype(ustBytes.size)),
                 QByteArray::fromHex("0001020304050607"));
        // A scheduler's bound method holds the scheduler, which holds it
        // again: the loop is a reference to where it is shown.
        const TensorDict sched = load((dir + "/scheduler.pt").toStdString());
        QCOMPARE(sched.root().find({"anneal_func", "args", "0", "anneal_func"})->value(),
                 Value("<the object at anneal_func>"));
    }

    // NumPy arrays in a checkpoint (numpy's own pickles, at protocols 2, 4
    // and 5) are leaves of numpy's values, in C order and little-endian whatever
    // the array's order; arrays of other dtypes stay objects.
    void numpyArraysInCheckpointsAreLeaves() {
        QString dir, error;
        QVERIFY2(objectPickles(&dir, &error), qPrintable(error));
        QFile file(dir + "/numpy.json");
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QJsonObject expected = QJsonDocument::fromJson(file.readAll()).object();
        QCOMPARE(expected.keys(),
                 QStringList({"numpy_arrays.pt", "numpy_arrays_p4.pt", "numpy_arrays_p5.pt"}));
        for (const QString& name : expected.keys()) {
            const std::string path = (dir + "/" + name).toStdString();
            const CheckReport r = check(path);
            QVERIFY2(r.problems.empty(), qPrintable(name + ": " + describeProblems(r)));
            const TensorDict td = load(path);
            const QJsonObject leaves = expected[name].toObject();
            QCOMPARE(leaves.size(), 11);
            for (const QString& key : leaves.keys()) {
                std::vector<std::string> keyPath;
                for (const QString& part : key.split('/'))
                    keyPath.push_back(part.toStdString());
                const Node* n = td.root().find(keyPath);
                QVERIFY2(n && n->isTensor(), qPrintable(name + ": " + key));
                const QJsonObject want = leaves[key].toObject();
                QCOMPARE(QString::fromStdString(std::string(dtypeName(n->leaf().dtype))),
                         want["dtype"].toString());
                QJsonArray shape;
                for (const std::int64_t d : n->leaf().shape)
                    shape.append(qint64(d));
                QCOMPARE(shape, want["shape"].toArray());
                const LeafBytes bytes = n->bytes();
                QCOMPARE(QByteArray(reinterpret_cast<const char*>(bytes.data.get()),
                                    qsizetype(bytes.size))
                             .toHex(),
                         want["hex"].toString().toLatin1());
            }
            for (const char* other : {"strings", "objects", "records"}) {
                QCOMPARE(td.root().child(other)->kind(), NodeKind::Object);
                QCOMPARE(td.root().child(other)->className(), std::string("numpy.ndarray"));
            }
        }
    }

    // NumPy scalars (metrics, a label map's keys) are their numbers, with
    // their NumPy class.
    void numpyScalarsInCheckpointsAreNumbers() {
        QString dir, error;
        QVERIFY2(objectPickles(&dir, &error), qPrintable(error));
        const std::string path = (dir + "/numpy_scalars.pt").toStdString();
        const CheckReport r = check(path);
        QVERIFY2(r.problems.empty(), qPrintable(describeProblems(r)));
        const TensorDict td = load(path);
        for (const auto& [key, className, value] :
             {std::tuple<const char*, const char*, Value>{"metric", "numpy.float64", Value(0.93)},
              {"f32", "numpy.float32", Value(0.25)},
              {"step", "numpy.int64", Value(std::int64_t(-3))},
              {"big", "numpy.uint64", Value::integer("18446744073709551615")},
              {"flag", "numpy.bool_", Value(true)}}) {
            const Node* n = td.root().child(key);
            QVERIFY2(n && n->className() == className, key);
            QVERIFY2(n->value() == value, key);
        }
        const Node* labels = td.root().child("labels");
        QVERIFY(labels && labels->children().size() == 2);
        QCOMPARE(labels->child("1")->value(), Value("dog"));
    }

    // A pickle torch.load cannot load (a damaged call or opcode that
    // swallowed a tensor, an integer tensor that requires grad) is an error
    // naming what is wrong, never silence; a tensor torch keeps where
    // tdstudio does not look (an OrderedDict's attribute) is an unplaced
    // warning that names its storage.
    void tensorsSwallowedByAPickleAreNeverSilent() {
        QString dir, error;
        QVERIFY2(objectPickles(&dir, &error), qPrintable(error));
        for (const auto& [name, reason] :
             {std::pair<QString, QString>{"ordereddict_args.pt",
                                          "collections.OrderedDict called with 7 arguments"},
              {"ordereddict_item.pt", "an item that is not a (key, value) pair"},
              {"build_on_global.pt", "BUILD on a global torch.float32"},
              {"build_on_dict.pt", "BUILD on a dict"},
              {"unhashable_key.pt", "a dict key that holds a list, which Python cannot hash"},
              {"append_to_dict.pt", "APPEND to a dict"},
              {"int_requires_grad.pt", "a torch.int64 tensor that requires grad"},
              {"set_of_list.pt", "a set item that holds a list, which Python cannot hash"},
              {"additems_frozenset.pt", "ADDITEMS to a frozenset"},
              {"call_str.pt", "REDUCE that calls a str"},
              {"args_list.pt", "REDUCE whose arguments are a list, not a tuple"},
              {"build_list_state.pt", "BUILD with a state that is a list, not a dict"},
              {"parameter_int_grad.pt", "a parameter's requires_grad is not a bool"},
              {"bad_utf8_str.pt", "a string that is not UTF-8"},
              {"bad_utf8_global.pt", "a string that is not UTF-8"},
              {"from_type_of_dict.pt",
               "_rebuild_from_type_v2's function made an object of type OrderedDict"},
              {"from_type_str.pt", "_rebuild_from_type_v2's type is a str, not a class"},
              {"numpy_short_data.pt",
               "a NumPy array of shape [2, 3] and dtype torch.float32 "
               "needs 24 bytes of data, and has 20"},
              {"no_version.pt",
               "the checkpoint has no version record (no_version/version), without which "
               "torch.load refuses it"},
              {"version_99.pt",
               "the checkpoint's format version is 99; torch.load reads "
               "versions 1 to 10"},
              {"version_negative.pt",
               "the checkpoint's format version is negative; torch.load reads versions 1 to 10"},
              {"version_huge.pt",
               "the checkpoint's format version is past 64 bits; torch.load reads versions 1 to "
               "10"},
              {"rebuild_misspelled.pt",
               "a tensor made by torch._utils._rebuild_tensOr_v2, "
               "which tdstudio does not know"}}) {
            const CheckReport r = check((dir + "/" + name).toStdString());
            QVERIFY2(r.errorCount() == 1 && r.problems.size() == 1 &&
                         r.problems[0].kind == "unreadable" &&
                         QString::fromStdString(r.problems[0].message).contains(reason),
                     qPrintable(name + ": " + describeProblems(r)));
        }
        // A storage key named again as another type or size: torch.load
        // takes the first naming (and fails on a view past it); the tensor is
        // an error, and the entry its own id named is left over.
        for (const auto& [name, reason] :
             {std::pair<QString, QString>{"key_sizes.pt",
                                          "the view reaches past its storage of 8 bytes"},
              {"key_dtypes.pt",
               "its storage 0 is named a torch.IntStorage of 4 elements here, "
               "and a torch.FloatStorage of 4 elements before"}}) {
            const CheckReport r = check((dir + "/" + name).toStdString());
            const Problem* unplaced = findKind(r, "unplaced");
            QVERIFY2(r.errorCount() == 1 && r.problems.size() == 2 && unplaced &&
                         QString::fromStdString(unplaced->message).contains("storage 1 is"),
                     qPrintable(name + ": " + describeProblems(r)));
            const Problem* wrong = findKind(r, "unreadable");
            QVERIFY2(wrong && wrong->key == std::vector<std::string>{"b"} &&
                         QString::fromStdString(wrong->message).contains(reason),
                     qPrintable(name + ": " + describeProblems(r)));
        }
        const CheckReport r = check((dir + "/attribute.pt").toStdString());
        QVERIFY2(r.problems.size() == 1 && r.problems[0].severity == Severity::Warning &&
                     r.problems[0].kind == "unplaced" &&
                     QString::fromStdString(r.problems[0].message)
                         .contains("storage 1 is in the file but used by no tensor"),
                 qPrintable(describeProblems(r)));
        const CheckReport frame = check((dir + "/frame_length.pt").toStdString());
        QVERIFY2(frame.errorCount() == 1 && findKind(frame, "short_file") &&
                     QString::fromStdString(findKind(frame, "short_file")->message)
                         .contains("the pickle is truncated: a frame of"),
                 qPrintable(describeProblems(frame)));
        // An entry of a storage its pickle never loads: left over, or damage;
        // told beside the tree where the checkpoint is one tensor.
        for (const QString name : {"extra_entry.pt", "tensor_extra_entry.pt"}) {
            const CheckReport extra = check((dir + "/" + name).toStdString());
            QVERIFY2(extra.problems.size() == 1 && extra.problems[0].kind == "unplaced" &&
                         QString::fromStdString(extra.problems[0].message)
                             .contains("storage 9 is in the file but used by no tensor"),
                     qPrintable(name + ": " + describeProblems(extra)));
        }
        const TensorDict td = load((dir + "/attribute.pt").toStdString());
        const Node* unplaced = td.root().child("<storages outside every key>");
        QVERIFY(unplaced && unplaced->isUnread());
        QCOMPARE(unplaced->failure()->kind, ErrorKind::Unplaced);
        QVERIFY(td.root().child("w") && td.root().child("w")->isTensor());
    }

    // A meta.json dtype tensordict cannot load (a quantized one, which
    // torch.uint8 becomes by one flipped bit, at the same size) or no torch
    // has ("torch.flaot32") is an error, never a warning: tdstudio cannot
    // tell it from damage.
    void unknownMetaJsonDTypesStayErrors() {
        const QString base = scratch_.filePath("torch-dtypes");
        save(smallDataset(), base.toStdString());  // a: float32 [8], 32 bytes
        for (const QString dtype : {"torch.qint8", "torch.qint32", "torch.flaot32"}) {
            const QString dir = scratch_.filePath(QString(dtype).remove("torch."));
            QString error;
            QVERIFY2(testsupport::runPython({"-c",
                                             "import sys, json, shutil\n"
                                             "src, dst, dtype = sys.argv[1:4]\n"
                                             "shutil.copytree(src, dst)\n"
                                             "meta = json.load(open(dst + '/meta.json'))\n"
                                             "meta['a']['dtype'] = dtype\n"
                                             "json.dump(meta, open(dst + '/meta.json', 'w'))\n",
                                             base, dir, dtype},
                                            nullptr, &error),
                     qPrintable(error));
            const CheckReport r = check(dir.toStdString());
            QVERIFY2(r.errorCount() == 1 && findKind(r, "unreadable") &&
                         findKind(r, "unreadable")->severity == Severity::Error,
                     qPrintable(dtype + ": " + describeProblems(r)));
        }
    }

    // A memmapped tensordict saved again keeps a NonTensorData's "data" in
    // meta.json and pickles its "_metadata" (a PosixPath) into other.pickle
    // beside it (FORMAT.md 2.4), which Python loads with the node. It is the
    // node's own file, a pickle that needs code: a pickle_sidecar warning,
    // never an orphan to delete; v0.3-0.4's empty _tensordict/ beside a
    // NonTensorData is the node's too. A pickle that holds a "data" of its
    // own is an error: Python shows that value, tdstudio meta.json's.
    void aNonTensorsPickleBesideItsDataIsItsOwn() {
        const QString dir = scratch_.filePath("resaved");
        testsupport::copyTree(testsupport::fixturePath("nontensor_string"), dir);
        QString error;
        const auto pickle = [&](const QString& fields, const QString& file) {
            return testsupport::runPython({"-c",
                                           "import sys, pickle, pathlib\n"
                                           "pickle.dump(" +
                                               fields + ", open(sys.argv[1], 'wb'))\n",
                                           file},
                                          nullptr, &error);
        };
        QVERIFY2(pickle("{'_metadata': {'memmap_prefix': pathlib.PosixPath('/old/place/s'), "
                        "'memmaped': True, '_share_non_tensor': False}}",
                        dir + "/s/other.pickle"),
                 qPrintable(error));
        testsupport::writeFile(
            dir + "/meta/note/_tensordict/meta.json",
            R"({"shape": [], "device": null, "_type": "<class 'tensordict._td.TensorDict'>"})");
        const CheckReport r = check(dir.toStdString());
        QStringList kinds;
        for (const Problem& p : r.problems)
            kinds << QString::fromStdString(p.kind + " " + p.file).remove(dir + "/");
        QCOMPARE(kinds, QStringList{"pickle_sidecar s/other.pickle"});
        const QString message = QString::fromStdString(r.problems[0].message);
        QVERIFY2(message.contains("pathlib.PosixPath") && message.contains("_metadata"),
                 qPrintable(message));
        QCOMPARE(r.problems[0].key, std::vector<std::string>({"s"}));
        QCOMPARE(load(dir.toStdString()).root().child("s")->value(), Value("hello world"));

        // The same file beside a value in meta.json, but holding a value.
        QVERIFY2(pickle("{'data': 'another value'}", dir + "/s/other.pickle"), qPrintable(error));
        const CheckReport shadowed = check(dir.toStdString());
        QVERIFY2(shadowed.errorCount() == 1 && findKind(shadowed, "shadowed_value") &&
                     !findKind(shadowed, "orphan"),
                 qPrintable(describeProblems(shadowed)));

        // A pickle Python fails on, or a _tensordict/meta.json, is an error.
        testsupport::writeFile(dir + "/s/other.pickle", "\x80\x04\x95 cut");
        const CheckReport cut = check(dir.toStdString());
        QVERIFY2(cut.errorCount() == 1 && findKind(cut, "unreadable") &&
                     findKind(cut, "unreadable")->file == (dir + "/s/other.pickle").toStdString(),
                 qPrintable(describeProblems(cut)));
        QVERIFY2(pickle("['not', 'a', 'dict']", dir + "/s/other.pickle"), qPrintable(error));
        QCOMPARE(check(dir.toStdString()).errorCount(), std::size_t(1));
        testsupport::writeFile(dir + "/meta/note/_tensordict/meta.json", "{\"shape\": [");
        const CheckReport badOld = check(dir.toStdString());
        QVERIFY2(badOld.errorCount() == 2 && !findKind(badOld, "orphan"),
                 qPrintable(describeProblems(badOld)));

        // Any other file in its folder is still an orphan.
        QVERIFY(QFile::remove(dir + "/s/other.pickle"));
        QVERIFY(QDir(dir + "/meta/note/_tensordict").removeRecursively());
        QVERIFY2(pickle("{'x': 1}", dir + "/meta/note/extra.pickle"), qPrintable(error));
        const CheckReport stray = check(dir.toStdString());
        QVERIFY2(stray.problems.size() == 1 && findKind(stray, "orphan"),
                 qPrintable(describeProblems(stray)));
    }

    // A torch.save checkpoint written with torch.serialization.
    // set_crc32_options(False) records a CRC-32 of 0 for every entry
    // (inline_container.cc's writeRecord passes 0 to miniz with
    // MZ_ZIP_FLAG_DO_NOT_COMPUTE_CRC32): one no_crc warning, and it loads
    // as the checkpoint with its CRC-32s. One entry's CRC-32 zeroed among
    // real ones is still a crc_mismatch.
    void aTorchCheckpointWithoutCrcsIsOneWarning() {
        const QString dir = scratch_.filePath("nocrc");
        QDir().mkpath(dir);
        QString error;
        QVERIFY2(
            testsupport::runPython(
                {"-c",
                 "import sys, struct, zipfile, torch\n"
                 "d = sys.argv[1]\n"
                 "torch.save({'w': torch.arange(12.0).reshape(3, 4), 'n': 7, 'e': "
                 "torch.zeros(0)},\n"
                 "           d + '/with.pt')\n"
                 "def zeroed(dst, only=None, src='with.pt'):\n"
                 "    b = bytearray(open(d + '/' + src, 'rb').read())\n"
                 "    z = zipfile.ZipFile(d + '/' + src)\n"
                 "    at = z.start_dir\n"
                 "    for i in z.infolist():\n"
                 "        assert b[at:at + 4] == b'PK\\x01\\x02'\n"
                 "        n, m, k = struct.unpack('<HHH', b[at + 28:at + 34])\n"
                 "        if not only or i.filename.endswith(only):\n"
                 "            b[at + 16:at + 20] = bytes(4)\n"
                 "            o = i.header_offset\n"
                 "            name, extra = struct.unpack('<HH', b[o + 26:o + 30])\n"
                 "            end = o + 30 + name + extra + i.compress_size\n"
                 "            if i.flag_bits & 8:  # torch writes no descriptor for empty records\n"
                 "                assert b[end:end + 4] == b'PK\\x07\\x08'\n"
                 "                b[end + 4:end + 8] = bytes(4)\n"
                 "        at += 46 + n + m + k\n"
                 "    open(d + '/' + dst, 'wb').write(b)\n"
                 "zeroed('without.pt')\n"
                 "zeroed('one.pt', only='data/0')\n"
                 "with zipfile.ZipFile(d + '/plain.zip', 'w') as z:\n"
                 "    z.writestr('a/data.bin', b'x' * 100)\n"
                 "    z.writestr('a/meta.json', b'{}')\n"
                 "zeroed('plain0.zip', src='plain.zip')\n"
                 "z = zipfile.ZipFile(d + '/without.pt')\n"
                 "assert all(i.CRC == 0 for i in z.infolist()) and z.testzip() is not None\n",
                 dir},
                nullptr, &error),
            qPrintable(error));
        const CheckReport without = check((dir + "/without.pt").toStdString());
        QVERIFY2(without.problems.size() == 1 && findKind(without, "no_crc") &&
                     findKind(without, "no_crc")->severity == Severity::Warning,
                 qPrintable(describeProblems(without)));
        QVERIFY(compare(load((dir + "/without.pt").toStdString()),
                        load((dir + "/with.pt").toStdString()))
                    .equal());
        QVERIFY(check((dir + "/with.pt").toStdString()).sound());
        const CheckReport one = check((dir + "/one.pt").toStdString());
        QVERIFY2(
            one.errorCount() == 1 && findKind(one, "crc_mismatch") && !findKind(one, "no_crc") &&
                QString::fromStdString(findKind(one, "crc_mismatch")->file).endsWith("data/0") &&
                !findKind(one, "crc_mismatch")->repairable,
            qPrintable(describeProblems(one)));
        // Only torch.save's layout (entries in one folder, with a data.pkl) is
        // taken as written without CRC-32s: any other zip's zeros are damage.
        const CheckReport plain = check((dir + "/plain0.zip").toStdString());
        QVERIFY2(std::count_if(plain.problems.begin(), plain.problems.end(),
                               [](const Problem& p) { return p.kind == "crc_mismatch"; }) == 2 &&
                     !findKind(plain, "no_crc"),
                 qPrintable(describeProblems(plain)));
    }

    // A zero-element leaf has no file, as tensordict writes it and reads it back.
    void zeroElementLeavesNeedNoFile() {
        TensorDict td = TensorDict::create();
        td.mutableRoot().addBytes("empty", DType::Float32, {0, 3},
                                  ownedBytes(std::vector<float>{}));
        td.mutableRoot().addBytes("x", DType::Float32, {2}, ownedBytes(ramp(2)));
        const QString dir = scratch_.filePath("zero");
        save(td, dir.toStdString());
        QVERIFY(!QFile::exists(dir + "/empty.memmap"));
        const CheckReport r = check(dir.toStdString());
        QVERIFY2(r.sound(), qPrintable(describeProblems(r)));
    }

    // An in-place write as Python's "r+" mode makes it: payload bytes patched,
    // the CRC left. Found and named; --repair re-stamps exactly the CRC
    // fields (byte for byte as an independent re-stamp in Python), after
    // which zipfile, unzip and libzip read it cleanly and no leaf changed.
    void anInPlaceWriteIsFoundAndRepaired() {
        const QString dir = scratch_.filePath("clean");
        QDir().mkpath(dir);
        const QString archive = dir + "/rplus.tdz";
        save(smallDataset(), archive.toStdString());
        const qint64 at = payloadOffset(archive, "sub/c.memmap");
        QVERIFY(at > 0);
        QString error;
        QVERIFY2(
            testsupport::runPython(
                {"-c",
                 "import sys, numpy as np\n"
                 "m = np.memmap(sys.argv[1], dtype=np.float32, mode='r+', offset=int(sys.argv[2]),"
                 " shape=(6,))\n"
                 "m[2] = 42.5; m.flush()\n",
                 archive, QString::number(at)},
                nullptr, &error),
            qPrintable(error));
        const QMap<QString, QString> written = leafHashes(archive);
        const QByteArray before = fileBytes(archive);

        // Checked and repaired through a link, with its own permissions.
        QVERIFY(QFile::setPermissions(archive,
                                      QFile::ReadOwner | QFile::WriteOwner | QFile::ReadGroup));
        const QString link = dir + "/../rplus-link.tdz";
        QVERIFY(QFile::link(archive, link));
        const CheckReport r = check(link.toStdString());
        QCOMPARE(int(r.errorCount()), 1);
        const Problem* p = findKind(r, "crc_mismatch");
        QVERIFY2(p, qPrintable(describeProblems(r)));
        QCOMPARE(QString::fromStdString(p->file), link + ":sub/c.memmap");
        QCOMPARE(p->key, (std::vector<std::string>{"sub", "c"}));
        QVERIFY(p->repairable);

        // A dry run says what it would do and changes nothing.
        RepairOptions dry;
        dry.dryRun = true;
        const RepairReport plan = repair(r, dry);
        QCOMPARE(int(plan.done.size()), 1);
        QVERIFY(
            QString::fromStdString(plan.done.front()).startsWith("would re-stamp the CRC-32 of "));
        QCOMPARE(fileBytes(archive), before);

        // Refused while another process holds the archive (an r+ writer's later
        // writes would be lost): nothing changes.
        {
            QProcess writer;
            writer.start("sh", {"-c", "exec 3<>\"$0\"; echo held; exec sleep 120", archive});
            QVERIFY(writer.waitForReadyRead(10000));
            QVERIFY_THROWS_EXCEPTION(Error, repair(r));
            writer.kill();
            writer.waitForFinished();
            QCOMPARE(fileBytes(archive), before);
        }
        const RepairReport done = repair(r);
        QCOMPARE(int(done.done.size()), 1);
        QVERIFY(done.left.empty());
        QVERIFY(QFileInfo(link).isSymLink());  // the link stays; its target is repaired
        QCOMPARE(QFileInfo(archive).permissions() & 0x7777,
                 (QFile::ReadOwner | QFile::WriteOwner | QFile::ReadGroup | QFile::ReadUser |
                  QFile::WriteUser) &
                     0x7777);
        const CheckReport after = check(archive.toStdString());
        QVERIFY2(after.sound(), qPrintable(describeProblems(after)));
        QCOMPARE(leafHashes(archive), written);  // no tensor byte changed

        // Byte for byte what an independent re-stamp of the patched archive gives.
        const QString original = dir + "/../rplus-before.tdz";
        const QString expected = dir + "/../rplus-expected.tdz";
        testsupport::writeFile(original, before);
        QVERIFY2(testsupport::runPython(
                     {TDSTUDIO_TEST_SUPPORT_DIR "/restamp_crcs.py", original, expected}, nullptr,
                     &error),
                 qPrintable(error));
        const QByteArray repaired = fileBytes(archive);
        QCOMPARE(repaired.size(), before.size());
        QVERIFY(repaired == fileBytes(expected));
        int changed = 0;
        for (qsizetype i = 0; i < repaired.size(); ++i)
            changed += repaired[i] != before[i];
        QVERIFY(changed > 0 && changed <= 8);  // two CRC fields at most

        // Independent readers: Python's testzip(), unzip -t, libzip.
        QString out;
        QVERIFY2(testsupport::runPython({"-c",
                                         "import sys, zipfile\n"
                                         "print(zipfile.ZipFile(sys.argv[1]).testzip())\n",
                                         archive},
                                        &out, &error),
                 qPrintable(error));
        QCOMPARE(out.trimmed(), QString("None"));
        QProcess unzip;
        unzip.start("unzip", {"-tq", archive});
        QVERIFY(unzip.waitForFinished(30000));
        QCOMPARE(unzip.exitCode(), 0);
        const testsupport::LibzipReading libzip = testsupport::readWithLibzip(archive);
        QVERIFY2(libzip.error.isEmpty(), qPrintable(libzip.error));
        QCOMPARE(libzip.read, libzip.entries);
    }

    // Stale temporaries are deleted by a repair; one another process holds
    // open, a recent one, a hidden folder that only looks like tensordict's
    // staging and another dataset's temporary are not.
    void staleTemporariesAreDeletedUnlessInUse() {
        const QString s = scratch_.filePath("temps");
        QVERIFY(QDir().mkpath(s));
        save(smallDataset(), (s + "/ds.tdz").toStdString());
        testsupport::writeFile(s + "/.ds.tdz.tdstudio-00c0ffee", "partial");
        testsupport::writeFile(s + "/.ds.tdz.k2x9_q4a/meta.json", "{}");  // tensordict's staging
        testsupport::writeFile(s + "/.ds.tdz.tdstudio-0000beef", "being written");
        testsupport::writeFile(s + "/.ds.tdz.backup_1/notes.txt", "someone's own folder");
        testsupport::writeFile(s + "/.other.tdz.tdstudio-00c0ffee", "not ours to judge");
        for (const char* old : {"/.ds.tdz.tdstudio-00c0ffee", "/.ds.tdz.k2x9_q4a",
                                "/.ds.tdz.tdstudio-0000beef", "/.ds.tdz.backup_1"})
            QVERIFY(testsupport::ageFiles(s + old) && setOld(s + old));
        testsupport::writeFile(s + "/.ds.tdz.tdstudio-0f0e5100", "a save going on");
        // Another process holds one open: a save still running.
        QProcess holder;
        holder.start("sh", {"-c", "exec 3<\"$0\"; echo held; exec sleep 120",
                            s + "/.ds.tdz.tdstudio-0000beef"});
        QVERIFY(holder.waitForReadyRead(10000));
        const auto stop = qScopeGuard([&holder] {
            holder.kill();
            holder.waitForFinished();
        });

        const CheckReport r = check((s + "/ds.tdz").toStdString());
        QCOMPARE(int(r.problems.size()), 4);
        for (const Problem& p : r.problems) {
            QCOMPARE(p.kind, std::string("stale_temporary"));
            const bool repairable = p.file.find("00c0ffee") != std::string::npos ||
                                    p.file.find("k2x9_q4a") != std::string::npos;
            QVERIFY2(p.repairable == repairable, p.file.c_str());
        }
        QVERIFY(describeProblems(r).contains("still open in a running process"));
        QVERIFY(describeProblems(r).contains("too recent"));
        const RepairReport done = repair(r);
        QCOMPARE(int(done.done.size()), 2);
        QCOMPARE(int(done.left.size()), 2);
        QVERIFY(!QFile::exists(s + "/.ds.tdz.tdstudio-00c0ffee"));
        QVERIFY(!QFile::exists(s + "/.ds.tdz.k2x9_q4a"));
        QVERIFY(QFile::exists(s + "/.ds.tdz.tdstudio-0000beef"));
        QVERIFY(QFile::exists(s + "/.ds.tdz.tdstudio-0f0e5100"));
        QVERIFY(QFile::exists(s + "/.ds.tdz.backup_1/notes.txt"));
        QVERIFY(QFile::exists(s + "/.other.tdz.tdstudio-00c0ffee"));
        QVERIFY(QFile::exists(s + "/ds.tdz"));
    }

    // The data pass: stored entries larger than a chunk are checksummed in
    // pieces on several threads and combined, found damaged in any piece;
    // progress reaches the total; a cancel stops it.
    void largeEntriesOnSeveralThreads() {
        const QString archive = scratch_.filePath("large.tdz");
        const int n = 20 << 20;  // 80 MiB: three chunks
        TensorDict td = TensorDict::create();
        td.mutableRoot().addBytes("x", DType::Float32, {n}, ownedBytes(ramp(n)));
        save(td, archive.toStdString());
        for (const int threads : {1, 2}) {
            CheckOptions options;
            options.threads = threads;
            std::uint64_t last = 0, total = 0;
            options.progress = [&](const CheckProgress& p) {
                last = std::max(last, p.bytesDone);
                total = p.bytesTotal;
            };
            const CheckReport r = check(archive.toStdString(), options);
            QVERIFY2(r.sound(), qPrintable(describeProblems(r)));
            QVERIFY(r.bytes >= std::uint64_t(n) * 4);
            QCOMPARE(last, total);
        }
        flipByte(archive, payloadOffset(archive, "x.memmap") + (70ll << 20));  // the third chunk
        CheckOptions two;
        two.threads = 2;
        QVERIFY(findKind(check(archive.toStdString(), two), "crc_mismatch"));

        CheckOptions cancelled;
        cancelled.progress = [&](const CheckProgress&) { cancelled.cancel.cancel(); };
        const CheckReport stopped = check(archive.toStdString(), cancelled);
        QVERIFY(stopped.cancelled);
        QVERIFY(!stopped.sound());
    }

    // What cannot be checked at all throws, naming it.
    void whatCannotBeCheckedThrows() {
        QVERIFY_THROWS_EXCEPTION(Error, check(scratch_.filePath("nothing-here").toStdString()));
        const QString text = scratch_.filePath("notes.txt");
        testsupport::writeFile(text, "hello");
        QVERIFY_THROWS_EXCEPTION(Error, check(text.toStdString()));
        QDir().mkpath(scratch_.filePath("plain-folder"));
        testsupport::writeFile(scratch_.filePath("plain-folder/readme"), "x");
        QVERIFY_THROWS_EXCEPTION(Error, check(scratch_.filePath("plain-folder").toStdString()));
        // A damaged archive can be checked: its central directory is the problem.
        const QString truncated = scratch_.filePath("truncated.tdz");
        save(smallDataset(), truncated.toStdString());
        QVERIFY(QFile::resize(truncated, QFileInfo(truncated).size() - 10));
        const CheckReport r = check(truncated.toStdString());
        QVERIFY2(findKind(r, "central_directory"), qPrintable(describeProblems(r)));
    }

private:
    // Dates a file or folder two hours back (ageFiles dates what is inside a folder).
    static bool setOld(const QString& path) {
        struct utimbuf times {};
        times.actime = times.modtime =
            static_cast<time_t>(QDateTime::currentDateTime().addSecs(-2 * 3600).toSecsSinceEpoch());
        return ::utime(QFile::encodeName(path).constData(), &times) == 0;
    }

    static void flipByte(const QString& path, qint64 offset) {
        QFile f(path);
        QVERIFY(offset >= 0 && f.open(QIODevice::ReadWrite));
        QVERIFY(f.seek(offset));
        char c = 0;
        QVERIFY(f.getChar(&c));
        QVERIFY(f.seek(offset));
        QVERIFY(f.putChar(static_cast<char>(c ^ 0x5a)));
    }

    QTemporaryDir scratch_;
};

QTEST_MAIN(CheckTest)
#include "tst_check.moc"
