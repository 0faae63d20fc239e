// torch.distributed.checkpoint directories: written by tests/support/make_dcp.py
// as torch 2.x's dcp.save writes them (one rank; four ranks with row-wise,
// uneven, column-wise and empty chunks, a replicated tensor and optimizer
// state; torch 2.1 and 2.7 chunk streams; the torch <= 2.3 metadata; zstd
// streams; the safetensors serialization of torch 2.8+), with
// each global tensor's sha256 computed by numpy from the arrays it saved.
// Every tensor reads exactly, from disk, through a transport that cannot
// map and over nginx (which is asked for no tensor's bytes until read);
// byte items read as their values; damaged checkpoints are named by
// --check; hostile metadata runs nothing.

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>

#include "memory_transport.h"
#include "nginx_server.h"
#include "tensordict/check.h"
#include "tensordict/error.h"
#include "tensordict/report.h"
#include "tensordict/save.h"
#include "tensordict/store.h"
#include "tensordict/tensordict.h"
#include "testsupport.h"

using namespace tensordict;

namespace {

std::vector<std::string> pathOf(const QJsonValue& v) {
    std::vector<std::string> path;
    for (const auto e : v.toArray())
        path.push_back(e.isString() ? e.toString().toStdString() : std::to_string(e.toInteger()));
    return path;
}

const Node* find(const TensorDict& td, const std::vector<std::string>& path) {
    const Node* n = &td.root();
    for (const std::string& key : path) {
        n = n->child(key);
        if (!n)
            return nullptr;
    }
    return n;
}

QJsonValue jsonOf(const Value& v) {
    return QJsonDocument::fromJson(("[" + toJson(v) + "]").c_str()).array().at(0);
}

// "error kind file" for each problem, the file named from the checkpoint's folder on.
QStringList problems(const CheckReport& r) {
    QStringList out;
    for (const Problem& p : r.problems) {
        QString file = QString::fromStdString(p.file);
        if (file.startsWith(QString::fromStdString(r.path)))
            file = file.mid(qsizetype(r.path.size()));
        if (file.startsWith('/'))
            file = file.mid(1);
        out << QString("%1 %2 %3")
                   .arg(p.severity == Severity::Error ? "error" : "warning",
                        QString::fromStdString(p.kind), file);
    }
    return out;
}

}  // namespace

class DcpTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(scratch_.isValid());
        marker_ = scratch_.filePath("marker");
        QString out, error;
        QVERIFY2(testsupport::runPython({TDSTUDIO_TEST_SUPPORT_DIR "/make_dcp.py",
                                         scratch_.filePath("dcp"), "--marker", marker_},
                                        &out, &error),
                 qPrintable(error));
        fixtures_ = QJsonDocument::fromJson(out.toUtf8()).object()["fixtures"].toObject();
        QVERIFY(fixtures_.contains("four_ranks"));
        QCOMPARE(fixtures_["four_ranks"].toObject()["world_size"].toInt(), 4);
        registerTransport(memory_);
    }

    void everyTensorAndValueReadsExactly_data() {
        QTest::addColumn<QString>("fixture");
        QTest::addColumn<QString>("location");
        for (const QString name : {"one_rank", "torch21", "torch27", "torch27_nocrc", "four_ranks",
                                   "legacy_v23", "zstd", "zstd_raw", "zstd_rot13",
                                   "four_ranks_zstd", "safetensors", "four_ranks_safetensors"}) {
            const QString dir = scratch_.filePath("dcp/" + name);
            QTest::newRow(qPrintable(name + "/folder")) << name << dir;
            QTest::newRow(qPrintable(name + "/.metadata")) << name << dir + "/.metadata";
            // The same files served by range only: chunks are read, never mapped.
            for (const QString& file : QDir(dir).entryList(QDir::Files | QDir::Hidden)) {
                QFile f(dir + "/" + file);
                QVERIFY(f.open(QIODevice::ReadOnly));
                memory_->add("mem://" + name + "/" + file, f.readAll());
            }
            QTest::newRow(qPrintable(name + "/unmapped")) << name << "mem://" + name + "/.metadata";
        }
    }

    void everyTensorAndValueReadsExactly() {
        QFETCH(QString, fixture);
        QFETCH(QString, location);
        const TensorDict td = load(location.toStdString());
        QCOMPARE(QString::fromStdString(td.format()), QString("dcp"));
        checkAgainstExpected(td, fixtures_[fixture].toObject());
    }

    // The details give each chunk's file, bytes and block of the tensor
    // (and the transforms its stream was written through).
    void detailsShowTheChunks_data() {
        QTest::addColumn<QString>("fixture");
        QTest::newRow("four_ranks") << "four_ranks";
        QTest::newRow("four_ranks_zstd") << "four_ranks_zstd";
        QTest::newRow("four_ranks_safetensors") << "four_ranks_safetensors";
    }
    void detailsShowTheChunks() {
        QFETCH(QString, fixture);
        const QJsonObject expected = fixtures_[fixture].toObject();
        const TensorDict td = load(scratch_.filePath("dcp/" + fixture).toStdString());
        const QJsonObject tensors = expected["tensors"].toObject();
        int multi = 0;
        for (auto it = tensors.begin(); it != tensors.end(); ++it) {
            const Node* n = find(td, pathOf(it.value().toObject()["path"]));
            QVERIFY2(n && n->isTensor(), qPrintable(it.key()));
            QJsonArray chunks;
            for (const NodeProperty& p : nodeProperties(*n))
                if (p.name == "chunks")
                    chunks = jsonOf(p.value).toArray();
            QCOMPARE(chunks, it.value().toObject()["chunks"].toArray());
            multi += chunks.size() > 1;
        }
        QVERIFY(multi >= 4);  // row-wise, uneven, column-wise, empty tail
        // A listing's line names no one file for a tensor in chunks.
        QCOMPARE(testsupport::listingPropertiesMismatch(td.root()), QString());
    }

    // Any range of a tensor gathered from its chunks is that range of the whole.
    void rangesGatherFromTheirChunks() {
        const TensorDict td = load(scratch_.filePath("dcp/four_ranks").toStdString());
        QRandomGenerator random(3);
        for (const char* key : {"layers.1.w_col", "layers.0.w_uneven", "layers.1.w_empty_tail"}) {
            const Node* n = td.root().child("model")->child(key);
            QVERIFY(n && n->isTensor());
            const LeafBytes whole = n->bytes();
            QCOMPARE(std::uint64_t(whole.size), n->leaf().nbytes);
            for (int i = 0; i < 50; ++i) {
                const std::uint64_t from = random.bounded(quint64(whole.size));
                const std::uint64_t length = 1 + random.bounded(quint64(whole.size - from));
                const LeafBytes part = n->bytesRange(from, length);
                QVERIFY2(std::memcmp(part.data.get(), whole.data.get() + from, length) == 0,
                         qPrintable(QString("%1 bytes %2+%3").arg(key).arg(from).arg(length)));
            }
        }
    }

    // Over HTTP: the URL of .metadata; byte items are fetched (they are
    // values in the tree), tensors' chunks only when read.
    void overHttpTensorsAreFetchedWhenRead() {
        const QString dir = scratch_.filePath("dcp/four_ranks");
        testsupport::NginxServer server(dir);
        QVERIFY2(server.isRunning(), qPrintable(server.error()));
        const TensorDict td = load((server.url() + "/.metadata").toStdString());
        // Files that hold only tensors' chunks are not asked for. nginx logs
        // a request after answering it: first wait for the files with values.
        QSet<QString> withValues;
        const QJsonObject values = fixtures_["four_ranks"].toObject()["bytes"].toObject();
        for (const auto v : values)
            withValues.insert(v.toObject()["file"].toString());
        QVERIFY(!withValues.isEmpty());
        const auto valuesLogged = [&] {
            const QStringList requests = server.requests();
            return std::all_of(withValues.begin(), withValues.end(), [&](const QString& file) {
                return !requests.filter(" /" + file).isEmpty();
            });
        };
        QTRY_VERIFY_WITH_TIMEOUT(valuesLogged(), 60000);
        int untouched = 0;
        for (const QString& file : QDir(dir).entryList({"*.distcp"}))
            if (!withValues.contains(file)) {
                QVERIFY2(server.requests().filter(" /" + file).isEmpty(),
                         qPrintable(server.requests().join("; ")));
                ++untouched;
            }
        QVERIFY(untouched >= 2);
        checkAgainstExpected(td, fixtures_["four_ranks"].toObject());
    }

    // A checkpoint saves to a .tdz that reads back with the same values.
    void aCheckpointSavesToAnArchive() {
        const QString tdz = scratch_.filePath("four_ranks.tdz");
        save(load(scratch_.filePath("dcp/four_ranks").toStdString()), tdz.toStdString());
        const TensorDict copy = load(tdz.toStdString());
        QCOMPARE(QString::fromStdString(copy.format()), QString("archive"));
        checkAgainstExpected(copy, fixtures_["four_ranks"].toObject());
    }

    // --check: sound as written; each damage named with its file and tensor.
    void checkNamesEachDamage_data() {
        QTest::addColumn<QString>("fixture");
        QTest::addColumn<QStringList>("expected");
        QTest::addColumn<QString>("key");
        QTest::newRow("gap") << "gap" << QStringList{"error chunks :model.layers.0.w_uneven"}
                             << "layers.0.w_uneven";
        QTest::newRow("overlap") << "overlap"
                                 << QStringList{"error chunks :model.layers.0.w_uneven"}
                                 << "layers.0.w_uneven";
        QTest::newRow("missing file")
            << "missing_distcp" << QStringList{"error missing_file __2_0.distcp"} << "";
        // The stream that holds the flipped byte.
        const QJsonObject badCrc = fixtures_["bad_crc"].toObject();
        const QJsonObject corrupted = badCrc["corrupted"].toObject();
        const QJsonObject tensor =
            badCrc["tensors"].toObject()[corrupted["fqn"].toString()].toObject();
        const QJsonObject chunk = tensor["chunks"].toArray().at(0).toObject();
        QVERIFY(chunk["offset"].toInteger() < corrupted["file_offset"].toInteger() &&
                corrupted["file_offset"].toInteger() <
                    chunk["offset"].toInteger() + chunk["length"].toInteger());
        QTest::newRow("bad crc") << "bad_crc"
                                 << QStringList{QString("error crc_mismatch %1@%2:archive/data/0")
                                                    .arg(chunk["file"].toString())
                                                    .arg(chunk["offset"].toInteger())}
                                 << pathOf(tensor["path"]).back().c_str();
    }

    void checkNamesEachDamage() {
        QFETCH(QString, fixture);
        QFETCH(QStringList, expected);
        QFETCH(QString, key);
        const CheckReport sound = check(scratch_.filePath("dcp/four_ranks").toStdString());
        QVERIFY2(sound.sound(), qPrintable(problems(sound).join("; ")));
        QCOMPARE(QString::fromStdString(sound.format), QString("dcp"));

        const CheckReport report = check(scratch_.filePath("dcp/" + fixture).toStdString());
        QCOMPARE(problems(report), expected);
        QCOMPARE(report.errorCount(), std::size_t(1));
        if (!key.isEmpty())
            QCOMPARE(QString::fromStdString(report.problems[0].key.back()), key);
        if (fixture == "missing_distcp")  // the message names the tensors it held
            QVERIFY2(report.problems[0].message.find("model.") != std::string::npos,
                     report.problems[0].message.c_str());
    }

    // torch.serialization.set_crc32_options(False) (torchforge sets it)
    // writes streams whose entries all record a CRC-32 of 0: one no_crc
    // warning for the checkpoint, not an error for every entry. The same
    // streams with their CRC-32s read as before.
    void aCheckpointWithoutCrcsIsOneWarning() {
        const CheckReport noCrcs = check(scratch_.filePath("dcp/torch27_nocrc").toStdString());
        QCOMPARE(problems(noCrcs), QStringList{"warning no_crc "});
        QVERIFY(noCrcs.bytes > 0);
        const CheckReport withCrcs = check(scratch_.filePath("dcp/torch27").toStdString());
        QVERIFY2(withCrcs.sound(), qPrintable(problems(withCrcs).join("; ")));

        // One record's CRC-32 zeroed (in the central directory and the data
        // descriptor, as miniz leaves them) among records that keep theirs:
        // damage, not a checkpoint written without CRC-32s.
        const QString oneZeroed = scratch_.filePath("dcp-one-zeroed");
        testsupport::copyTree(scratch_.filePath("dcp/torch27"), oneZeroed);
        QString error;
        QVERIFY2(testsupport::runPython(
                     {"-c",
                      "import struct, sys\n"
                      "path = sys.argv[1] + '/__0_0.distcp'\n"
                      "b = bytearray(open(path, 'rb').read())\n"
                      "assert b[:4] == b'PK\\x03\\x04'  # the first stream starts the file\n"
                      "at = b.find(b'PK\\x01\\x02')  # its first record's central entry\n"
                      "flags, = struct.unpack('<H', b[at + 8:at + 10])\n"
                      "size, = struct.unpack('<I', b[at + 20:at + 24])\n"
                      "local, = struct.unpack('<I', b[at + 42:at + 46])\n"
                      "n, m = struct.unpack('<HH', b[local + 26:local + 30])\n"
                      "end = local + 30 + n + m + size\n"
                      "assert flags & 8 and b[end:end + 4] == b'PK\\x07\\x08'\n"
                      "assert b[at + 16:at + 20] == b[end + 4:end + 8] != bytes(4)\n"
                      "b[at + 16:at + 20] = b[end + 4:end + 8] = bytes(4)\n"
                      "open(path, 'wb').write(b)\n",
                      oneZeroed},
                     nullptr, &error),
                 qPrintable(error));
        const CheckReport one = check(oneZeroed.toStdString());
        QCOMPARE(problems(one), QStringList{"error crc_mismatch __0_0.distcp@0:archive/data.pkl"});
    }

    // A .metadata that would run code (os.system, getattr beyond the one
    // enum DCP pickles, __import__) is refused by name; nothing runs.
    void hostileMetadataRunsNothing_data() {
        QTest::addColumn<QString>("fixture");
        QTest::addColumn<QString>("named");
        QTest::newRow("os.system") << "hostile"
                                   << "os.system";
        QTest::newRow("getattr of a path") << "hostile_getattr"
                                           << "builtins.getattr";
        QTest::newRow("__import__") << "hostile_getattr_os"
                                    << "builtins.__import__";
    }

    void hostileMetadataRunsNothing() {
        QFETCH(QString, fixture);
        QFETCH(QString, named);
        try {
            load(scratch_.filePath("dcp/" + fixture).toStdString());
            QFAIL("hostile metadata was opened");
        } catch (const Error& e) {
            QCOMPARE(e.failure().kind, ErrorKind::Unsupported);
            QVERIFY2(e.failure().where.find(".metadata") != std::string::npos, e.what());
            QVERIFY2(e.failure().reason.find(named.toStdString()) != std::string::npos, e.what());
        }
        QVERIFY(!QFile::exists(marker_));
    }

    // Streams written through a transform no reader here knows are named
    // as such, each tensor and value its own error; the tree's shape still shows.
    void unknownTransformsAreNamed() {
        const TensorDict td = load(scratch_.filePath("dcp/unknown_transform").toStdString());
        const QJsonObject fixture = fixtures_["unknown_transform"].toObject();
        for (const QString part : {"tensors", "bytes"}) {
            const QJsonObject items = fixture[part].toObject();
            QVERIFY(!items.isEmpty());
            for (auto it = items.begin(); it != items.end(); ++it) {
                const Node* n = find(td, pathOf(it.value().toObject()["path"]));
                QVERIFY2(n && n->isError(), qPrintable(it.key()));
                QCOMPARE(n->failure()->kind, ErrorKind::Unsupported);
                QVERIFY2(n->failure()->reason.find("stream.lz4/1") != std::string::npos,
                         n->failure()->reason.c_str());
            }
        }
    }

    // A tensor whose chunk stream the file spoils is decoded once: the
    // failure is kept, and the next read (or a thread that waited for the
    // first) gets it without reading the stream again.
    void aSpoiledChunkIsDecodedOnce() {
        const QJsonObject fixture = fixtures_["four_ranks_zstd"].toObject();
        const QJsonObject victim = fixture["tensors"].toObject().begin().value().toObject();
        const QJsonObject chunk = victim["chunks"].toArray().at(0).toObject();
        const QString source = scratch_.filePath("dcp/four_ranks_zstd");
        for (const QString& file : QDir(source).entryList(QDir::Files | QDir::Hidden)) {
            QFile f(source + "/" + file);
            QVERIFY(f.open(QIODevice::ReadOnly));
            QByteArray bytes = f.readAll();
            // The first block header past the frame's 6-byte header: a
            // block type and size that cannot be.
            if (file == chunk["file"].toString())
                bytes.replace(chunk["offset"].toInt() + 6, 3, QByteArray("\xff\xff\xff", 3));
            memory_->add("mem://spoiled/" + file, bytes);
        }
        const QString spoiled = "mem://spoiled/" + chunk["file"].toString();
        const TensorDict td = load("mem://spoiled/.metadata");
        const Node* n = find(td, pathOf(victim["path"]));
        QVERIFY(n);
        const std::uint64_t before = memory_->bytesRead(spoiled);
        const Failure first = failureOfReading(*n);
        QCOMPARE(first.kind, ErrorKind::Corrupt);
        const std::string place =
            chunk["file"].toString().toStdString() + "@" + std::to_string(chunk["offset"].toInt());
        QVERIFY2(first.text().find(place) != std::string::npos, first.text().c_str());
        const std::uint64_t decoding = memory_->bytesRead(spoiled) - before;
        QVERIFY(decoding > 0);
        const Failure again = failureOfReading(*n);
        QCOMPARE(memory_->bytesRead(spoiled) - before, decoding);
        QCOMPARE(again.kind, first.kind);
        QCOMPARE(again.where, first.where);
        QCOMPARE(again.reason, first.reason);
    }

    // Compressed streams are checked as what they decode to; a damaged
    // frame is named by its file and place, and never crashes a reader.
    void compressedStreamsAreCheckedAndDamageIsNamed() {
        const CheckReport sound = check(scratch_.filePath("dcp/four_ranks_zstd").toStdString());
        QVERIFY2(sound.sound(), qPrintable(problems(sound).join("; ")));

        const QJsonObject fixture = fixtures_["four_ranks_zstd"].toObject();
        const QJsonObject tensors = fixture["tensors"].toObject();
        const QJsonObject victim = tensors.begin().value().toObject();
        const QJsonObject chunk = victim["chunks"].toArray().at(0).toObject();
        const QString dir = scratch_.filePath("dcp/damaged_zstd");
        QVERIFY(QDir().mkpath(dir));
        const QString source = scratch_.filePath("dcp/four_ranks_zstd");
        for (const QString& file : QDir(source).entryList(QDir::Files | QDir::Hidden))
            QVERIFY(QFile::copy(source + "/" + file, dir + "/" + file));
        // The frame's block header, past the 6-byte frame header: a block
        // type or size that cannot be.
        QFile f(dir + "/" + chunk["file"].toString());
        QVERIFY(f.open(QIODevice::ReadWrite));
        const qint64 at = chunk["offset"].toInteger() + 6;
        QVERIFY(f.seek(at));
        QVERIFY(f.write(QByteArray("\xff\xff\xff", 3)) == 3);
        f.close();

        const TensorDict td = load(dir.toStdString());
        const Node* n = find(td, pathOf(victim["path"]));
        QVERIFY(n);
        const Failure damaged = failureOfReading(*n);
        const std::string reason = damaged.text();
        QVERIFY2(reason.find(chunk["file"].toString().toStdString() + "@" +
                             std::to_string(chunk["offset"].toInteger())) != std::string::npos,
                 reason.c_str());
        const CheckReport report = check(dir.toStdString());
        QVERIFY2(report.errorCount() >= 1, qPrintable(problems(report).join("; ")));

        // A frame that would decode to far more than its chunk can hold (RLE
        // blocks: 4 bytes for each 128 KiB) is refused before it is held.
        QVERIFY(f.open(QIODevice::ReadWrite));
        QByteArray bomb("\x28\xb5\x2f\xfd\x00\x38", 6);  // no content size, 128 KiB window
        for (int i = 0; i < 40; ++i) {                   // 5 MiB of zeros
            const quint32 header = (i == 39 ? 1u : 0u) | (1u << 1) | ((128u << 10) << 3);
            bomb.append(char(header & 0xff)).append(char(header >> 8 & 0xff));
            bomb.append(char(header >> 16 & 0xff)).append('\0');
        }
        QVERIFY(bomb.size() < chunk["length"].toInteger());
        QVERIFY(f.seek(chunk["offset"].toInteger()));
        QVERIFY(f.write(bomb) == bomb.size());
        f.close();
        const TensorDict bombed = load(dir.toStdString());
        const Node* b = find(bombed, pathOf(victim["path"]));
        QVERIFY(b);
        const Failure refused = failureOfReading(*b);
        QCOMPARE(refused.kind, ErrorKind::Corrupt);
        const std::string why = refused.text();
        QVERIFY2(why.find("more than the") != std::string::npos, why.c_str());
    }

    // serialization_format=SAFETENSORS: each rank's tensors are one
    // safetensors data at the end of its file. Sound as written, read over
    // nginx (one file's header serves all its chunks) and converted to one
    // .safetensors file; a header that lost a tensor, a DCP_SHARDING_INFO
    // that places a chunk elsewhere and a cut file are each named by the
    // chunk's FILE@OFFSET and make --check fail.
    void safetensorsChunksAreReadCheckedAndConverted() {
        const QString source = scratch_.filePath("dcp/four_ranks_safetensors");
        const QJsonObject fixture = fixtures_["four_ranks_safetensors"].toObject();
        const CheckReport sound = check(source.toStdString());
        QVERIFY2(sound.sound(), qPrintable(problems(sound).join("; ")));
        {
            testsupport::NginxServer server(source);
            QVERIFY2(server.isRunning(), qPrintable(server.error()));
            checkAgainstExpected(load((server.url() + "/.metadata").toStdString()), fixture);
        }
        const QString converted = scratch_.filePath("four_ranks_safetensors.safetensors");
        save(load(source.toStdString()), converted.toStdString());
        const TensorDict copy = load(converted.toStdString());
        QCOMPARE(QString::fromStdString(copy.format()), QString("safetensors"));
        const QJsonObject tensors = fixture["tensors"].toObject();
        for (auto it = tensors.begin(); it != tensors.end(); ++it) {
            const Node* n = copy.root().child(it.key().toStdString());  // flat dotted keys
            QJsonObject e = it.value().toObject();
            const QString mismatch = testsupport::leafMismatch(n, e);
            QVERIFY2(mismatch.isEmpty(), qPrintable(it.key() + ": " + mismatch));
        }

        // The chunk to damage: rank 1's part of a row-wise tensor.
        const QJsonObject victim = tensors["model.layers.0.w_row"].toObject();
        const QJsonObject chunk = victim["chunks"].toArray().at(1).toObject();
        const QString file = chunk["file"].toString();
        const QString place = QString("%1@%2").arg(file).arg(chunk["offset"].toInteger());
        const auto damaged = [&](const QString& name, const std::string& why, auto damage) {
            const QString dir = scratch_.filePath("dcp/" + name);
            QDir(dir).removeRecursively();
            QVERIFY(QDir().mkpath(dir));
            for (const QString& f : QDir(source).entryList(QDir::Files | QDir::Hidden))
                QVERIFY(QFile::copy(source + "/" + f, dir + "/" + f));
            QFile f(dir + "/" + file);
            QVERIFY(f.open(QIODevice::ReadWrite));
            QByteArray bytes = f.readAll();
            damage(bytes);
            QVERIFY(f.resize(0) && f.seek(0) && f.write(bytes) == bytes.size());
            f.close();
            const TensorDict td = load(dir.toStdString());
            const Node* n = find(td, pathOf(victim["path"]));
            QVERIFY(n);
            const Failure failure = failureOfReading(*n);
            QVERIFY2(failure.where.find(place.toStdString()) != std::string::npos,
                     failure.text().c_str());
            QVERIFY2(failure.reason.find(why) != std::string::npos, failure.text().c_str());
            const CheckReport report = check(dir.toStdString());
            QVERIFY2(!report.sound() && report.errorCount() >= 1,
                     qPrintable(problems(report).join("; ")));
        };
        const qint64 at = chunk["offset"].toInteger();
        // The tensor's name in the header, renamed (same length: the layout holds).
        damaged("st_renamed", "holds no tensor", [&](QByteArray& b) {
            const qint64 key = b.indexOf("\"model.layers.0.w_row\":{", at);
            QVERIFY(key > at);
            b[key + 1] = 'M';
        });
        // DCP_SHARDING_INFO puts the chunk at row 4 (the metadata: row 2).
        damaged("st_sharding", "DCP_SHARDING_INFO places", [&](QByteArray& b) {
            const QByteArray was = "\\\"model.layers.0.w_row\\\": {\\\"saved_offsets\\\": [2, 0]";
            const qint64 i = b.indexOf(was, at);
            QVERIFY2(i > at, b.mid(at, 300).constData());
            b[i + was.size() - 5] = '4';  // the row of "[2, 0]"
        });
        // DCP_SHARDING_INFO is JSON null (blanks keep the layout): it places nothing.
        damaged("st_sharding_null", "DCP_SHARDING_INFO places", [&](QByteArray& b) {
            const QByteArray name = "\"DCP_SHARDING_INFO\":\"";
            const qint64 begin = b.indexOf(name, at) + name.size();
            qint64 end = begin;
            while (end < b.size() && !(b[end] == '"' && b[end - 1] != '\\'))
                ++end;
            QVERIFY2(begin > at && end < b.size(), b.mid(at, 300).constData());
            b.replace(begin, end - begin, "null" + QByteArray(end - begin - 4, ' '));
        });
        // The file cut inside its safetensors header.
        damaged("st_cut", "past the end", [&](QByteArray& b) { b.truncate(at + 20); });
    }

    // Decoded streams are held within the inflate cache's budget: with room
    // for one tensor, reading a second drops the first, which is decoded
    // again when read again (to the same bytes); with the default budget
    // both stay.
    void decodedStreamsStayWithinTheBudget() {
        const std::string dir = scratch_.filePath("dcp/four_ranks_zstd").toStdString();
        const auto resident = [](const Node* n) {
            return n->store()->container().isResident(n->leaf().storage);
        };
        LoadOptions tight;
        tight.store.inflateCacheBytes = 1;
        const TensorDict td = load(dir, tight);
        const Node* a = td.root().find({"model", "layers.0.w_row"});
        const Node* b = td.root().find({"model", "layers.0.w_uneven"});
        QVERIFY(a && b && a->isTensor() && b->isTensor());
        QVERIFY(!resident(a) && !resident(b));
        const std::string first = leafSha256(*a);
        QVERIFY(resident(a));
        (void)leafSha256(*b);
        QVERIFY(resident(b));
        QVERIFY(!resident(a));
        QCOMPARE(leafSha256(*a), first);
        QVERIFY(resident(a) && !resident(b));

        const TensorDict roomy = load(dir);
        const Node* c = roomy.root().find({"model", "layers.0.w_row"});
        const Node* d = roomy.root().find({"model", "layers.0.w_uneven"});
        QCOMPARE(leafSha256(*c), first);
        (void)leafSha256(*d);
        QVERIFY(resident(c) && resident(d));
    }

private:
    // Why a leaf cannot be read: its error node's failure, or what reading
    // all of it throws; an empty failure if it reads.
    static Failure failureOfReading(const Node& n) {
        if (n.isError())
            return *n.failure();
        try {
            (void)leafSha256(n);
        } catch (const Error& e) {
            return e.failure();
        }
        return {ErrorKind::Corrupt, "", ""};
    }

    void checkAgainstExpected(const TensorDict& td, const QJsonObject& fixture) {
        const QJsonObject tensors = fixture["tensors"].toObject();
        QVERIFY(!tensors.isEmpty());
        for (auto it = tensors.begin(); it != tensors.end(); ++it) {
            const QJsonObject e = it.value().toObject();
            const QString mismatch = testsupport::leafMismatch(find(td, pathOf(e["path"])), e);
            QVERIFY2(mismatch.isEmpty(), qPrintable(it.key() + ": " + mismatch));
        }
        const QJsonObject values = fixture["bytes"].toObject();
        QVERIFY(!values.isEmpty());
        for (auto it = values.begin(); it != values.end(); ++it) {
            const QJsonObject e = it.value().toObject();
            const Node* n = find(td, pathOf(e["path"]));
            QVERIFY2(n && !n->isError(), qPrintable(it.key()));
            const QJsonValue expected = e["value"];
            if (n->kind() == NodeKind::NonTensorData) {
                QCOMPARE(jsonOf(n->value()), expected);
            } else {  // a list, tuple or dict: a container of its items
                QVERIFY2(expected.isArray() || expected.isObject(), qPrintable(it.key()));
                QCOMPARE(qsizetype(n->children().size()), expected.isArray()
                                                              ? expected.toArray().size()
                                                              : expected.toObject().size());
            }
        }
    }

    QTemporaryDir scratch_;
    QString marker_;
    QJsonObject fixtures_;
    std::shared_ptr<testsupport::MemoryTransport> memory_ =
        std::make_shared<testsupport::MemoryTransport>();
};

QTEST_MAIN(DcpTest)
#include "tst_dcp.moc"
