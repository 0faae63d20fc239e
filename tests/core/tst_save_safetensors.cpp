// Saving as safetensors: one file, or a Hugging Face sharded folder with its
// index, from any source (a distributed checkpoint here, written by
// tests/support/make_dcp.py with numpy's sha256 of every tensor). What is
// written is read back by tdstudio and by tests/support/check_safetensors.py,
// which parses it with struct + json alone and checks that it is laid out
// byte for byte as the safetensors library serializes. Failures and
// cancels leave the destination as it was.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "memory_transport.h"
#include "tensordict/check.h"
#include "tensordict/error.h"
#include "tensordict/report.h"
#include "tensordict/save.h"
#include "tensordict/source.h"
#include "tensordict/tensordict.h"
#include "testsupport.h"

using namespace tensordict;

namespace {

// The dotted safetensors name of a key path in a fixture's JSON.
QString dotted(const QJsonValue& path) {
    QStringList parts;
    for (const auto e : path.toArray())
        parts << (e.isString() ? e.toString() : QString::number(e.toInteger()));
    return parts.join('.');
}

}  // namespace

class SaveSafetensorsTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(scratch_.isValid());
        QString out, error;
        QVERIFY2(
            testsupport::runPython(
                {TDSTUDIO_TEST_SUPPORT_DIR "/make_dcp.py", scratch_.filePath("dcp")}, &out, &error),
            qPrintable(error));
        fixture_ = QJsonDocument::fromJson(out.toUtf8())
                       .object()["fixtures"]
                       .toObject()["four_ranks"]
                       .toObject();
        QVERIFY(!fixture_["tensors"].toObject().isEmpty());
        source_ = scratch_.filePath("dcp/four_ranks");
    }

    // DCP -> one .safetensors: every tensor under its dotted key, equal to
    // numpy's; the values of the checkpoint named as left out. From disk
    // (row-wise chunks copied in the kernel) and from a transport that can
    // neither map nor copy (every byte read and written by the writer).
    void aCheckpointSavesToOneFile_data() {
        QTest::addColumn<QString>("source");
        QTest::newRow("disk") << source_;
        registerTransport(memory_);
        for (const QString& name : QDir(source_).entryList(QDir::Files | QDir::Hidden)) {
            QFile f(source_ + "/" + name);
            QVERIFY(f.open(QIODevice::ReadOnly));
            memory_->add("mem://four_ranks/" + name, f.readAll());
        }
        QTest::newRow("unmapped") << QString("mem://four_ranks/.metadata");
    }
    void aCheckpointSavesToOneFile() {
        QFETCH(QString, source);
        const QString out = scratch_.filePath("model.safetensors");
        QStringList skipped;
        SaveOptions options;
        options.numThreads = 2;
        options.skipped = [&](const std::string& key) { skipped << QString::fromStdString(key); };
        const TensorDict saved = save(load(source.toStdString()), out.toStdString(), options);
        QCOMPARE(QString::fromStdString(saved.format()), QString("safetensors"));
        // Each value is told once, in the tensor-free part that holds it
        // ("optim/param_groups"); no tensor is.
        const auto toldIn = [&](const QString& name) {
            for (const QString& key : skipped) {
                const QString prefix = QString(key).replace('/', '.');
                if (name == prefix || name.startsWith(prefix + "."))
                    return true;
            }
            return false;
        };
        QVERIFY(!skipped.isEmpty());
        for (const auto v : fixture_["bytes"].toObject())
            QVERIFY2(toldIn(dotted(v.toObject()["path"])), qPrintable(skipped.join(", ")));
        for (const auto t : fixture_["tensors"].toObject())
            QVERIFY2(!toldIn(dotted(t.toObject()["path"])), qPrintable(skipped.join(", ")));
        checkTensors(saved, {out});
    }

    // DCP -> .tdz -> a sharded folder split as huggingface_hub splits, each
    // shard as the library writes it, the index as transformers does.
    void anArchiveSavesToAShardedFolder() {
        const QString tdz = scratch_.filePath("four_ranks.tdz");
        save(load(source_.toStdString()), tdz.toStdString());
        const TensorDict archive = load(tdz.toStdString());
        const QString folder = scratch_.filePath("hf");
        SaveOptions options;
        options.format = SaveFormat::HuggingFace;
        options.maxShardSize = 400;
        const TensorDict saved = save(archive, folder.toStdString(), options);
        QCOMPARE(QString::fromStdString(saved.format()), QString("sharded"));

        // split_state_dict_into_shards_factory over the tensors in tree order.
        QList<QStringList> shards;
        QStringList current;
        std::uint64_t size = 0;
        std::vector<const Node*> pending{&archive.root()};
        std::vector<const Node*> leaves;
        while (!pending.empty()) {
            const Node* n = pending.back();
            pending.pop_back();
            if (n->isTensor())
                leaves.push_back(n);
            const auto& children = n->children();
            for (std::size_t i = children.size(); i-- > 0;)
                pending.push_back(children[i]);
        }
        for (const Node* leaf : leaves) {
            QStringList parts;
            for (const std::string& k : leaf->keyPath())
                parts << QString::fromStdString(k);
            const std::uint64_t n = leaf->leaf().nbytes;
            if (n > options.maxShardSize) {
                shards << QStringList{parts.join('.')};
                continue;
            }
            if (size + n > options.maxShardSize) {
                shards << current;
                current.clear();
                size = 0;
            }
            current << parts.join('.');
            size += n;
        }
        if (!current.isEmpty())
            shards << current;
        QVERIFY(shards.size() >= 3);

        QFile f(folder + "/model.safetensors.index.json");
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray indexText = f.readAll();
        const QJsonObject index = QJsonDocument::fromJson(indexText).object();
        const QJsonObject map = index["weight_map"].toObject();
        std::uint64_t total = 0;
        QStringList files;
        for (int i = 0; i < shards.size(); ++i) {
            const QString name = QString("model-%1-of-%2.safetensors")
                                     .arg(i + 1, 5, 10, QChar('0'))
                                     .arg(shards.size(), 5, 10, QChar('0'));
            files << folder + "/" + name;
            for (const QString& tensor : shards[i])
                QCOMPARE(map[tensor].toString(), name);
        }
        for (const Node* leaf : leaves)
            total += leaf->leaf().nbytes;
        QCOMPARE(map.size(), qsizetype(leaves.size()));
        QCOMPARE(index["metadata"].toObject()["total_size"].toInteger(), qint64(total));
        // json.dumps(indent=2, sort_keys=True) + "\n", by Python itself.
        QString python;
        QVERIFY(testsupport::runPython(
            {"-c",
             "import json, sys\n"
             "d = json.load(open(sys.argv[1]))\n"
             "sys.stdout.write(json.dumps(d, indent=2, sort_keys=True) + '\\n')\n",
             folder + "/model.safetensors.index.json"},
            &python));
        QCOMPARE(indexText, python.toUtf8());
        checkTensors(saved, files);
    }

    // A folder saved again with fewer shards keeps the files that are not
    // the model's (a config.json), and drops the shards no index names.
    void savingAgainReplacesOnlyTheModel() {
        const QString folder = scratch_.filePath("again");
        const TensorDict source = load(source_.toStdString());
        SaveOptions options;
        options.format = SaveFormat::HuggingFace;
        options.maxShardSize = 400;
        save(source, folder.toStdString(), options);
        QFile config(folder + "/config.json");
        QVERIFY(config.open(QIODevice::WriteOnly));
        config.write("{}");
        config.close();
        options.maxShardSize = 1u << 30;
        const TensorDict saved = save(source, folder.toStdString(), options);
        QCOMPARE(QDir(folder).entryList(QDir::Files | QDir::Hidden),
                 (QStringList{"config.json", "model.safetensors"}));
        QCOMPARE(QString::fromStdString(saved.format()), QString("safetensors"));
        checkTensors(saved, {folder + "/model.safetensors"});
        // The folder checks as the file it opens as, beside its config.json.
        const CheckReport report = check(folder.toStdString());
        QVERIFY2(report.problems.empty() && report.format == "safetensors", report.format.c_str());
    }

    // Refused before anything is written, naming the keys.
    void whatSafetensorsCannotHoldIsRefused() {
        const QString out = scratch_.filePath("refused.safetensors");
        TensorDict td = TensorDict::create();
        td.mutableRoot().addTensorDict("a").addBytes("b", DType::Float32, {4},
                                                     ownedBytes(std::vector<float>(4, 1.0f)));
        td.mutableRoot().addBytes("a.b", DType::Float32, {4},
                                  ownedBytes(std::vector<float>(4, 2.0f)));
        try {
            save(td, out.toStdString());
            QFAIL("two keys of one dotted name were saved");
        } catch (const Error& e) {
            QCOMPARE(e.failure().kind, ErrorKind::Invalid);
            QVERIFY2(e.failure().reason.find("a.b") != std::string::npos, e.what());
        }
        QVERIFY(!QFile::exists(out));

        TensorDict complex = TensorDict::create();
        complex.mutableRoot().addBytes("z", DType::Complex128, {2},
                                       ownedBytes(std::vector<double>(4, 0.5)));
        try {
            save(complex, out.toStdString());
            QFAIL("a complex128 tensor was saved as safetensors");
        } catch (const Error& e) {
            QCOMPARE(e.failure().kind, ErrorKind::Unsupported);
            QVERIFY2(e.failure().reason.find("complex128") != std::string::npos, e.what());
        }
        QVERIFY(!QFile::exists(out));

        // A leaf linked from outside its dataset is copied only when allowed.
        const QString dataset = scratch_.filePath("linked");
        TensorDict small = TensorDict::create();
        small.mutableRoot().addBytes("w", DType::Float32, {4},
                                     ownedBytes(std::vector<float>{1, 2, 3, 4}));
        save(small, dataset.toStdString());
        const QString outside = scratch_.filePath("outside.bin");
        QVERIFY(QFile::rename(dataset + "/w.memmap", outside));
        QVERIFY(QFile::link(outside, dataset + "/w.memmap"));
        const TensorDict linked = load(dataset.toStdString());
        try {
            save(linked, out.toStdString());
            QFAIL("a file linked from outside the dataset was copied");
        } catch (const Error& e) {
            QCOMPARE(e.failure().kind, ErrorKind::Denied);
            QVERIFY2(e.failure().reason.find("outside.bin") != std::string::npos, e.what());
        }
        QVERIFY(!QFile::exists(out));
        SaveOptions asSafetensors;
        asSafetensors.format = SaveFormat::Safetensors;
        QCOMPARE(saveRefusal(linked, asSafetensors)->kind, ErrorKind::Denied);
        SaveOptions allow;
        allow.allowOutsideLinks = true;
        const TensorDict copied = save(linked, out.toStdString(), allow);
        QCOMPARE(copied.root().child("w")->leaf().nbytes, std::uint64_t(16));
        QVERIFY(
            QDir(scratch_.path()).entryList({".refused*"}, QDir::Hidden | QDir::Files).isEmpty());
    }

    // A local file copies into another at any offsets: in the kernel where
    // both are as far into a page, else through a buffer in steps (here at
    // offsets 208 bytes apart, three steps and a part). Every byte lands,
    // nothing else is written.
    void aLocalFileCopiesAtAnyOffsets() {
        QByteArray bytes(3 << 20, '\0');
        for (qsizetype i = 0; i < bytes.size(); ++i)
            bytes[i] = static_cast<char>(i * 7 + i / 4099);
        const QString from = scratch_.filePath("copy_source.bin");
        testsupport::writeFile(from, bytes);
        const auto source = transportFor(from.toStdString())->open(from.toStdString());
        const std::size_t n = (2 << 20) + 5;
        for (const auto& [offset, at] :
             {std::pair<std::uint64_t, std::uint64_t>{320, 112},
              std::pair<std::uint64_t, std::uint64_t>{4096 + 320, 320}}) {
            const std::string to = scratch_.filePath("copy_target.bin").toStdString();
            const int fd = ::open(to.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
            QVERIFY(fd >= 0);
            const bool copied = source->copyTo(offset, n, fd, at);
            struct stat st {};
            const bool sized = ::fstat(fd, &st) == 0;
            QByteArray written(qsizetype(n), '\0');
            const ssize_t got = ::pread(fd, written.data(), n, off_t(at));
            ::close(fd);
            // A file system that cannot copy in the kernel may decline where
            // the pages line up, writing nothing; elsewhere the copy is ours.
            if (!copied && offset % 4096 == at % 4096) {
                QVERIFY(sized && st.st_size == 0);
                continue;
            }
            QVERIFY2(copied, qPrintable(QString("%1 -> %2").arg(offset).arg(at)));
            QVERIFY(sized);
            QCOMPARE(st.st_size, off_t(at + n));
            QCOMPARE(got, ssize_t(n));
            QVERIFY(written == bytes.mid(qsizetype(offset), qsizetype(n)));
        }
    }

    // A leaf of several copy steps whose place in the .safetensors file is
    // not as far into a page as its place in its .memmap file is copied
    // through a buffer, in steps: every byte lands where it belongs.
    void aLeafCopiedInStepsSavesExactly() {
        QByteArray big(qsizetype(3 << 20) + 77, '\0');
        for (qsizetype i = 0; i < big.size(); ++i)
            big[i] = static_cast<char>(i * 13 + i / 1021);
        const QByteArray small("odd-sized", 9);
        TensorDict td = TensorDict::create();
        td.mutableRoot().addBytes("big", DType::UInt8, {std::int64_t(big.size())}, ownedBytes(big));
        td.mutableRoot().addBytes("small", DType::UInt8, {std::int64_t(small.size())},
                                  ownedBytes(small));
        const QString folder = scratch_.filePath("steps");
        save(td, folder.toStdString());
        const QString out = scratch_.filePath("steps.safetensors");
        SaveOptions options;
        options.numThreads = 2;
        save(load(folder.toStdString()), out.toStdString(), options);

        const TensorDict back = load(out.toStdString());
        for (const auto& [name, expected] : {std::pair{"big", big}, std::pair{"small", small}}) {
            const Node* leaf = back.root().child(name);
            QVERIFY2(leaf && leaf->isTensor(), name);
            QCOMPARE(leaf->leaf().nbytes, std::uint64_t(expected.size()));
            QByteArray read(expected.size(), '\0');
            leaf->readInto(0, reinterpret_cast<std::byte*>(read.data()), std::size_t(read.size()));
            QVERIFY2(read == expected, name);
        }
    }

    // A cancel at the first report leaves nothing behind: no folder content,
    // no temporaries; the same save then completes.
    void aCancelChangesNothing() {
        const QString folder = scratch_.filePath("cancelled");
        QVERIFY(QDir().mkpath(folder));
        SaveOptions options;
        options.format = SaveFormat::HuggingFace;
        options.maxShardSize = 400;
        options.progress = [&options](const SaveProgress&) { options.cancel.cancel(); };
        try {
            save(load(source_.toStdString()), folder.toStdString(), options);
            QFAIL("the cancelled save finished");
        } catch (const Cancelled&) {
        }
        QCOMPARE(QDir(folder).entryList(QDir::Files | QDir::Hidden), QStringList());
    }

private:
    // `td` holds the fixture's tensors exactly; so do `files`, read by Python.
    void checkTensors(const TensorDict& td, const QStringList& files) {
        const QJsonObject tensors = fixture_["tensors"].toObject();
        QString out, error;
        QVERIFY2(testsupport::runPython(
                     QStringList{TDSTUDIO_TEST_SUPPORT_DIR "/check_safetensors.py"} + files, &out,
                     &error),
                 qPrintable(error));
        const QJsonObject checked = QJsonDocument::fromJson(out.toUtf8()).object();
        QJsonObject byPython;
        for (const QString& file : files) {
            const QJsonObject c = checked[file].toObject();
            QVERIFY2(c["problems"].toArray().isEmpty(),
                     qPrintable(file + ": " + QJsonDocument(c["problems"].toArray()).toJson()));
            const QJsonObject t = c["tensors"].toObject();
            for (auto it = t.begin(); it != t.end(); ++it)
                byPython[it.key()] = it.value();
        }
        QCOMPARE(byPython.size(), tensors.size());
        for (auto it = tensors.begin(); it != tensors.end(); ++it) {
            const QJsonObject e = it.value().toObject();
            const QString name = dotted(e["path"]);
            const QString mismatch =
                testsupport::leafMismatch(td.root().child(name.toStdString()), e);
            QVERIFY2(mismatch.isEmpty(), qPrintable(name + ": " + mismatch));
            QCOMPARE(byPython[name].toObject()["sha256"].toString(), e["sha256"].toString());
            QCOMPARE(byPython[name].toObject()["shape"].toArray(), e["shape"].toArray());
        }
    }

    QTemporaryDir scratch_;
    QString source_;
    QJsonObject fixture_;
    std::shared_ptr<testsupport::MemoryTransport> memory_ =
        std::make_shared<testsupport::MemoryTransport>();
};

QTEST_MAIN(SaveSafetensorsTest)
#include "tst_save_safetensors.moc"
