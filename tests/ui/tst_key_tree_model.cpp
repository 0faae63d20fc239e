// KeyTreeModel and KeyFilterModel over every fixture, checked by
// QAbstractItemModelTester; lazy batches; key search at any depth.

#include <QAbstractItemModelTester>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

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
            filter.setPattern("a");
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
        QByteArray meta = "{";
        for (int i = 0; i < 1000; ++i)
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
        model.fetchAll();
        QCOMPARE(model.rowCount(root), 1000);
        QVERIFY(!model.canFetchMore(root));
        QCOMPARE(model.index(999, 0, root).data().toString(), QString("k999"));
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
        filter.setPattern("W");  // case-insensitive; l1/l2/l3/w is 4 levels down
        QModelIndex idx = filter.index(0, 0);
        QStringList path;
        while (filter.rowCount(idx) > 0) {
            QCOMPARE(filter.rowCount(idx), 1);  // only the path to the match
            idx = filter.index(0, 0, idx);
            path << idx.data().toString();
        }
        QCOMPARE(path, (QStringList{"l1", "l2", "l3", "w"}));
        filter.setPattern("no-such-key");
        QCOMPARE(filter.rowCount(), 0);
        filter.setPattern("");
        QCOMPARE(filter.rowCount(), 1);
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
    }
};

QTEST_MAIN(KeyTreeModelTest)
#include "tst_key_tree_model.moc"
