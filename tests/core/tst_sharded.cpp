// Hugging Face sharded model folders: written by tests/support/make_sharded.py
// as transformers' save_pretrained writes them (safetensors and .bin shards),
// with what each tensor is computed by numpy. The folder, its index or any
// one shard opens the whole model as one tree, read exactly from disk,
// through a transport that cannot map, and over nginx, which is asked for
// the shards' headers only. A folder that lies (a shard missing, a tensor
// not where the index says, a shard that is not a file of the folder) opens
// with those parts as errors that name them.

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtEndian>
#include <QtTest>
#include <algorithm>

#include "memory_transport.h"
#include "nginx_server.h"
#include "tensordict/check.h"
#include "tensordict/error.h"
#include "tensordict/http.h"
#include "tensordict/keys.h"
#include "tensordict/report.h"
#include "tensordict/save.h"
#include "tensordict/store.h"
#include "tensordict/tensordict.h"
#include "testsupport.h"

using namespace tensordict;

class ShardedTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(scratch_.isValid());
        QString out, error;
        QVERIFY2(testsupport::runPython(
                     {TDSTUDIO_TEST_SUPPORT_DIR "/make_sharded.py", scratch_.path()}, &out, &error),
                 qPrintable(error));
        expected_ = QJsonDocument::fromJson(out.toUtf8()).object();
        QVERIFY(expected_["tensors"].toObject().size() == 16);
        QVERIFY(expected_["shards"].toObject()["st"].toInt() > 2);
        registerTransport(memory_);
    }

    void everyTensorReadsExactly_data() {
        QTest::addColumn<QString>("location");
        QTest::addColumn<QString>("shardExtension");
        for (const QString layout : {"st", "bin"}) {
            const QString dir = scratch_.filePath(layout);
            const QString index =
                layout == "st" ? "model.safetensors.index.json" : "pytorch_model.bin.index.json";
            const QString shard = QDir(dir).entryList({"*-00002-of-*"}).value(0);
            const QString ext = layout == "st" ? ".safetensors" : ".bin";
            QTest::newRow(qPrintable(layout + "/folder")) << dir << ext;
            QTest::newRow(qPrintable(layout + "/index")) << dir + "/" + index << ext;
            QTest::newRow(qPrintable(layout + "/shard")) << dir + "/" + shard << ext;
            // The same files served by range only.
            for (const QString& name : QDir(dir).entryList(QDir::Files)) {
                QFile f(dir + "/" + name);
                QVERIFY(f.open(QIODevice::ReadOnly));
                memory_->add("mem://" + layout + "/" + name, f.readAll());
            }
            QTest::newRow(qPrintable(layout + "/unmapped index"))
                << "mem://" + layout + "/" + index << ext;
        }
    }

    void everyTensorReadsExactly() {
        QFETCH(QString, location);
        QFETCH(QString, shardExtension);
        const TensorDict td = load(location.toStdString());
        QCOMPARE(QString::fromStdString(td.format()), QString("sharded"));
        checkAgainstExpected(td, shardExtension);
        QCOMPARE(testsupport::listingPropertiesMismatch(td.root()), QString());
    }

    // The other names of an index and its shards that real writers use:
    // diffusers' diffusion_pytorch_model.safetensors.index.json, and
    // transformers' variants (save_pretrained(variant="fp16"):
    // model.safetensors.index.fp16.json over model.fp16-0000K-of-0000N
    // shards). The folder, the index and a shard open the model; the check
    // finds nothing, and a variant beside the model's own files is no
    // orphan of it.
    void otherIndexNamesOpenTheModel_data() {
        QTest::addColumn<QString>("index");
        QTest::addColumn<QString>("stem");
        QTest::addColumn<bool>("besideTheModel");
        QTest::newRow("diffusers") << "diffusion_pytorch_model.safetensors.index.json"
                                   << "diffusion_pytorch_model" << false;
        QTest::newRow("variant") << "model.safetensors.index.fp16.json"
                                 << "model.fp16" << false;
        QTest::newRow("variant beside") << "model.safetensors.index.fp16.json"
                                        << "model.fp16" << true;
    }

    void otherIndexNamesOpenTheModel() {
        QFETCH(QString, index);
        QFETCH(QString, stem);
        QFETCH(bool, besideTheModel);
        const QString dir = scratch_.filePath("named-" + QString(QTest::currentDataTag()));
        testsupport::copyTree(scratch_.filePath("st"), dir);
        QFile in(dir + "/model.safetensors.index.json");
        QVERIFY(in.open(QIODevice::ReadOnly));
        const QByteArray text = in.readAll();
        in.close();
        testsupport::writeFile(dir + "/" + index,
                               QByteArray(text).replace("\"model-0", "\"" + stem.toUtf8() + "-0"));
        const QStringList shards = QDir(dir).entryList({"model-0*.safetensors"});
        for (const QString& shard : shards) {
            const QString renamed = QString(shard).replace(0, 5, stem);
            QVERIFY(besideTheModel ? QFile::copy(dir + "/" + shard, dir + "/" + renamed)
                                   : QFile::rename(dir + "/" + shard, dir + "/" + renamed));
        }
        if (!besideTheModel)
            QVERIFY(QFile::remove(dir + "/model.safetensors.index.json"));
        const QString shard = QDir(dir).entryList({stem + "-00002-of-*"}).value(0);
        for (const QString& location : {dir, dir + "/" + index, dir + "/" + shard}) {
            if (besideTheModel && location == dir)
                continue;  // the folder opens as the model's own index
            const TensorDict td = load(location.toStdString());
            QCOMPARE(QString::fromStdString(td.format()), QString("sharded"));
            checkAgainstExpected(td, "");
            QVERIFY2(QString::fromStdString(td.root().child("lm_head.weight")->fileName())
                         .contains(stem + "-0"),
                     qPrintable(location));
        }
        for (const QString& location : {dir, dir + "/" + index}) {
            const CheckReport report = check(location.toStdString());
            QStringList found;
            for (const Problem& p : report.problems)
                found << QString::fromStdString(p.kind + " " + p.file + " " + p.message);
            QVERIFY2(report.sound() && report.format == "sharded", qPrintable(found.join("; ")));
        }
    }

    // A folder with a model of its own (model.safetensors) beside a
    // variant's shards opens as that model, as from_pretrained without a
    // variant loads it.
    void aFolderWithItsOwnModelOpensThatNotAVariant() {
        const QString dir = scratch_.filePath("own-and-variant");
        testsupport::copyTree(scratch_.filePath("st"), dir);
        QFile in(dir + "/model.safetensors.index.json");
        QVERIFY(in.open(QIODevice::ReadOnly));
        const QByteArray text = in.readAll();
        in.close();
        QVERIFY(QFile::remove(dir + "/model.safetensors.index.json"));
        testsupport::writeFile(dir + "/model.safetensors.index.fp16.json",
                               QByteArray(text).replace("\"model-0", "\"model.fp16-0"));
        const QStringList shards = QDir(dir).entryList({"model-0*.safetensors"});
        for (const QString& shard : shards)
            QVERIFY(QFile::rename(dir + "/" + shard,
                                  dir + "/" + QString(shard).replace(0, 5, "model.fp16")));
        QVERIFY(QFile::copy(dir + "/" + QString(shards[0]).replace(0, 5, "model.fp16"),
                            dir + "/model.safetensors"));
        QCOMPARE(QString::fromStdString(load(dir.toStdString()).format()), QString("safetensors"));
        QVERIFY(QFile::remove(dir + "/model.safetensors"));
        QCOMPARE(QString::fromStdString(load(dir.toStdString()).format()), QString("sharded"));
    }

    // Over HTTP: the URL of the index; each shard's header (or a .bin's
    // pickle and directory) is fetched, and no tensor's bytes until read.
    void overHttpOnlyHeadersAreFetched() {
        testsupport::NginxServer server(scratch_.filePath("st"));
        QVERIFY2(server.isRunning(), qPrintable(server.error()));
        const TensorDict td = load((server.url() + "/model.safetensors.index.json").toStdString());
        QCOMPARE(td.root().children().size(), std::size_t(16));
        // nginx logs a request after answering it: wait for every shard's line.
        const QStringList shards = QDir(scratch_.filePath("st")).entryList({"*.safetensors"});
        const auto everyShardLogged = [&] {
            const QStringList requests = server.requests();
            return std::all_of(shards.begin(), shards.end(), [&](const QString& name) {
                return !requests.filter(" /" + name).isEmpty();
            });
        };
        QTRY_VERIFY_WITH_TIMEOUT(everyShardLogged(), 60000);
        // One request per shard (its first block, which holds its header).
        qint64 fetched = 0;
        for (const QString& name : shards)
            QVERIFY2(server.requests().filter(" /" + name).size() == 1,
                     qPrintable(server.requests().join("; ")));
        for (const QString& line : server.requests())
            fetched += line.section(' ', 1, 1).toLongLong();
        qint64 data = 0;
        for (const QString& name : QDir(scratch_.filePath("st")).entryList({"*.safetensors"}))
            data += QFileInfo(scratch_.filePath("st/" + name)).size();
        qInfo("opening the index URL: %lld requests, %lld bytes of the shards' %lld (%s)",
              static_cast<long long>(server.requests().size()), static_cast<long long>(fetched),
              static_cast<long long>(data), qPrintable(server.requests().join("; ")));
        QVERIFY2(fetched < data / 4, qPrintable(QString("fetched %1 of %2 bytes: %3")
                                                    .arg(fetched)
                                                    .arg(data)
                                                    .arg(server.requests().join("; "))));
        checkAgainstExpected(td, ".safetensors");  // then every byte, read as shown
    }

    // A model with packed F4 tensors: total_size counts what they take in
    // their shards (numel x 4 / 8), and a true one is no finding.
    void packedTensorsCountAsStoredInTotalSize() {
        const QString dir = scratch_.filePath("packed");
        QVERIFY(QDir().mkpath(dir));
        const auto shard = [&](const QString& name, const QByteArray& header,
                               const QByteArray& data) {
            writeSafetensors(dir + "/" + name, header, data);
        };
        shard("model-00001-of-00002.safetensors",
              R"({"p":{"dtype":"F4","shape":[2,2],"data_offsets":[0,2]}})", QByteArray("\x21\x43"));
        shard("model-00002-of-00002.safetensors",
              R"({"q":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", QByteArray(4, '\0'));
        testsupport::writeFile(dir + "/model.safetensors.index.json",
                               R"({"metadata": {"total_size": 6}, "weight_map": )"
                               R"({"p": "model-00001-of-00002.safetensors", )"
                               R"("q": "model-00002-of-00002.safetensors"}})");
        const TensorDict td = load(dir.toStdString());
        QCOMPARE(td.root().child("p")->leaf().dtype, DType::Float4_e2m1fn);
        const CheckReport report = check(dir.toStdString());
        QStringList found;
        for (const Problem& p : report.problems)
            found << QString::fromStdString(p.kind + " " + p.file);
        QVERIFY2(report.sound(), qPrintable(found.join("; ")));
    }

    // Tied weights in a .bin shard (T5's shared embeddings, GPT-2's
    // lm_head): two names, one storage, which huggingface_hub's
    // split_state_dict_into_shards_factory counts once in total_size. Such
    // an index is no finding; a total that fits neither count still is.
    void tiedWeightsCountOnceInTotalSize_data() {
        QTest::addColumn<bool>("legacy");  // torch.save's layout before 1.6
        QTest::newRow("zip") << false;
        QTest::newRow("legacy") << true;
    }

    void tiedWeightsCountOnceInTotalSize() {
        QFETCH(bool, legacy);
        const QString dir = scratch_.filePath(legacy ? "tied-legacy" : "tied");
        QVERIFY(QDir().mkpath(dir));
        QString error;
        QVERIFY2(
            testsupport::runPython(
                {"-c",
                 "import sys, json, torch\n"
                 "d, zip = sys.argv[1], sys.argv[2] == 'zip'\n"
                 "shared = torch.arange(12, dtype=torch.float32).reshape(3, 4)\n"
                 "torch.save({'shared.weight': shared, 'encoder.embed_tokens.weight': shared,\n"
                 "            'lm_head.bias': torch.ones(3)}, d + "
                 "'/pytorch_model-00001-of-00002.bin', _use_new_zipfile_serialization=zip)\n"
                 "torch.save({'decoder.w': torch.zeros(2, 2, dtype=torch.float64)},\n"
                 "           d + '/pytorch_model-00002-of-00002.bin', "
                 "_use_new_zipfile_serialization=zip)\n"
                 "first = 'pytorch_model-00001-of-00002.bin'\n"
                 "index = {'metadata': {'total_size': 48 + 12 + 32}, 'weight_map': {\n"
                 "    'shared.weight': first, 'encoder.embed_tokens.weight': first,\n"
                 "    'lm_head.bias': first, 'decoder.w': 'pytorch_model-00002-of-00002.bin'}}\n"
                 "json.dump(index, open(d + '/pytorch_model.bin.index.json', 'w'))\n",
                 dir, legacy ? "legacy" : "zip"},
                nullptr, &error),
            qPrintable(error));
        const TensorDict td = load(dir.toStdString());
        QCOMPARE(td.root().child("encoder.embed_tokens.weight")->leaf().nbytes, std::uint64_t(48));
        CheckReport report = check(dir.toStdString());
        QStringList found;
        for (const Problem& p : report.problems)
            found << QString::fromStdString(p.kind + " " + p.message);
        QVERIFY2(report.sound(), qPrintable(found.join("; ")));

        // Counted each time (140) is what other writers record: no finding either.
        const QString index = dir + "/pytorch_model.bin.index.json";
        QFile in(index);
        QVERIFY(in.open(QIODevice::ReadOnly));
        const QByteArray text = in.readAll();
        in.close();
        testsupport::writeFile(index, QByteArray(text).replace("92", "140"));
        QVERIFY(check(dir.toStdString()).sound());
        testsupport::writeFile(index, QByteArray(text).replace("92", "100"));
        report = check(dir.toStdString());
        QCOMPARE(report.problems.size(), std::size_t(1));
        QCOMPARE(report.problems[0].kind, std::string("total_size"));
    }

    // Views of one fused storage (q, 8 rows, and k, 12 rows, of a [24, 8]
    // float32) in a .bin shard: huggingface_hub counts the storage once
    // and whole (768 bytes), transformers 4.2x-4.43's shard_checkpoint once
    // as its first tensor in the shard (q: 256, though the index, sorted,
    // names k first), safetensors' writers each tensor (640). Each total is
    // no finding; any other is, k's first among them.
    void fusedViewsCountAsEachWriterCountsThem_data() {
        QTest::addColumn<int>("total");
        QTest::addColumn<bool>("sound");
        QTest::newRow("huggingface_hub") << 768 + 64 << true;
        QTest::newRow("shard_checkpoint") << 256 + 64 << true;
        QTest::newRow("every tensor") << 640 + 64 << true;
        QTest::newRow("the index's first") << 384 + 64 << false;
    }

    void fusedViewsCountAsEachWriterCountsThem() {
        QFETCH(int, total);
        QFETCH(bool, sound);
        const QString dir = scratch_.filePath(QString("fused-%1").arg(total));
        QVERIFY(QDir().mkpath(dir));
        QString error;
        QVERIFY2(testsupport::runPython(
                     {"-c",
                      "import sys, json, torch\n"
                      "d, total = sys.argv[1], int(sys.argv[2])\n"
                      "fused = torch.arange(192, dtype=torch.float32).reshape(24, 8)\n"
                      "torch.save({'q': fused[0:8], 'k': fused[8:20]},\n"
                      "           d + '/pytorch_model-00001-of-00002.bin')\n"
                      "torch.save({'w': torch.ones(16)}, d + '/pytorch_model-00002-of-00002.bin')\n"
                      "first, second = 'pytorch_model-00001-of-00002.bin', "
                      "'pytorch_model-00002-of-00002.bin'\n"
                      "index = {'metadata': {'total_size': total}, 'weight_map': {\n"
                      "    'k': first, 'q': first, 'w': second}}\n"
                      "json.dump(index, open(d + '/pytorch_model.bin.index.json', 'w'),\n"
                      "          indent=2, sort_keys=True)\n",
                      dir, QString::number(total)},
                     nullptr, &error),
                 qPrintable(error));
        const CheckReport report = check(dir.toStdString());
        QStringList found;
        for (const Problem& p : report.problems)
            found << QString::fromStdString(p.kind + " " + p.message);
        QCOMPARE(report.sound(), sound);
        if (!sound)
            QVERIFY2(report.problems.size() == 1 && report.problems[0].kind == "total_size",
                     qPrintable(found.join("; ")));
    }

    // An index that repeats a key counts its last value, as json.loads
    // does: a weight_map given again replaces the first, refusals and shard
    // order included, and the last metadata is the model's. The same whether
    // the index is read as plain JSON or by the general reader (a key spelled
    // with an escape, "\u0070" for "p", takes it there).
    void anIndexsRepeatedKeysCountAsJsonLoadsReadsThem_data() {
        QTest::addColumn<bool>("escaped");
        QTest::newRow("plain") << false;
        QTest::newRow("escaped") << true;
    }

    void anIndexsRepeatedKeysCountAsJsonLoadsReadsThem() {
        QFETCH(bool, escaped);
        const QString dir = scratch_.filePath(escaped ? "repeated-escaped" : "repeated");
        QVERIFY(QDir().mkpath(dir));
        writeSafetensors(dir + "/model-00001-of-00002.safetensors",
                         R"({"p":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
                         QByteArray(4, '\0'));
        writeSafetensors(dir + "/model-00002-of-00002.safetensors",
                         R"({"q":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
                         QByteArray(4, '\0'));
        const QString index = dir + "/model.safetensors.index.json";
        const auto writeIndex = [&](QByteArray text) {
            if (escaped)
                text.replace(R"("p":)", R"("\u0070":)");
            testsupport::writeFile(index, text);
        };
        const auto refusal = [&] {
            try {
                load(dir.toStdString());
            } catch (const Error& e) {
                return QString::fromStdString(e.reason());
            }
            return QString("loaded");
        };
        writeIndex(R"({"metadata": {"total_size": 999}, "weight_map": )"
                   R"({"p": "../elsewhere.safetensors"}, "weight_map": )"
                   R"({"q": "model-00002-of-00002.safetensors", )"
                   R"("p": "model-00001-of-00002.safetensors"}, )"
                   R"("metadata": {"total_size": 8}})");
        const TensorDict td = load(dir.toStdString());
        QCOMPARE(td.root().children().size(), std::size_t(2));
        QCOMPARE(td.root().children()[0]->key(), std::string("q"));
        QVERIFY(td.root().child("p")->isTensor());
        const Value::Object& metadata = td.root().collection().attributes;
        QCOMPARE(metadata.size(), std::size_t(1));
        QCOMPARE(metadata.front().second, Value(std::int64_t{8}));
        QVERIFY2(check(dir.toStdString()).sound(), "total_size 8 is the last metadata's");

        // A name one weight_map gives twice: at its first place, with its last shard.
        writeIndex(R"({"metadata": {}, "weight_map": {"p": "model-00002-of-00002.safetensors", )"
                   R"("q": "model-00002-of-00002.safetensors", )"
                   R"("p": "model-00001-of-00002.safetensors"}})");
        const TensorDict twice = load(dir.toStdString());
        QCOMPARE(twice.root().children().size(), std::size_t(2));
        QCOMPARE(twice.root().children()[0]->key(), std::string("p"));
        QVERIFY(twice.root().child("p")->isTensor());
        QVERIFY(QString::fromStdString(twice.root().child("p")->fileName())
                    .endsWith("model-00001-of-00002.safetensors"));
        QVERIFY2(check(dir.toStdString()).sound(), "p is where its last entry says");
        // A shard named only by an entry a later one replaces: read by no
        // loader, and said so.
        writeIndex(R"({"metadata": {}, "weight_map": {"p": "model-00002-of-00002.safetensors", )"
                   R"("p": "model-00001-of-00002.safetensors"}})");
        const CheckReport replaced = check(dir.toStdString());
        QVERIFY2(replaced.problems.size() == 1 && replaced.problems[0].kind == "orphan" &&
                     QString::fromStdString(replaced.problems[0].file)
                         .endsWith("model-00002-of-00002.safetensors") &&
                     QString::fromStdString(replaced.problems[0].message)
                         .contains("names only in entries that later ones replace"),
                 qPrintable(QString::fromStdString(replaced.problems[0].message)));
        // No metadata: transformers fails on the index (index["metadata"]).
        writeIndex(R"({"weight_map": {"p": "model-00001-of-00002.safetensors", )"
                   R"("q": "model-00002-of-00002.safetensors"}})");
        const CheckReport bare = check(dir.toStdString());
        QVERIFY(bare.errorCount() == 0 && bare.problems.size() == 1 &&
                bare.problems[0].kind == "index");

        // The last weight_map is no object: there is none.
        writeIndex(R"({"weight_map": {"p": "model-00001-of-00002.safetensors"},)"
                   R"( "weight_map": 5})");
        QCOMPARE(refusal(), QString("the index has no weight_map object"));
        // A shard that is no string, or no file of the folder, is named by
        // its first tensor.
        writeIndex(R"({"weight_map": {"q": "model-00002-of-00002.safetensors", "p": 5, )"
                   R"("r": "../x.safetensors"}})");
        QCOMPARE(
            refusal(),
            QString(R"(the weight_map gives "p" a shard that is not a file name in its folder)"));
        writeIndex(R"({"weight_map": {"q": "model-00002-of-00002.safetensors", )"
                   R"("p": "sub/model-00001-of-00002.safetensors"}})");
        QCOMPARE(
            refusal(),
            QString(R"(the weight_map gives "p" a shard that is not a file name in its folder)"));
    }

    // The tree takes the index's order, whatever order the shards hold
    // their tensors in (each shard's next tensor is tried first, then its
    // keys are looked up): the index reversed, and with every other
    // tensor moved to its end.
    void theIndexOrdersTheTree_data() {
        QTest::addColumn<bool>("reversed");
        QTest::newRow("reversed") << true;
        QTest::newRow("every other last") << false;
    }

    void theIndexOrdersTheTree() {
        QFETCH(bool, reversed);
        const QString dir = scratch_.filePath(reversed ? "reversed" : "interleaved");
        testsupport::copyTree(scratch_.filePath("st"), dir);
        QFile f(dir + "/model.safetensors.index.json");
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject json = QJsonDocument::fromJson(f.readAll()).object();
        f.close();
        const QJsonObject map = json["weight_map"].toObject();
        QStringList names = map.keys();
        if (reversed) {
            std::reverse(names.begin(), names.end());
        } else {
            QStringList odd;
            for (int i = names.size() - 1; i >= 0; --i)
                if (i % 2)
                    odd.prepend(names.takeAt(i));
            names += odd;
        }
        // Written by hand: QJsonObject would sort the keys.
        QStringList entries;
        for (const QString& name : names)
            entries << "\"" + name + "\": \"" + map[name].toString() + "\"";
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write("{\"metadata\": " +
                QJsonDocument(json["metadata"].toObject()).toJson(QJsonDocument::Compact) +
                ", \"weight_map\": {" + entries.join(", ").toUtf8() + "}}");
        f.close();

        const TensorDict td = load(dir.toStdString());
        QStringList order;
        for (const Node* child : td.root().children())
            order << QString::fromStdString(child->key());
        QCOMPARE(order, names);
        checkAgainstExpected(td, ".safetensors");
        QVERIFY(check(dir.toStdString()).sound());
    }

    // A sharded model saves to a .tdz that reads back with the same values.
    void aShardedModelSavesToAnArchive() {
        const QString tdz = scratch_.filePath("model.tdz");
        save(load(scratch_.filePath("bin").toStdString()), tdz.toStdString());
        const TensorDict copy = load(tdz.toStdString());
        QCOMPARE(QString::fromStdString(copy.format()), QString("archive"));
        checkAgainstExpected(copy, {});
    }

    // What lies is shown as such, by name; the rest opens.
    void aFolderThatLiesOpensWithItsProblemsNamed() {
        const QString dir = scratch_.filePath("lies");
        testsupport::copyTree(scratch_.filePath("st"), dir);
        const QString index = dir + "/model.safetensors.index.json";
        QFile f(index);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QJsonObject json = QJsonDocument::fromJson(f.readAll()).object();
        f.close();
        QJsonObject map = json["weight_map"].toObject();
        // A shard gone; a tensor the index puts in a shard that lacks it.
        const QString missing = map["model.norm.weight"].toString();
        QVERIFY(QFile::remove(dir + "/" + missing));
        map["model.ghost.weight"] = map["lm_head.weight"];
        json["weight_map"] = map;
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(QJsonDocument(json).toJson());
        f.close();

        const TensorDict td = load(dir.toStdString());
        const Node* norm = td.root().child("model.norm.weight");
        QVERIFY(norm && norm->isError());
        QCOMPARE(norm->failure()->kind, ErrorKind::NotFound);
        QVERIFY2(norm->failure()->where.find(missing.toStdString()) != std::string::npos,
                 norm->failure()->where.c_str());
        const Node* ghost = td.root().child("model.ghost.weight");
        QVERIFY(ghost && ghost->isError());
        QCOMPARE(ghost->failure()->kind, ErrorKind::Corrupt);
        QVERIFY(ghost->failure()->reason.find("does not hold it") != std::string::npos);
        QVERIFY(td.root().child("lm_head.weight")->isTensor());

        // A shard that is not a file of the folder is refused before anything is opened.
        map["lm_head.weight"] = "../st/" + map["lm_head.weight"].toString();
        json["weight_map"] = map;
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(QJsonDocument(json).toJson());
        f.close();
        try {
            load(dir.toStdString());
            QFAIL("an index naming a file outside its folder was opened");
        } catch (const Error& e) {
            QCOMPARE(e.failure().kind, ErrorKind::Corrupt);
            QVERIFY(e.failure().where.find("model.safetensors.index.json") != std::string::npos);
        }

        // An index that names itself as a shard is that one error, not a loop.
        map = json["weight_map"].toObject();
        map["lm_head.weight"] = "model.safetensors.index.json";
        json["weight_map"] = map;
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(QJsonDocument(json).toJson());
        f.close();
        const TensorDict self = load(dir.toStdString());
        QVERIFY(self.root().child("lm_head.weight")->isError());
    }

    // --check of a sharded model: sound as written; each lie named with its
    // shard and tensor, errors for what cannot load, warnings for the rest.
    void checkNamesWhatDoesNotFit() {
        const CheckReport sound = check(scratch_.filePath("bin").toStdString());
        QVERIFY2(sound.sound(), sound.problems.empty() ? "" : sound.problems[0].message.c_str());
        QCOMPARE(QString::fromStdString(sound.format), QString("sharded"));
        QCOMPARE(sound.files, std::uint64_t(expected_["shards"].toObject()["bin"].toInt() + 1));

        const QString dir = scratch_.filePath("check");
        testsupport::copyTree(scratch_.filePath("st"), dir);
        const QStringList shards = QDir(dir).entryList({"*.safetensors"});
        // A shard the index does not name, and a wrong total_size.
        QVERIFY(QFile::copy(dir + "/" + shards[0], dir + "/model-00009-of-00009.safetensors"));
        QFile f(dir + "/model.safetensors.index.json");
        QVERIFY(f.open(QIODevice::ReadOnly));
        QJsonObject json = QJsonDocument::fromJson(f.readAll()).object();
        f.close();
        json["metadata"] = QJsonObject{{"total_size", 12345}};
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(QJsonDocument(json).toJson());
        f.close();
        const auto kinds = [](const CheckReport& r) {
            QStringList out;
            for (const Problem& p : r.problems)
                out << QString("%1 %2 %3")
                           .arg(p.severity == Severity::Error ? "error" : "warning",
                                QString::fromStdString(p.kind),
                                QString::fromStdString(p.file).section('/', -1));
            return out;
        };
        const CheckReport lies = check(dir.toStdString());
        QCOMPARE(kinds(lies), QStringList({"warning orphan model-00009-of-00009.safetensors",
                                           "warning total_size model.safetensors.index.json"}));
        QVERIFY(!lies.sound() && lies.errorCount() == 0);

        // A shard gone: an error for each of its tensors, naming the shard.
        QVERIFY(QFile::remove(dir + "/" + shards[1]));
        const CheckReport missing = check(dir.toStdString());
        QVERIFY(missing.errorCount() > 0);
        for (const Problem& p : missing.problems)
            if (p.severity == Severity::Error) {
                QCOMPARE(QString::fromStdString(p.kind), QString("missing_file"));
                QVERIFY(QString::fromStdString(p.file).endsWith(shards[1]));
                QCOMPARE(p.key.size(), std::size_t(1));
            }
    }

    // A tensor a shard holds but the index does not give it (the index
    // forgot it, or gives it to another shard) is no leaf of the model, and
    // the check warns of that copy by its shard and name; the rest reads.
    void aTensorTheIndexDoesNotGiveItsShardIsNamed() {
        const QString dir = scratch_.filePath("unindexed");
        testsupport::copyTree(scratch_.filePath("st"), dir);
        QFile f(dir + "/model.safetensors.index.json");
        QVERIFY(f.open(QIODevice::ReadOnly));
        QJsonObject json = QJsonDocument::fromJson(f.readAll()).object();
        f.close();
        QJsonObject map = json["weight_map"].toObject();
        // The last tensor of a shard that holds others too (so that the
        // index still names the shard).
        QString forgotten;
        for (auto it = map.begin(); it != map.end(); ++it)
            for (auto other = map.begin(); other != map.end(); ++other)
                if (other != it && other.value() == it.value())
                    forgotten = it.key();
        QVERIFY(!forgotten.isEmpty());
        const QString shard = map[forgotten].toString();
        map.remove(forgotten);
        json["weight_map"] = map;
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(QJsonDocument(json).toJson());
        f.close();

        const TensorDict td = load(dir.toStdString());
        QVERIFY(!td.root().child(forgotten.toStdString()));
        QCOMPARE(td.root().children().size(), std::size_t(map.size()));
        for (auto it = map.begin(); it != map.end(); ++it) {
            const Node* leaf = td.root().child(it.key().toStdString());
            QVERIFY2(leaf && leaf->isTensor(), qPrintable(it.key()));
        }
        const CheckReport report = check(dir.toStdString());
        QStringList orphans;
        for (const Problem& p : report.problems)
            if (p.kind == "orphan")
                orphans << QString::fromStdString(p.file).section('/', -1) + " " +
                               (p.key.empty() ? QString() : QString::fromStdString(p.key[0]));
        QCOMPARE(orphans, QStringList{shard + " " + forgotten});
        QCOMPARE(report.errorCount(), std::size_t(0));
    }

    // A tensor in two shards: the model's leaf is the index's copy, and the
    // check says which copy transformers (every shard whole, in name order)
    // gives a model: the index's, or the other.
    void aTensorInTwoShardsSaysWhichCopyAModelGets() {
        const QString dir = scratch_.filePath("two-copies");
        QVERIFY(QDir().mkpath(dir));
        const QString first = "model-00001-of-00002.safetensors",
                      second = "model-00002-of-00002.safetensors";
        const auto floats = [](std::initializer_list<float> values) {
            QByteArray out;
            for (float v : values)
                out.append(reinterpret_cast<const char*>(&v), sizeof v);
            return out;
        };
        writeSafetensors(dir + "/" + first,
                         R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                         R"("x":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                         floats({0, 1, 2}));
        writeSafetensors(dir + "/" + second,
                         R"({"b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                         R"("x":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                         floats({0, 3, 4}));
        for (const auto& [indexShard, loaded] :
             {std::pair<QString, QString>{first, second}, {second, second}}) {
            testsupport::writeFile(dir + "/model.safetensors.index.json",
                                   QString(R"({"metadata": {"total_size": 16}, "weight_map": )"
                                           R"({"a": "%1", "b": "%2", "x": "%3"}})")
                                       .arg(first, second, indexShard)
                                       .toUtf8());
            const TensorDict td = load(dir.toStdString());
            const LeafBytes x = td.root().child("x")->bytes();
            QCOMPARE(QByteArray(reinterpret_cast<const char*>(x.data.get()), qsizetype(x.size)),
                     indexShard == first ? floats({1, 2}) : floats({3, 4}));
            const CheckReport r = check(dir.toStdString());
            QVERIFY2(r.errorCount() == 0 && r.problems.size() == 1 &&
                         r.problems[0].kind == "two_copies" &&
                         r.problems[0].key == std::vector<std::string>{"x"},
                     qPrintable(indexShard));
            const QString message = QString::fromStdString(r.problems[0].message);
            const QString other = indexShard == first ? second : first;
            QVERIFY2(QString::fromStdString(r.problems[0].file).endsWith(other),
                     qPrintable(message));
            QVERIFY2(message.endsWith(loaded == indexShard ? QString("gives a model that copy")
                                                           : "gives a model the copy in " + loaded +
                                                                 ", not the one shown"),
                     qPrintable(message));
        }
        // The index gives x to a shard without it, and another has it: an
        // error on x that names the shard transformers takes it from.
        writeSafetensors(dir + "/" + first,
                         R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", floats({0}));
        testsupport::writeFile(dir + "/model.safetensors.index.json",
                               QString(R"({"metadata": {"total_size": 16}, "weight_map": )"
                                       R"({"a": "%1", "b": "%2", "x": "%1"}})")
                                   .arg(first, second)
                                   .toUtf8());
        const CheckReport lacking = check(dir.toStdString());
        QVERIFY2(lacking.errorCount() == 1 && lacking.problems.size() == 1 &&
                     lacking.problems[0].key == std::vector<std::string>{"x"},
                 qPrintable(QString::fromStdString(lacking.problems[0].message)));
        QVERIFY(QString::fromStdString(lacking.problems[0].message)
                    .contains(second + " holds it: transformers, which loads every shard whole, "
                                       "gives a model that copy"));
    }

    // A shard opened as itself, without its index beside it, is the file alone.
    void aShardAloneIsItsOwnFile() {
        const QString dir = scratch_.filePath("alone");
        QVERIFY(QDir().mkpath(dir));
        const QString shard = QDir(scratch_.filePath("st")).entryList({"*-00001-of-*"}).value(0);
        QVERIFY(QFile::copy(scratch_.filePath("st/" + shard), dir + "/" + shard));
        const TensorDict td = load((dir + "/" + shard).toStdString());
        QCOMPARE(QString::fromStdString(td.format()), QString("safetensors"));
    }

private:
    // A safetensors file of `header` (padded to 8 bytes) and `data`.
    static void writeSafetensors(const QString& path, const QByteArray& header,
                                 const QByteArray& data) {
        QByteArray h = header;
        h.append((8 - h.size() % 8) % 8, ' ');
        QByteArray out(8, '\0');
        qToLittleEndian<quint64>(h.size(), out.data());
        testsupport::writeFile(path, out + h + data);
    }

    void checkAgainstExpected(const TensorDict& td, const QString& shardExtension) {
        const QJsonObject tensors = expected_["tensors"].toObject();
        QCOMPARE(td.root().children().size(), std::size_t(tensors.size()));
        for (auto it = tensors.begin(); it != tensors.end(); ++it) {
            const Node* n = td.root().child(it.key().toStdString());
            const QString mismatch = testsupport::leafMismatch(n, it.value().toObject());
            QVERIFY2(mismatch.isEmpty(), qPrintable(it.key() + ": " + mismatch));
            if (!shardExtension.isEmpty())  // the details name the leaf's shard
                QVERIFY2(QString::fromStdString(n->fileName())
                             .contains(shardExtension == ".bin" ? "pytorch_model-0" : "model-0"),
                         n->fileName().c_str());
        }
    }

    QTemporaryDir scratch_;
    QJsonObject expected_;
    std::shared_ptr<testsupport::MemoryTransport> memory_ =
        std::make_shared<testsupport::MemoryTransport>();
};

QTEST_MAIN(ShardedTest)
#include "tst_sharded.moc"
