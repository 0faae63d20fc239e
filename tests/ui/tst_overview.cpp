// The overview of a collection: what takes the space under the selected
// node (largest keys and leaves, bytes by dtype and storage, counts,
// problems), computed off the GUI thread from metadata only, its bars
// selecting keys; the demo opens on it.

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QListWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTreeView>
#include <QtTest>
#include <map>

#include "collection_summary.h"
#include "document.h"
#include "document_page.h"
#include "key_tree_model.h"
#include "load_settings.h"
#include "main_window.h"
#include "overview_panel.h"
#include "preview_panel.h"
#include "size_bar_chart.h"
#include "tensor_table_model.h"
#include "tensor_table_view.h"
#include "tensordict/dtype.h"
#include "tensordict/tensordict.h"
#include "testsupport.h"

using tensordict::Node;

namespace {

// Opens `path`; true once the document is loaded and the overview of its
// root (selected on load) is on screen.
bool openOnOverview(MainWindow& w, const QString& path) {
    QSignalSpy loaded(&w, &MainWindow::documentLoaded);
    QSignalSpy failed(&w, &MainWindow::documentFailed);
    w.openPath(path);
    if (!QTest::qWaitFor([&] { return loaded.count() + failed.count() > 0; }, 300000) ||
        loaded.count() != 1)
        return false;
    return QTest::qWaitFor([&] { return w.documentPage()->overviewPanel()->isReady(); }, 300000);
}

QStringList labels(const SizeBarChart* chart) {
    QStringList out;
    for (const auto& bar : chart->bars())
        out << bar.label;
    return out;
}

std::vector<std::uint64_t> sizes(const std::vector<CollectionSummary::Entry>& entries) {
    std::vector<std::uint64_t> out;
    for (const auto& e : entries)
        out.push_back(e.bytes);
    return out;
}

std::uint64_t bytesOf(const QJsonObject& tensor) {
    const auto dtype = tensordict::dtypeFromString(tensor["dtype"].toString().toStdString());
    std::uint64_t n = dtype ? tensordict::itemSize(*dtype) : 0;
    for (const QJsonValue d : tensor["shape"].toArray())
        n *= std::uint64_t(d.toInteger());
    return n;
}

CollectionSummary summaryOf(const std::string& path) {
    const tensordict::TensorDict td = tensordict::load(path);
    return summarizeCollection(td.root());
}

// File base name -> bytes.
std::map<QString, std::uint64_t> filesOf(const CollectionSummary& s) {
    std::map<QString, std::uint64_t> out;
    for (const auto& f : s.byFile)
        out[f.name] = f.bytes;
    return out;
}

}  // namespace

class OverviewTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { testsupport::isolateSettings("tst_overview"); }

    void demoOpensOnItsOverview() {
        MainWindow w;
        w.show();
        QVERIFY(openOnOverview(w, TDSTUDIO_DEMO_PATH));
        QVERIFY(w.documentPage()->showsOverview());
        OverviewPanel* o = w.documentPage()->overviewPanel();
        QVERIFY(o->isVisible());
        QVERIFY(!w.documentPage()->previewPanel()->isVisible());
        const CollectionSummary& s = o->summary();
        QVERIFY(s.keyPath.isEmpty());
        QCOMPARE(s.className, QString("TensorDict"));
        QCOMPARE(s.batchSize, (std::vector<std::int64_t>{300}));
        // images, rgb, labels, features, audio, episode/{reward, step, done}, description
        QCOMPARE(s.keys, std::int64_t(10));
        QCOMPARE(s.leaves, std::int64_t(8));
        QCOMPARE(s.nonTensors, std::int64_t(1));
        QCOMPARE(s.collections, std::int64_t(1));
        QCOMPARE(s.totalBytes, std::uint64_t(6097500));

        // The largest children in order, with their sizes.
        QCOMPARE(labels(o->childrenChart()), QStringList({"audio", "rgb", "images", "features",
                                                          "episode", "labels", "description"}));
        QCOMPARE(sizes(s.largestChildren),
                 (std::vector<std::uint64_t>{300 * 4096 * 4, 300 * 32 * 32 * 3, 300 * 28 * 28,
                                             300 * 16 * 4, 300 * 8 + 300 * 4 + 300, 300 * 8, 0}));
        QCOMPARE(s.largestChildren[4].kind, QString("TensorDict"));
        QCOMPARE(s.largestChildren[0].keyPath, QStringList({"audio"}));
        // The largest leaves at any depth, named by their path below the collection.
        QCOMPARE(s.largestLeaves.size(), std::size_t(8));
        QCOMPARE(labels(o->leavesChart()).mid(0, 4),
                 QStringList({"audio", "rgb", "images", "features"}));
        QVERIFY(labels(o->leavesChart()).contains("(\"episode\", \"reward\")"));
        QCOMPARE(s.largestLeaves.back().label, QString("(\"episode\", \"done\")"));
        QCOMPARE(s.largestLeaves.back().keyPath, QStringList({"episode", "done"}));
        QCOMPARE(s.largestLeaves.back().bytes, std::uint64_t(300));

        // Bytes by dtype, largest first (ties in name order).
        QStringList dtypes;
        for (const auto& d : s.byDType)
            dtypes << QString("%1 %2 %3").arg(d.dtype).arg(d.bytes).arg(d.leaves);
        QCOMPARE(dtypes, QStringList({"float32 4934400 2", "uint8 1156800 2", "float64 2400 1",
                                      "int64 2400 1", "int32 1200 1", "bool 300 1"}));
        QCOMPARE(labels(o->dtypeChart()).front(), QString("float32"));

        // By storage: the demo is a stored archive, every byte on disk as it is.
        QCOMPARE(s.byStorage.size(), std::size_t(1));
        QCOMPARE(s.byStorage[0].kind, tensordict::StorageKind::StoredEntry);
        QCOMPARE(s.byStorage[0].name, QString("stored entry"));
        QCOMPARE(s.byStorage[0].bytes, std::uint64_t(6097500));
        QCOMPARE(s.byStorage[0].storedBytes, std::uint64_t(6097500));
        QCOMPARE(s.byStorage[0].leaves, std::int64_t(8));
        QCOMPARE(s.byStorage[0].compressionRatio(), 1.0);

        QCOMPARE(s.problemCount, std::int64_t(0));
        QCOMPARE(o->problemList()->count(), 1);
        QVERIFY(o->problemList()->item(0)->text().startsWith("None found"));
        QVERIFY2(o->headline().contains("batch size [300]") && o->headline().contains("8 leaves") &&
                     o->headline().contains("10 keys in all (1 nested collection, 1 non-tensor)"),
                 qPrintable(o->headline()));
    }

    // Leaves in several files (a model's shards, a distributed checkpoint's
    // .distcp files): their bytes by file, as the generators wrote them. One
    // file (the demo archive): no such chart.
    void bytesByFile() {
        QTemporaryDir scratch;
        QString out, error;
        QVERIFY2(testsupport::runPython(
                     {TDSTUDIO_TEST_SUPPORT_DIR "/make_sharded.py", scratch.path(), "--skip-bin"},
                     &out, &error),
                 qPrintable(error));
        const QJsonObject tensors =
            QJsonDocument::fromJson(out.toUtf8()).object()["tensors"].toObject();
        const QString folder = scratch.filePath("st");
        QFile indexFile(folder + "/model.safetensors.index.json");
        QVERIFY(indexFile.open(QIODevice::ReadOnly));
        const QJsonObject weightMap =
            QJsonDocument::fromJson(indexFile.readAll()).object()["weight_map"].toObject();
        std::map<QString, std::uint64_t> wantSharded;  // shard -> bytes
        for (auto it = weightMap.begin(); it != weightMap.end(); ++it)
            wantSharded[it.value().toString()] += bytesOf(tensors[it.key()].toObject());
        QCOMPARE(wantSharded.size(), std::size_t(3));
        QCOMPARE(filesOf(summaryOf(folder.toStdString())), wantSharded);

        QVERIFY2(testsupport::runPython(
                     {TDSTUDIO_TEST_SUPPORT_DIR "/make_dcp.py", scratch.filePath("dcp"), "--marker",
                      scratch.filePath("marker")},
                     &out, &error),
                 qPrintable(error));
        const QJsonObject fourRanks = QJsonDocument::fromJson(out.toUtf8())
                                          .object()["fixtures"]
                                          .toObject()["four_ranks"]
                                          .toObject();
        std::map<QString, std::uint64_t> wantDcp;  // .distcp file -> bytes of tensor chunks
        for (const QJsonValue t : fourRanks["tensors"].toObject()) {
            const auto dtype = tensordict::dtypeFromString(t["dtype"].toString().toStdString());
            QVERIFY(dtype);
            for (const QJsonValue c : t["chunks"].toArray()) {
                std::uint64_t n = tensordict::itemSize(*dtype);
                for (const QJsonValue d : c["sizes"].toArray())
                    n *= std::uint64_t(d.toInteger());
                wantDcp[c["file"].toString()] += n;
            }
        }
        QVERIFY(wantDcp.size() >= 4);  // every rank wrote chunks
        QCOMPARE(filesOf(summaryOf(scratch.filePath("dcp/four_ranks").toStdString())), wantDcp);

        // In the window: the chart of a sharded model, none for one archive.
        MainWindow w;
        w.show();
        QVERIFY(openOnOverview(w, folder));
        const OverviewPanel* o = w.documentPage()->overviewPanel();
        QVERIFY2(!o->fileChart()->isHidden(),
                 qPrintable(QString::number(o->fileChart()->bars().size())));
        QCOMPARE(o->fileChart()->bars().size(), std::size_t(3));
        QVERIFY(o->fileChart()->bars()[0].label.endsWith(".safetensors"));
        QVERIFY(openOnOverview(w, TDSTUDIO_DEMO_PATH));
        QVERIFY(w.documentPage()->overviewPanel()->fileChart()->isHidden());
    }

    void clickingABarSelectsTheKey() {
        MainWindow w;
        w.show();
        QVERIFY(openOnOverview(w, TDSTUDIO_DEMO_PATH));
        SizeBarChart* chart = w.documentPage()->overviewPanel()->childrenChart();
        const QRect rgb = chart->barRect(1);
        QCOMPARE(chart->bars()[1].label, QString("rgb"));
        QSignalSpy leaf(w.documentPage()->previewPanel(), &PreviewPanel::leafReady);
        QTest::mouseClick(chart, Qt::LeftButton, {}, rgb.center());
        QVERIFY(w.documentPage()->selectedNode());
        QCOMPARE(QString::fromStdString(w.documentPage()->selectedNode()->key()), QString("rgb"));
        QVERIFY(!w.documentPage()->showsOverview());
        QVERIFY(leaf.wait(20000) || leaf.count() == 1);

        // A nested collection gets its own overview; a leaf bar there selects the leaf.
        QVERIFY(w.selectKeyPath({"episode"}));
        QVERIFY(w.documentPage()->showsOverview());
        QTRY_VERIFY(w.documentPage()->overviewPanel()->isReady());
        QCOMPARE(w.documentPage()->overviewPanel()->summary().keyPath, QStringList({"episode"}));
        QCOMPARE(labels(w.documentPage()->overviewPanel()->childrenChart()),
                 QStringList({"reward", "step", "done"}));
        SizeBarChart* leaves = w.documentPage()->overviewPanel()->leavesChart();
        QTest::mouseClick(leaves, Qt::LeftButton, {}, leaves->barRect(2).center());
        QCOMPARE(w.documentPage()->selectedNode()->keyPath(),
                 (std::vector<std::string>{"episode", "done"}));

        // Bars that are not keys (dtypes) select nothing.
        QVERIFY(w.selectKeyPath({}));
        QTRY_VERIFY(w.documentPage()->overviewPanel()->isReady());
        SizeBarChart* dtypes = w.documentPage()->overviewPanel()->dtypeChart();
        QTest::mouseClick(dtypes, Qt::LeftButton, {}, dtypes->barRect(0).center());
        QVERIFY(w.documentPage()->selectedNode() && !w.documentPage()->selectedNode()->parent());
    }

    // A TorchRL replay buffer dump (make_replay.py): its facts and episodes
    // on the root's overview, an episode's click showing its first row,
    // the table's row header giving both indices, and the rows past the
    // fill level greyed once every row shows (View > Show All Rows).
    void replayBufferOverviewAndRows() {
        QTemporaryDir scratch;
        const QString dir = scratch.filePath("replay");
        QString out, error;
        QVERIFY2(testsupport::runPython({TDSTUDIO_TEST_SUPPORT_DIR "/make_replay.py", dir}, &out,
                                        &error),
                 qPrintable(error));
        MainWindow w;
        w.show();
        QVERIFY(openOnOverview(w, dir + "/ted"));
        OverviewPanel* overview = w.documentPage()->overviewPanel();
        QVERIFY(overview->datasetLabel()->isVisible());
        QVERIFY2(overview->datasetLabel()->text().contains("24 valid of 24 rows"),
                 qPrintable(overview->datasetLabel()->text()));
        QVERIFY(overview->datasetLabel()->text().contains("cursor 18, write_count 42"));
        QTableWidget* episodes = overview->episodeTable();
        QVERIFY(episodes->isVisible());
        QCOMPARE(episodes->rowCount(), 4);
        QCOMPARE(episodes->item(2, 1)->text(), QString("12"));  // traj 5 starts at row 12
        QCOMPARE(episodes->item(2, 2)->text(), QString("4"));

        // An episode's click: its rewards, scrolled to its first row.
        QSignalSpy leaf(w.documentPage()->previewPanel(), &PreviewPanel::leafReady);
        QTest::mouseClick(episodes->viewport(), Qt::LeftButton, {},
                          episodes->visualItemRect(episodes->item(3, 0)).center());
        QVERIFY(w.documentPage()->selectedNode());
        QCOMPARE(w.documentPage()->selectedNode()->keyPath(),
                 (std::vector<std::string>{"next", "reward"}));
        QVERIFY(leaf.wait(20000) || leaf.count() == 1);
        TensorTableModel* table = w.documentPage()->previewPanel()->tableModel();
        std::int64_t row = -1, col = -1;
        QTRY_VERIFY(w.documentPage()->previewPanel()->tableView()->currentCell(&row, &col) &&
                    row == 16);
        // Both indices: oldest first, then the storage's (the buffer wrapped at 18).
        QCOMPARE(table->headerData(0, Qt::Vertical).toString(),
                 QString("%1 · %2").arg(table->firstRow()).arg((18 + table->firstRow()) % 24));

        // Every row of a partly filled buffer: the ones past its fill level grey.
        setReplayRows({true, false});
        QVERIFY(openOnOverview(w, dir + "/partial"));
        QVERIFY(w.selectKeyPath({"obs"}));
        QTRY_VERIFY(table->hasLeaf() && table->totalRows() == 16);
        QCOMPARE(table->headerData(9, Qt::Vertical).toString(), QString("9 · 9"));
        QCOMPARE(table->headerData(10, Qt::Vertical).toString(), QString("– · 10"));
        QVERIFY(!table->data(table->index(9, 0), Qt::ForegroundRole).isValid());
        QVERIFY(table->data(table->index(10, 0), Qt::ForegroundRole).isValid());
        QVERIFY(table->data(table->index(10, 0), Qt::ToolTipRole).toString().contains("Not valid"));
        setReplayRows({});
        // Back to the valid rows: ten of them, none grey.
        QVERIFY(openOnOverview(w, dir + "/partial"));
        QVERIFY(w.selectKeyPath({"obs"}));
        QTRY_VERIFY(table->hasLeaf() && table->totalRows() == 10);
        QVERIFY(!table->data(table->index(9, 0), Qt::ForegroundRole).isValid());

        // The menu's toggle reloads a replay buffer that is open (its
        // store's facts say what it is, not its format's name)...
        QAction* allRows = nullptr;
        for (QAction* a : w.findChildren<QAction*>())
            if (a->text() == "Show &All Rows of Replay Buffers")
                allRows = a;
        QVERIFY(allRows && !allRows->isChecked());
        QSignalSpy loaded(&w, &MainWindow::documentLoaded);
        allRows->trigger();
        QTRY_COMPARE(loaded.count(), 1);
        QTRY_VERIFY(table->hasLeaf() && table->totalRows() == 16);
        allRows->trigger();
        QTRY_COMPARE(loaded.count(), 2);
        QTRY_VERIFY(table->hasLeaf() && table->totalRows() == 10);

        // A stack's rows: the chunk of each, and its row there (part-2 after part-1's 5).
        QVERIFY(openOnOverview(w, dir + "/stack"));
        QVERIFY(w.selectKeyPath({"label"}));
        QTRY_VERIFY(table->hasLeaf() && table->totalRows() == 12);
        QCOMPARE(table->headerData(4, Qt::Vertical).toString(), QString("4 · part-1:4"));
        QCOMPARE(table->headerData(5, Qt::Vertical).toString(), QString("5 · part-2:0"));
        QCOMPARE(table->headerData(11, Qt::Vertical).toString(), QString("11 · part-10:3"));
        // ...and leaves any other document as it is.
        auto* document = w.findChild<Document*>();
        QVERIFY(document);
        QSignalSpy started(document, &Document::loadStarted);
        allRows->trigger();
        allRows->trigger();
        QCOMPARE(started.count(), 0);
    }

    void collectionsOfEveryKindHaveAnOverview() {
        MainWindow w;
        w.show();
        QVERIFY(openOnOverview(w, testsupport::fixturePath("lazy_stack")));
        QVERIFY(w.selectKeyPath({"ls"}));
        QVERIFY(w.documentPage()->showsOverview());
        QTRY_VERIFY(w.documentPage()->overviewPanel()->isReady());
        QCOMPARE(w.documentPage()->overviewPanel()->summary().collections,
                 std::int64_t(2));  // "0" and "1"
        QStringList leaves = labels(w.documentPage()->overviewPanel()->leavesChart());
        leaves.sort();
        QCOMPARE(leaves, QStringList({"(\"0\", \"x\")", "(\"1\", \"x\")"}));

        QVERIFY(openOnOverview(w, testsupport::fixturePath("tensorclass")));
        QCOMPARE(w.documentPage()->overviewPanel()->summary().className.contains("MyTC"), true);
    }

    // A checkpoint's dict or a bare tensor has no batch size: the overview
    // says its kind, and a root tensor is titled "(root)", not "()".
    void rootsThatAreNotTensorDictsSayWhatTheyAre() {
        MainWindow w;
        w.show();
        QVERIFY(openOnOverview(w, testsupport::torchFixturesDir() + "/state_dict.pt"));
        OverviewPanel* o = w.documentPage()->overviewPanel();
        QVERIFY(!o->summary().hasBatchSize);
        QVERIFY2(!o->headline().contains("batch size") &&
                     o->headline().contains("OrderedDict\ncontainer · "),
                 qPrintable(o->headline()));
        QVERIFY(openOnOverview(w, TDSTUDIO_DEMO_PATH));
        QVERIFY(o->headline().contains("batch size [300]"));

        QSignalSpy loaded(&w, &MainWindow::documentLoaded);
        w.openPath(testsupport::torchFixturesDir() + "/bare_tensor.pt");
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 300000);
        PreviewPanel* preview = w.documentPage()->previewPanel();
        QTRY_VERIFY_WITH_TIMEOUT(preview->titleText().startsWith("<b>(root)</b> · "), 60000);
        QVERIFY(!preview->titleText().contains("()"));
    }

    void problemsAreListedAndSelectable() {
        QTemporaryDir dir;
        testsupport::copyTree(testsupport::fixturePath("nested3"), dir.path() + "/n");
        QFile::remove(dir.path() + "/n/l1/y.memmap");  // an error node
        // A leaf whose file is a link out of the dataset.
        QVERIFY(QFile::rename(dir.path() + "/n/x.memmap", dir.path() + "/outside.memmap"));
        QVERIFY(QFile::link(dir.path() + "/outside.memmap", dir.path() + "/n/x.memmap"));

        MainWindow w;
        w.show();
        QVERIFY(openOnOverview(w, dir.path() + "/n"));
        const CollectionSummary& s = w.documentPage()->overviewPanel()->summary();
        QCOMPARE(s.problemCount, std::int64_t(2));
        QListWidget* list = w.documentPage()->overviewPanel()->problemList();
        QCOMPARE(list->count(), 2);
        QStringList texts;
        for (int i = 0; i < list->count(); ++i)
            texts << list->item(i)->text();
        QVERIFY2(texts.filter("linked from outside the dataset").size() == 1 &&
                     texts.filter("outside.memmap").size() == 1,
                 qPrintable(texts.join('\n')));
        QVERIFY2(texts.filter("(\"l1\", \"y\")").size() == 1, qPrintable(texts.join('\n')));

        // Clicking a problem selects its key.
        const int errorRow = texts.indexOf(texts.filter("(\"l1\", \"y\")").front());
        QListWidgetItem* item = list->item(errorRow);
        QTest::mouseClick(list->viewport(), Qt::LeftButton, {},
                          list->visualItemRect(item).center());
        QCOMPARE(w.documentPage()->selectedNode()->keyPath(),
                 (std::vector<std::string>{"l1", "y"}));
    }

    // 100k keys: the walk runs on a worker. Deterministic: the summary can
    // only arrive through the event loop, so right after showNode() returns
    // nothing has been summarised on this thread.
    void largeTreesAreSummarisedOffTheGuiThread() {
        auto td = std::make_shared<tensordict::TensorDict>(tensordict::TensorDict::create({}));
        Node& root = td->mutableRoot();
        constexpr int kKeys = 100000;
        for (int i = 0; i < kKeys; ++i)
            root.addBytes("k" + std::to_string(i), tensordict::DType::Float32, {i % 7 + 1},
                          tensordict::ownedBytes(std::vector<float>(std::size_t(i % 7 + 1))));
        OverviewPanel overview;
        QSignalSpy ready(&overview, &OverviewPanel::summaryReady);
        overview.showNode(td, &td->root());
        QVERIFY(!overview.isReady());
        QCOMPARE(overview.summary().keys, std::int64_t(0));
        QVERIFY(ready.wait(60000));
        QCOMPARE(overview.summary().keys, std::int64_t(kKeys));
        QCOMPARE(overview.summary().leaves, std::int64_t(kKeys));
        QCOMPARE(overview.summary().largestChildren.size(), std::size_t(10));
        QCOMPARE(overview.summary().largestChildren.front().bytes, std::uint64_t(7 * 4));
        QCOMPARE(overview.summary().largestChildren.front().label, QString("k6"));

        // Another node chosen while a walk runs: only the newest is reported.
        overview.showNode(td, &td->root());
        overview.showNode(td, &td->root());
        QVERIFY(ready.wait(60000));
        QCOMPARE(ready.count(), 2);
        QCOMPARE(overview.summary().keys, std::int64_t(kKeys));
    }

    // With keys grouped by their dots, the overview still lists and counts
    // the file's own keys: a state_dict of 9 keys has 9 keys in all, its
    // largest are named as the file names them, and no group is a key.
    void groupedKeysAreSummarisedAsTheFileHasThem() {
        const auto td =
            tensordict::load((testsupport::torchFixturesDir() + "/state_dict.pt").toStdString());
        const tensordict::TensorDict grouped = tensordict::groupKeysByDots(td);
        QVERIFY(grouped.root().children().size() < td.root().children().size());
        const CollectionSummary plain = summarizeCollection(td.root(), 20);
        const CollectionSummary s = summarizeCollection(grouped.root(), 20);
        QCOMPARE(s.keys, plain.keys);
        QCOMPARE(s.keys, std::int64_t(td.root().children().size()));
        QCOMPARE(s.ownKeys, s.keys);  // "Largest keys here (9 of 9)", not of 3 groups
        QCOMPARE(s.collections, plain.collections);
        QCOMPARE(s.totalBytes, plain.totalBytes);
        QStringList labels, expected;
        for (const auto& e : s.largestChildren)
            labels << e.label;
        for (const auto& e : plain.largestChildren)
            expected << e.label;
        QCOMPARE(labels, expected);
        for (const QString& label : labels)
            QVERIFY2(!label.endsWith('.') && !label.contains(", "), qPrintable(label));
        // A group's own summary names its keys in full too.
        const Node* group = grouped.root().children()[0];
        QVERIFY(group->isKeyGroup());
        for (const auto& e : summarizeCollection(*group, 20).largestChildren)
            QVERIFY2(e.label.startsWith(QString::fromStdString(group->key())), qPrintable(e.label));
    }

    void summaryCanBeCancelled() {
        auto td = tensordict::TensorDict::create({});
        Node& root = td.mutableRoot();
        for (int i = 0; i < 10000; ++i)
            root.addTensorDict("d" + std::to_string(i));
        tensordict::CancelToken cancel;
        cancel.cancel();
        const CollectionSummary s = summarizeCollection(td.root(), 10, cancel);
        QVERIFY(s.cancelled);
        QVERIFY(s.keys < 10000);
        const CollectionSummary full = summarizeCollection(td.root(), 10);
        QVERIFY(!full.cancelled);
        QCOMPARE(full.keys, std::int64_t(10000));
        QCOMPARE(full.collections, std::int64_t(10000));
    }
};

QTEST_MAIN(OverviewTest)
#include "tst_overview.moc"
