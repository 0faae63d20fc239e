// KeyTreeModel and KeyFilterModel over every fixture, checked by
// QAbstractItemModelTester; lazy batches; key search at any depth, on a
// worker, over 100k keys without looking at the rest of the tree.

#include <QAbstractItemModelTester>
#include <QFile>
#include <QMap>
#include <QTemporaryDir>
#include <QtTest>

#include "key_index.h"

#include "key_filter_model.h"
#include "key_tree_model.h"
#include "node_text.h"
#include "tensordict/tensordict.h"
#include "testsupport.h"

using namespace tensordict;

namespace {

std::shared_ptr<const TensorDict> open(const QString& path) {
    LoadOptions options;
    options.throwOnError = false;
    return std::make_shared<const TensorDict>(load(path.toStdString(), options));
}

QStringList childKeys(const QAbstractItemModel& m, const QModelIndex& parent) {
    QStringList keys;
    for (int r = 0; r < m.rowCount(parent); ++r)
        keys << m.index(r, 0, parent).data().toString();
    return keys;
}

// Sets `pattern` and waits for its search to complete (the worker's batches
// arrive through the event loop).
bool filterAndWait(KeyFilterModel& filter, const QString& pattern) {
    filter.setPattern(pattern);
    return QTest::qWaitFor([&] { return !filter.isSearching(); }, 300000);
}

// The keys shown by the filter, as paths below the root row.
QStringList shownPaths(const QAbstractItemModel& m, const QModelIndex& parent = {},
                       const QString& prefix = {}) {
    QStringList paths;
    for (int r = 0; r < m.rowCount(parent); ++r) {
        const QModelIndex child = m.index(r, 0, parent);
        const QString path = parent.isValid()
                                 ? prefix + (prefix.isEmpty() ? "" : "/") + child.data().toString()
                                 : QString();
        if (m.rowCount(child) == 0)
            paths << path;
        paths << shownPaths(m, child, path);
    }
    return paths;
}

}  // namespace

class KeyTreeModelTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void modelTesterOnEveryFixture_data() {
        QTest::addColumn<QString>("fixture");
        for (const QString& name : testsupport::fixtureNames())
            QTest::newRow(qPrintable(name)) << name;
    }
    void modelTesterOnEveryFixture() {
        QFETCH(QString, fixture);
        QString path = testsupport::fixturePath(fixture);
        if (fixture.startsWith("archive_"))
            path += ".tdz";
        KeyTreeModel model;
        KeyFilterModel filter;
        filter.setKeyModel(&model);
        model.setTensorDict(open(path), fixture);
        {
            // Qt 6.4's tester re-runs its checks (which call fetchMore) from
            // inside the model's reset and insert signals and then reports
            // its own nested change as overlapping. So it is attached after
            // each reset and does the lazy fetching itself, through every
            // batch of every node.
            QAbstractItemModelTester tester(&model,
                                            QAbstractItemModelTester::FailureReportingMode::QtTest);
            QAbstractItemModelTester filterTester(
                &filter, QAbstractItemModelTester::FailureReportingMode::QtTest);
            QVERIFY(!model.canFetchMore(model.index(0, 0)));
            QVERIFY(filterAndWait(filter, "a"));  // batches arrive under the testers' eyes
            filter.setPattern("");
            QCOMPARE(model.rowCount(), 1);
            QCOMPARE(model.index(0, 0).data().toString(), fixture);
        }
        model.setTensorDict(nullptr, {});
        QAbstractItemModelTester emptyTester(
            &model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0);
    }

    void columnsDescribeNodes() {
        KeyTreeModel model;
        model.setTensorDict(open(testsupport::fixturePath("simple")), "simple");
        const QModelIndex root = model.index(0, 0);
        QVERIFY(model.hasChildren(root));
        QVERIFY(model.canFetchMore(root));
        model.fetchMore(root);
        QCOMPARE(childKeys(model, root), (QStringList{"a", "b"}));
        const QModelIndex b = model.index(1, 0, root);
        QCOMPARE(model.index(1, KeyTreeModel::KindColumn, root).data().toString(),
                 QString("TensorDict"));
        QVERIFY(model.hasChildren(b));
        QCOMPARE(model.rowCount(b), 0);  // not fetched yet: lazy
        model.fetchMore(b);
        const QModelIndex c = model.index(0, 0, b);
        QCOMPARE(c.data().toString(), QString("c"));
        auto cell = [&](int col) { return model.index(0, col, b).data().toString(); };
        QCOMPARE(cell(KeyTreeModel::KindColumn), QString("tensor"));
        QCOMPARE(cell(KeyTreeModel::ShapeColumn), QString("[3, 2]"));
        QCOMPARE(cell(KeyTreeModel::DTypeColumn), QString("torch.float32"));
        QCOMPARE(cell(KeyTreeModel::SizeColumn), QString("24 B"));
        QCOMPARE(cell(KeyTreeModel::StorageColumn), QString("file"));
        QCOMPARE(model.index(0, KeyTreeModel::SizeColumn).data().toString(),
                 QString("36 B"));  // root total
        QCOMPARE(c.data(KeyTreeModel::KeyPathRole).toStringList(), (QStringList{"b", "c"}));
        QCOMPARE(model.parent(c), b);
    }

    // Each dtype as the file names it: safetensors' "F8_E4M3", with torch's
    // name in the tooltip; torch's name where the format uses it.
    void dtypesAreNamedAsTheFileNamesThem() {
        QTemporaryDir dir;
        const QString file = dir.filePath("low.safetensors");
        QString error;
        QVERIFY2(testsupport::runPython({TDSTUDIO_TEST_SUPPORT_DIR "/make_low_precision.py", file},
                                        nullptr, &error),
                 qPrintable(error));
        KeyTreeModel model;
        model.setTensorDict(open(file), "low");
        const QModelIndex root = model.index(0, 0);
        model.fetchMore(root);
        QMap<QString, QString> named, tips;
        for (int r = 0; r < model.rowCount(root); ++r) {
            const QString key = model.index(r, 0, root).data().toString();
            named[key] = model.index(r, KeyTreeModel::DTypeColumn, root).data().toString();
            tips[key] =
                model.index(r, KeyTreeModel::DTypeColumn, root).data(Qt::ToolTipRole).toString();
        }
        QCOMPARE(named.value("f8_e4m3.weights"), QString("F8_E4M3"));
        QCOMPARE(tips.value("f8_e4m3.weights"), QString("torch.float8_e4m3fn"));
        QCOMPARE(named.value("f8_e5m2fnuz.every_code"), QString("F8_E5M2FNUZ"));
        QCOMPARE(named.value("f8_e8m0.weights"), QString("F8_E8M0"));
        QCOMPARE(tips.value("f8_e8m0.weights"), QString("torch.float8_e8m0fnu"));
        QCOMPARE(named.value("f4.weights"), QString("F4"));
        QCOMPARE(tips.value("f4.weights"), QString("float4_e2m1fn"));
        QCOMPARE(named.value("f6_e3m2.every_code"), QString("F6_E3M2"));
    }

    void archiveStorageColumn() {
        QTemporaryDir dir;
        const QString zip = dir.path() + "/x.tdz";
        QVERIFY(testsupport::packWithPython(testsupport::fixturePath("simple"), zip, "bzip2"));
        KeyTreeModel model;
        model.setTensorDict(open(zip), "x.tdz");
        model.fetchAll();
        QCOMPARE(model.index(0, KeyTreeModel::StorageColumn, model.index(0, 0)).data().toString(),
                 QString("compressed entry (bzip2)"));
    }

    void largeNodesArriveInBatches() {
        QTemporaryDir dir;
        constexpr int kKeys = 2 * KeyTreeModel::kFetchBatch + 100;  // three batches, the last short
        QByteArray meta = "{";
        for (int i = 0; i < kKeys; ++i)
            meta +=
                QString(
                    "\"k%1\": {\"device\": \"cpu\", \"shape\": [0], \"dtype\": \"torch.int8\"}, ")
                    .arg(i)
                    .toUtf8();
        meta +=
            "\"shape\": [], \"device\": \"cpu\", \"_type\": \"<class "
            "'tensordict._td.TensorDict'>\"}";
        QFile f(dir.path() + "/meta.json");
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(meta);
        f.close();
        KeyTreeModel model;
        model.setTensorDict(open(dir.path()), "big");
        const QModelIndex root = model.index(0, 0);
        model.fetchMore(root);
        QCOMPARE(model.rowCount(root), KeyTreeModel::kFetchBatch);
        QVERIFY(model.canFetchMore(root));
        model.fetchMore(root);
        QCOMPARE(model.rowCount(root), 2 * KeyTreeModel::kFetchBatch);
        model.fetchAll();
        QCOMPARE(model.rowCount(root), kKeys);
        QVERIFY(!model.canFetchMore(root));
        QCOMPARE(model.index(kKeys - 1, 0, root).data().toString(), QString("k%1").arg(kKeys - 1));
        KeyTreeModel fresh;
        fresh.setTensorDict(open(dir.path()), "again");
        QAbstractItemModelTester tester(&fresh,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        // The tester fetches one batch per parent on its own, within its rules.
        QCOMPARE(fresh.rowCount(fresh.index(0, 0)), KeyTreeModel::kFetchBatch);
    }

    void filterFindsKeysAtAnyDepth() {
        KeyTreeModel model;
        KeyFilterModel filter;
        filter.setKeyModel(&model);
        model.setTensorDict(open(testsupport::fixturePath("nested3")), "nested3");
        QVERIFY(filterAndWait(filter, "W"));  // case-insensitive; l1/l2/l3/w is 4 levels down
        QCOMPARE(filter.matchCount(), 1);
        QModelIndex idx = filter.index(0, 0);
        QStringList path;
        while (filter.rowCount(idx) > 0) {
            QCOMPARE(filter.rowCount(idx), 1);  // only the path to the match
            idx = filter.index(0, 0, idx);
            path << idx.data().toString();
        }
        QCOMPARE(path, (QStringList{"l1", "l2", "l3", "w"}));
        QVERIFY(filterAndWait(filter, "no-such-key"));
        QCOMPARE(filter.rowCount(), 0);
        filter.setPattern("");
        QCOMPARE(filter.rowCount(), 1);
    }

    void openingLooksAtNothingBeyondTheFirstScreen() {
        QTemporaryDir dir;
        testsupport::writeWideTree(dir.path(), 100, 1000);
        auto td = open(dir.path());
        KeyTreeModel model;
        // As the Document hands it over: indexed on its loader thread.
        model.setTensorDict(td, "wide", KeyIndex::build(td));
        QCOMPARE(model.handedOverCount(), 1);  // the root row, nothing below
        const QModelIndex root = model.index(0, 0);
        model.fetchMore(root);
        QCOMPARE(model.handedOverCount(), 1 + 100);
        QCOMPARE(model.fetchedCount(td->root().children()[42]), 0);
        // Sizes of the first screen come from the index: no subtree is walked here.
        QCOMPARE(model.index(0, KeyTreeModel::SizeColumn).data().toString(), QString("0 B"));
        QCOMPARE(model.index(42, KeyTreeModel::SizeColumn, root).data().toString(), QString("0 B"));
        QCOMPARE(model.countedSizes(), 0);
        QVERIFY(!model.canFetchMore(root));
        QVERIFY(model.canFetchMore(model.index(42, 0, root)));

        // Without an index (still building), a collection's size is counted once, when shown.
        KeyTreeModel bare;
        bare.setTensorDict(td, "wide");
        QCOMPARE(bare.handedOverCount(), 1);
        QCOMPARE(bare.totalBytes(&td->root()), std::uint64_t(0));
        QVERIFY(bare.countedSizes() <= 1);
    }

    void filterFindsAKeyAmong100kFetchingOnlyItsPath() {
        QTemporaryDir dir;
        testsupport::writeWideTree(dir.path(), 100, 1000);
        auto td = open(dir.path());
        KeyTreeModel model;
        KeyFilterModel filter;
        filter.setKeyModel(&model);
        model.setTensorDict(td, "wide");
        QSignalSpy paths(&filter, &KeyFilterModel::matchPathsShown);
        QVERIFY(filterAndWait(filter, "GROUP_042/leaf_07"));  // no key holds a '/'
        QCOMPARE(filter.rowCount(), 0);
        QVERIFY(filterAndWait(filter, "leaf_0300"));  // one in every group, row 300
        QCOMPARE(filter.matchCount(), 100);
        const QModelIndex root = filter.index(0, 0);
        QCOMPARE(filter.rowCount(root), 100);
        QCOMPARE(filter.rowCount(filter.index(42, 0, root)), 1);
        QCOMPARE(filter.index(0, 0, filter.index(42, 0, root)).data().toString(),
                 QString("leaf_0300"));
        // Each group was handed to the view only up to its match's batch.
        constexpr int kUpToMatch =
            std::min(1000, (300 / KeyTreeModel::kFetchBatch + 1) * KeyTreeModel::kFetchBatch);
        QCOMPARE(model.fetchedCount(td->root().children()[42]), kUpToMatch);
        QCOMPARE(model.handedOverCount(), 1 + 100 + 100 * kUpToMatch);
        QVERIFY(paths.count() >= 1);
    }

    void newerPatternSupersedesOlder() {
        QTemporaryDir dir;
        testsupport::writeWideTree(dir.path(), 100, 1000);
        auto td = open(dir.path());
        KeyTreeModel model;
        KeyFilterModel filter;
        filter.setKeyModel(&model);
        model.setTensorDict(td, "wide", KeyIndex::build(td));
        QSignalSpy finished(&filter, &KeyFilterModel::searchFinished);
        // The older search has found everything and its batches are on their
        // way (posted, not yet delivered)...
        filter.setPattern("leaf_0001");
        filter.search()->waitForWorker();
        QCOMPARE(filter.matchCount(), 0);
        // ...when a newer pattern replaces it: none of the older matches show.
        QVERIFY(filterAndWait(filter, "group_099"));
        QCOMPARE(finished.count(), 1);
        QCOMPARE(finished.takeFirst().at(0).toInt(), 1);
        QCOMPARE(filter.matchCount(), 1);
        QCoreApplication::processEvents();  // anything the old search still posted
        QCOMPARE(shownPaths(filter), QStringList{"group_099"});
    }

    void controlCharactersAndEmptyKeysAreVisible() {
        QCOMPARE(nodetext::displayKey("tab\tkey"), QString("tab\\tkey"));
        QCOMPARE(nodetext::displayKey(""), QString("\"\""));
        QCOMPARE(nodetext::keyPathText({"sub/dir", "x y"}), QString("(\"sub/dir\", \"x y\")"));
        QCOMPARE(nodetext::keyPathText({"q\"uote"}), QString("\"q\\\"uote\""));
    }

    void errorNodesAreMarked() {
        QTemporaryDir dir;
        testsupport::copyTree(testsupport::fixturePath("simple"), dir.path() + "/s");
        QFile::remove(dir.path() + "/s/b/c.memmap");
        KeyTreeModel model;
        model.setTensorDict(open(dir.path() + "/s"), "s");
        model.fetchAll();
        const QModelIndex c = model.index(0, 0, model.index(1, 0, model.index(0, 0)));
        QVERIFY(c.data(KeyTreeModel::IsErrorRole).toBool());
        QVERIFY(c.data(Qt::ToolTipRole).toString().contains("c.memmap"));
        QCOMPARE(c.data().toString(), QString("c"));
        QCOMPARE(c.data(Qt::ForegroundRole).value<QBrush>().color(), QColor(0xc0, 0x1c, 0x28));
    }

    // A part of a kind tdstudio does not decode is marked, but grey: not damage.
    void partsNotReadHereAreGrey() {
        QTemporaryDir dir;
        const QString npz = dir.filePath("mixed.npz");
        QVERIFY(testsupport::runPython(
            {"-c",
             "import sys, numpy as np\n"
             "np.savez(sys.argv[1], labels=np.array(['a', 'bc']), x=np.arange(3))\n",
             npz}));
        KeyTreeModel model;
        model.setTensorDict(open(npz), "mixed");
        model.fetchAll();
        const QModelIndex root = model.index(0, 0);
        QCOMPARE(model.rowCount(root), 2);
        const QModelIndex labels = model.index(0, 0, root);
        QCOMPARE(labels.data().toString(), QString("labels"));
        QVERIFY(labels.data(KeyTreeModel::IsErrorRole).toBool());
        QVERIFY(labels.data(Qt::ToolTipRole).toString().contains("Unicode strings"));
        QCOMPARE(labels.data(Qt::ForegroundRole).value<QBrush>().color(), QColor(0x6e, 0x6e, 0x6e));
        QVERIFY(!model.index(1, 0, root).data(KeyTreeModel::IsErrorRole).toBool());
    }
};

QTEST_MAIN(KeyTreeModelTest)
#include "tst_key_tree_model.moc"
