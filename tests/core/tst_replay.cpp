// TorchRL replay buffer dumps and stacks of chunks, written by
// tests/support/make_replay.py as torchrl's dumps() writes them (a partly
// filled buffer, wrapped ones, prioritized ones, a TED buffer, one whose
// files disagree, one with no fill level) with every expected value
// computed by numpy from the rows in the order they were written. Each
// dump opens with its capacity, valid rows, cursor and sampler; its rows
// read oldest first (and every row in storage order when asked), its
// priorities equal, its episodes counted; --check names the files that
// disagree; a stack reads as one; what is saved Python reads back.

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <fstream>
#include <set>

#include "tensordict/check.h"
#include "tensordict/datasets.h"
#include "tensordict/error.h"
#include "tensordict/report.h"
#include "tensordict/save.h"
#include "tensordict/tensordict.h"
#include "testsupport.h"

using namespace tensordict;

namespace {

std::vector<std::string> keyPathOf(const QString& slashed) {
    std::vector<std::string> path;
    for (const QString& k : slashed.split('/'))
        path.push_back(k.toStdString());
    return path;
}

// Every tensor leaf's key path joined by '/', depth first.
void tensorLeaves(const Node& node, std::vector<const Node*>& out) {
    if (node.isTensor())
        out.push_back(&node);
    for (const Node* child : node.children())
        tensorLeaves(*child, out);
}

QString joined(const Node& leaf) {
    QStringList keys;
    for (const std::string& k : leaf.keyPath())
        keys << QString::fromStdString(k);
    return keys.join('/');
}

QStringList problems(const CheckReport& r) {
    QStringList out;
    for (const Problem& p : r.problems) {
        QString file = QString::fromStdString(p.file);
        file = file.mid(file.lastIndexOf(QString::fromStdString(r.path)) +
                        qsizetype(r.path.size()) + 1);
        out << QString("%1 %2 %3")
                   .arg(p.severity == Severity::Error ? "error" : "warning",
                        QString::fromStdString(p.kind), file);
    }
    return out;
}

void writeFile(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    QCOMPARE(f.write(bytes), bytes.size());
}

}  // namespace

class ReplayTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(scratch_.isValid());
        dir_ = scratch_.filePath("replay");
        QString out, error;
        QVERIFY2(testsupport::runPython({TDSTUDIO_TEST_SUPPORT_DIR "/make_replay.py", dir_}, &out,
                                        &error),
                 qPrintable(error));
        expected_ = QJsonDocument::fromJson(out.toUtf8()).object();
        QVERIFY(expected_.contains("wrapped"));
    }

    void dumpsOpenWithTheirFacts_data() {
        QTest::addColumn<QString>("name");
        for (const char* name : {"partial", "wrapped", "prioritized", "prioritized_wrapped", "ted",
                                 "trajectories", "ndim2"})
            QTest::newRow(name) << QString(name);
    }
    void dumpsOpenWithTheirFacts() {
        QFETCH(QString, name);
        const QJsonObject want = expected_[name].toObject();
        const TensorDict td = load((dir_ + "/" + name).toStdString());
        QCOMPARE(QString::fromStdString(td.format()), QString("replay buffer"));
        const std::optional<ReplayBufferFacts> facts = replayBufferFacts(*td.root().store());
        QVERIFY(facts);
        QCOMPARE(facts->capacity, want["capacity"].toInteger());
        QVERIFY(facts->valid);
        QCOMPARE(*facts->valid, want["valid"].toInteger());
        QVERIFY(facts->cursor);
        QCOMPARE(*facts->cursor, want["cursor"].toInteger());
        QCOMPARE(facts->writeCount.has_value(), !want["write_count"].isNull());
        if (facts->writeCount)
            QCOMPARE(*facts->writeCount, want["write_count"].toInteger());
        QCOMPARE(QString::fromStdString(facts->sampler), want["sampler"].toString());
        QCOMPARE(QString::fromStdString(facts->writer), want["writer"].toString());
        QCOMPARE(QString::fromStdString(facts->layout), want["layout"].toString());
        QVERIFY(facts->disagreements.empty());
        QCOMPARE(td.root().batchSize().at(0), *facts->valid);

        // Oldest first: the storage row of each valid row, as numpy wrote them.
        const QJsonArray order = want["order"].toArray();
        QCOMPARE(facts->shownRows, std::int64_t(order.size()));
        for (int r = 0; r < order.size(); ++r)
            QCOMPARE(facts->storageRowOf(r), order[r].toInteger());
        QCOMPARE(facts->wrapped(), order.size() > 0 && order[0].toInteger() != 0);

        // Each leaf's valid rows, byte for byte.
        const QJsonObject leaves = want["leaves"].toObject();
        std::vector<const Node*> got;
        tensorLeaves(td.root(), got);
        int compared = 0;
        for (const Node* leaf : got) {
            const QString key = joined(*leaf);
            if (key == "priority")
                continue;
            QVERIFY2(leaves.contains(key), qPrintable(key));
            const QJsonObject w = leaves[key].toObject();
            QCOMPARE(leaf->leaf().shape[0], w["shape"].toArray()[0].toInteger());
            QCOMPARE(QString::fromStdString(leafSha256(*leaf)), w["sha256"].toString());
            ++compared;
        }
        QCOMPARE(compared, leaves.size());

        // The sampler's priorities: the sum tree's leaves of the valid rows.
        const Node* priority = td.root().child("priority");
        QCOMPARE(priority != nullptr, want.contains("priority"));
        if (priority) {
            // One value a row, or [rows, T] of an ndim=2 storage.
            std::vector<double> values;
            std::vector<std::int64_t> shape{want["priority"].toArray().size()};
            for (const QJsonValue v : want["priority"].toArray()) {
                if (v.isArray()) {
                    shape.resize(1);
                    shape.push_back(v.toArray().size());
                    for (const QJsonValue x : v.toArray())
                        values.push_back(x.toDouble());
                } else {
                    values.push_back(v.toDouble());
                }
            }
            QCOMPARE(priority->leaf().dtype, DType::Float64);
            QCOMPARE(priority->leaf().shape, shape);
            std::vector<double> read(values.size());
            priority->readInto(0, reinterpret_cast<std::byte*>(read.data()),
                               read.size() * sizeof(double));
            QCOMPARE(read, values);
            const auto parameter = [&](const char* n) {
                for (const auto& [k, v] : facts->samplerParameters)
                    if (k == n)
                        return v.asDouble();
                return std::nan("");
            };
            QCOMPARE(parameter("alpha"), want["alpha"].toDouble());
            QCOMPARE(parameter("eps"), want["eps"].toDouble());
            QCOMPARE(parameter("beta"), want["beta"].toDouble());
        }
        // Pickled parts are listed, never run.
        QStringList pickled;
        for (const std::string& f : facts->pickledFiles)
            pickled << QString::fromStdString(f);
        QStringList wantPickled;
        for (const QJsonValue v : want["pickled"].toArray())
            wantPickled << v.toString();
        QCOMPARE(pickled, wantPickled);
    }

    // Every row of the storage, in storage order, is the storage as written.
    void allRowsInStorageOrder() {
        for (const char* name : {"partial", "wrapped", "ted", "prioritized_wrapped"}) {
            LoadOptions options;
            options.store.replayAllRows = true;
            options.store.replayStorageOrder = true;
            const TensorDict td = load((dir_ + "/" + name).toStdString(), options);
            const auto facts = replayBufferFacts(*td.root().store());
            QCOMPARE(facts->shownRows, facts->capacity);
            QCOMPARE(facts->firstShownRow, std::int64_t(0));
            const QJsonObject storage = expected_[name].toObject()["storage"].toObject();
            for (auto it = storage.begin(); it != storage.end(); ++it) {
                const Node* leaf = td.root().find(keyPathOf(it.key()));
                QVERIFY2(leaf, qPrintable(it.key()));
                QCOMPARE(QString::fromStdString(leafSha256(*leaf)), it.value().toString());
            }
            // The valid storage rows are the ones the last writes went to.
            std::set<std::int64_t> written;
            for (const QJsonValue v : expected_[name].toObject()["order"].toArray())
                written.insert(v.toInteger());
            for (std::int64_t row = 0; row < facts->capacity; ++row)
                QCOMPARE(facts->isValid(row), written.count(row) == 1);
        }
        // All rows oldest first: the invalid ones after the valid ones.
        LoadOptions all;
        all.store.replayAllRows = true;
        const TensorDict td = load((dir_ + "/partial").toStdString(), all);
        const auto facts = replayBufferFacts(*td.root().store());
        QCOMPARE(td.root().batchSize(), std::vector<std::int64_t>{16});
        QVERIFY(facts->isValid(facts->storageRowOf(9)));
        QVERIFY(!facts->isValid(facts->storageRowOf(10)));
    }

    void tedEpisodes() {
        const TensorDict td = load((dir_ + "/ted").toStdString());
        const std::vector<Episode> episodes = episodesOf(td.root());
        const QJsonArray want = expected_["ted"].toObject()["episodes"].toArray();
        QCOMPARE(int(episodes.size()), want.size());
        for (int i = 0; i < want.size(); ++i) {
            const QJsonObject w = want[i].toObject();
            QCOMPARE(episodes[std::size_t(i)].trajId, w["traj_id"].toInteger());
            QCOMPARE(episodes[std::size_t(i)].firstRow, w["first_row"].toInteger());
            QCOMPARE(episodes[std::size_t(i)].length, w["length"].toInteger());
            const double a = w["return"].toDouble(), b = episodes[std::size_t(i)].reward;
            QVERIFY2(std::fabs(a - b) <= 1e-9 * std::max(1.0, std::fabs(a)),
                     qPrintable(QString("%1 against numpy's %2").arg(b).arg(a)));
        }
        // A buffer without trajectories has none.
        QVERIFY(episodesOf(load((dir_ + "/partial").toStdString()).root()).empty());
    }

    // Pickled parts are read as data by the safe unpickler; a hostile one runs nothing.
    void pickledPartsAreReadAsData() {
        const auto contentOf = [](const TensorDict& td, const std::string& file) {
            const auto facts = replayBufferFacts(*td.root().store());
            for (std::size_t i = 0; i < facts->pickledFiles.size(); ++i)
                if (facts->pickledFiles[i] == file)
                    return QString::fromStdString(facts->pickledContents[i]);
            return QString();
        };
        QCOMPARE(contentOf(load((dir_ + "/partial").toStdString()), "transform.t"),
                 QString("a checkpoint of 2 keys: loc torch.float32 [3], scale torch.float32 [3]"));
        QCOMPARE(contentOf(load((dir_ + "/wrapped").toStdString()), "prefetch.pkl"),
                 QString(R"({"version": 1, "capacity": 0, "queue": []})"));
        const QString hostile = scratch_.filePath("hostile");
        testsupport::copyTree(dir_ + "/wrapped", hostile);
        const QString marker = scratch_.filePath("ran");
        writeFile(hostile + "/prefetch.pkl", "cos\nsystem\n(S'touch " + marker.toUtf8() + "'\ntR.");
        const QString said = contentOf(load(hostile.toStdString()), "prefetch.pkl");
        QVERIFY2(said.startsWith("not read: "), qPrintable(said));
        QVERIFY(!QFileInfo::exists(marker));
    }

    void unknownFillLevel() {
        const TensorDict td = load((dir_ + "/unknown_len").toStdString());
        const auto facts = replayBufferFacts(*td.root().store());
        QVERIFY(!facts->valid);
        QCOMPARE(facts->shownRows, std::int64_t(8));
        QCOMPARE(facts->oldestRow, std::int64_t(0));
        QVERIFY(td.root().store()->readingNote().find("fill level is unknown") !=
                std::string::npos);
        const QJsonObject storage = expected_["unknown_len"].toObject()["storage"].toObject();
        for (auto it = storage.begin(); it != storage.end(); ++it)
            QCOMPARE(QString::fromStdString(leafSha256(*td.root().find(keyPathOf(it.key())))),
                     it.value().toString());
    }

    void checkNamesFilesThatDisagree() {
        CheckOptions options;
        const CheckReport bad = check((dir_ + "/disagree").toStdString(), options);
        QCOMPARE(QString::fromStdString(bad.format), QString("replay buffer"));
        QCOMPARE(problems(bad), QStringList{"error replay_cursor writer/metadata.json"});
        for (const char* name : {"partial", "wrapped", "prioritized", "ted", "unknown_len",
                                 "trajectories", "ndim2", "max_value"}) {
            const CheckReport ok = check((dir_ + "/" + name).toStdString(), options);
            QVERIFY2(ok.problems.empty(), qPrintable(problems(ok).join("; ")));
        }
        // write_at() runs len ahead of the cursor: worth a look, not an error.
        const CheckReport at = check((dir_ + "/write_at").toStdString(), options);
        QCOMPARE(problems(at), QStringList{"warning replay_cursor writer/metadata.json"});
        // A len past the capacity, a sum tree of another size.
        const QString broken = scratch_.filePath("broken");
        testsupport::copyTree(dir_ + "/prioritized", broken);
        writeFile(broken + "/storage/storage_metadata.json",
                  R"({"metadata": {}, "is_pytree": false, "len": 25})");
        QFile::resize(broken + "/sampler/sumtree.memmap", 8 * 19);
        const CheckReport r = check(broken.toStdString(), options);
        const QStringList found = problems(r);
        QVERIFY2(found.contains("error replay_len storage/storage_metadata.json"),
                 qPrintable(found.join("; ")));
        QVERIFY2(found.contains("error replay_tree sampler/sumtree.memmap"),
                 qPrintable(found.join("; ")));
        // The tree still opens: the priority says why it is missing.
        const TensorDict td = load(broken.toStdString(), LoadOptions{{}, true, false});
        QVERIFY(td.root().child("priority")->isError());
        QCOMPARE(td.root().batchSize(), std::vector<std::int64_t>{20});
    }

    void badFilesAreNamed() {
        const QString bad = scratch_.filePath("badjson");
        testsupport::copyTree(dir_ + "/partial", bad);
        writeFile(bad + "/storage/storage_metadata.json", R"({"len": "ten"})");
        try {
            load(bad.toStdString());
            QFAIL("a len that is not a count opened");
        } catch (const Error& e) {
            QCOMPARE(e.kind(), ErrorKind::Corrupt);
            QVERIFY2(std::string(e.where()).find("storage_metadata.json") != std::string::npos,
                     e.what());
        }
        writeFile(bad + "/storage/storage_metadata.json", "{not json");
        QVERIFY_THROWS_EXCEPTION(Error, load(bad.toStdString()));
        // A storage leaf cut short: an error node when the tree is read...
        testsupport::copyTree(dir_ + "/wrapped", bad + "2");
        QFile::resize(bad + "2/storage/obs.memmap", 20);
        const TensorDict cut = load((bad + "2").toStdString(), LoadOptions{{}, true, false});
        QVERIFY(cut.root().child("obs") && cut.root().child("obs")->isError());
        // ... and an error, not zeros, when it is cut after: the gathered rows say so.
        testsupport::copyTree(dir_ + "/wrapped", bad + "3");
        const TensorDict td = load((bad + "3").toStdString());
        const Node* obs = td.root().child("obs");
        QVERIFY(obs && obs->isTensor());
        QFile::resize(bad + "3/storage/obs.memmap", 20);
        QVERIFY_THROWS_EXCEPTION(Error, leafSha256(*obs));
        // Hostile numbers: NaN, a float past int64, a huge trailing dimension.
        testsupport::copyTree(dir_ + "/partial", bad + "4");
        writeFile(bad + "4/writer/metadata.json", R"({"cursor": NaN})");
        writeFile(bad + "4/storage/storage_metadata.json", R"({"len": 1e300})");
        QVERIFY_THROWS_EXCEPTION(Error, load((bad + "4").toStdString()));
        writeFile(bad + "4/storage/storage_metadata.json", R"({"len": 10})");
        const TensorDict nan = load((bad + "4").toStdString());  // the writer's file is said
        QVERIFY(!replayBufferFacts(*nan.root().store())->cursor);
        QCOMPARE(replayBufferFacts(*nan.root().store())->disagreements.size(), std::size_t(1));
    }

    void stackReadsAsOne() {
        const QJsonObject want = expected_["stack"].toObject();
        const TensorDict td = load((dir_ + "/stack").toStdString());
        QCOMPARE(QString::fromStdString(td.format()), QString("stack"));
        QCOMPARE(td.root().batchSize(), std::vector<std::int64_t>{want["rows"].toInteger()});
        const auto facts = stackFacts(*td.root().store());
        QVERIFY(facts);
        const QJsonArray chunks = want["chunks"].toArray();
        QCOMPARE(int(facts->chunks.size()), chunks.size());
        for (int i = 0; i < chunks.size(); ++i) {
            QCOMPARE(QString::fromStdString(facts->chunks[std::size_t(i)].name),
                     chunks[i][0].toString());
            QCOMPARE(facts->chunks[std::size_t(i)].rows, chunks[i][1].toInteger());
        }
        const QJsonObject leaves = want["leaves"].toObject();
        for (auto it = leaves.begin(); it != leaves.end(); ++it) {
            const Node* leaf = td.root().find(keyPathOf(it.key()));
            QVERIFY2(leaf, qPrintable(it.key()));
            QCOMPARE(QString::fromStdString(leafSha256(*leaf)),
                     it.value().toObject()["sha256"].toString());
            // A part per chunk, in order.
            QCOMPARE(int(leaf->store()->container().leafParts(leaf->leaf().storage).size()),
                     chunks.size());
        }
        // A range across chunks.
        const Node* label = td.root().child("label");
        std::vector<std::int64_t> all(12), part(5);
        label->readInto(0, reinterpret_cast<std::byte*>(all.data()), 12 * 8);
        label->readInto(3 * 8, reinterpret_cast<std::byte*>(part.data()), 5 * 8);
        QVERIFY(std::equal(part.begin(), part.end(), all.begin() + 3));
        QVERIFY(check((dir_ + "/stack").toStdString(), {}).problems.empty());
    }

    void chunksThatDoNotStackAreNamed() {
        const QString stack = scratch_.filePath("badstack");
        testsupport::copyTree(dir_ + "/stack", stack);
        // part-2's label becomes int32: it cannot be gathered with int64.
        QFile meta(stack + "/part-2/meta.json");
        QVERIFY(meta.open(QIODevice::ReadOnly));
        QByteArray text = meta.readAll();
        meta.close();
        text.replace(R"("label": {"device": "cpu", "shape": [3], "dtype": "torch.int64")",
                     R"("label": {"device": "cpu", "shape": [3], "dtype": "torch.int32")");
        writeFile(stack + "/part-2/meta.json", text);
        QFile::resize(stack + "/part-2/label.memmap", 12);
        const TensorDict td = load(stack.toStdString(), LoadOptions{{}, true, false});
        const Node* label = td.root().child("label");
        QVERIFY(label && label->isError());
        QVERIFY2(label->error().find("part-2") != std::string::npos, label->error().c_str());
        QVERIFY(td.root().child("obs")->isTensor());  // the rest still reads
        const CheckReport r = check(stack.toStdString(), {});
        QVERIFY2(problems(r).size() == 1 && problems(r)[0].startsWith("error ") &&
                     problems(r)[0].endsWith(" part-2/label.memmap"),
                 qPrintable(problems(r).join("; ")));
    }

    // A tensordict whose root meta.json is missing (an interrupted save
    // writes it last) has leaf files of its own: never taken for a stack.
    void interruptedSaveIsNotAStack() {
        const QString folder = scratch_.filePath("interrupted");
        testsupport::copyTree(dir_ + "/stack/part-1", folder + "/agent0");
        testsupport::copyTree(dir_ + "/stack/part-2", folder + "/agent1");
        QVERIFY(QFile::copy(dir_ + "/stack/part-1/label.memmap", folder + "/label.memmap"));
        try {
            const TensorDict td = load(folder.toStdString());
            QVERIFY(td.format() != "stack");
        } catch (const Error&) {
        }
        const CheckReport r = check(folder.toStdString(), {});
        QVERIFY(r.format != "stack");
        QVERIFY2(problems(r).join(";").contains("missing_meta_json"),
                 qPrintable(problems(r).join("; ")));
        // Without the loose leaf file it is a stack of two chunks.
        QVERIFY(QFile::remove(folder + "/label.memmap"));
        QCOMPARE(QString::fromStdString(load(folder.toStdString()).format()), QString("stack"));
    }

    // The valid rows oldest first, saved as one tensordict: Python reads
    // back the rows numpy wrote, and the priorities.
    void validRowsSaveAsATensordict() {
        for (const char* name : {"wrapped", "prioritized_wrapped", "partial", "prioritized"}) {
            const QString out = scratch_.filePath(QString("saved_") + name);
            SaveOptions options;
            options.copyExisting = true;
            save(load((dir_ + "/" + name).toStdString()), out.toStdString(), options);
            QString report, error;
            QVERIFY2(testsupport::runPython({TDSTUDIO_TEST_SUPPORT_DIR "/verify_output.py", out},
                                            &report, &error),
                     qPrintable(error));
            const QJsonObject got = QJsonDocument::fromJson(report.toUtf8())["leaves"].toObject();
            const QJsonObject want = expected_[name].toObject()["leaves"].toObject();
            for (auto it = want.begin(); it != want.end(); ++it)
                QCOMPARE(got[it.key()]["sha256"].toString(),
                         it.value().toObject()["sha256"].toString());
            QCOMPARE(got.size(), want.size() + (expected_[name].toObject().contains("priority")));
            // Only the valid rows are written: each file holds its shape's bytes, no more.
            for (auto it = got.begin(); it != got.end(); ++it) {
                const QJsonObject leaf = it.value().toObject();
                std::int64_t elements = 1;
                for (const QJsonValue d : leaf["shape"].toArray())
                    elements *= d.toInteger();
                const QString dtype = leaf["dtype"].toString();
                const std::int64_t item = dtype == "torch.bool" ? 1 : dtype.endsWith("64") ? 8 : 4;
                QCOMPARE(leaf["file_size"].toInteger(), elements * item);
            }
        }
    }

private:
    QTemporaryDir scratch_;
    QString dir_;
    QJsonObject expected_;
};

QTEST_GUILESS_MAIN(ReplayTest)
#include "tst_replay.moc"
