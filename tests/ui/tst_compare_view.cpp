// Comparing two tensordicts in the main window: each key's status in the
// union tree, the "differences only" filter, the status-bar counts, the table
// highlighting exactly the differing cells, next-difference navigation, the
// image, plot and statistics of A - B, descriptions of keys that cannot be
// compared element by element, drop with a modifier, cancel, lazy rows.

#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QMimeData>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTreeView>
#include <QtTest>

#include "compare_filter_model.h"
#include "compare_image_view.h"
#include "compare_job.h"
#include "compare_panel.h"
#include "compare_tree.h"
#include "compare_tree_model.h"
#include "compare_view.h"
#include "document_page.h"
#include "libzip_reader.h"
#include "main_window.h"
#include "plot_view.h"
#include "slice_selector.h"
#include "statistics_view.h"
#include "tensor_table_model.h"
#include "tensor_table_view.h"
#include "tensordict/save.h"
#include "testsupport.h"

using namespace tensordict;
using Status = CompareTree::Status;

namespace {

constexpr int kTimeoutMs = 30000;  // a bound for a broken comparison, not a timing

std::vector<float> iota(int n, float start = 0) {
    std::vector<float> v(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i)
        v[static_cast<std::size_t>(i)] = start + float(i);
    return v;
}

// A and B differ in: sub/x (2 elements), dtype_changed (dtype), img (3
// elements over two slices), series (1 element), reshaped (shape), note2
// (value); gone is only in A; added and extra (a subtree) only in B.
void writeDatasets(const QString& a, const QString& b) {
    for (int side = 0; side < 2; ++side) {
        const bool isB = side == 1;
        TensorDict td = TensorDict::create();
        Node& root = td.mutableRoot();
        root.addBytes("obs", DType::Float32, {3, 4}, ownedBytes(iota(12)));
        root.addBytes("action", DType::Int64, {3, 2},
                      ownedBytes(std::vector<std::int64_t>{1, 2, 3, 4, 5, 6}));
        Node& sub = root.addTensorDict("sub");
        std::vector<float> x = iota(6, 10);
        if (isB)
            x[1] += 1, x[4] = -x[4];
        sub.addBytes("x", DType::Float32, {2, 3}, ownedBytes(x));
        sub.addBytes("same", DType::Float32, {4}, ownedBytes(iota(4)));
        if (!isB)
            root.addBytes("gone", DType::Float32, {2}, ownedBytes(iota(2)));
        root.addNonTensor("note", Value("hi"));
        root.addNonTensor("note2", Value(isB ? "ho" : "hi"));
        if (isB)
            root.addBytes("dtype_changed", DType::Float64, {2},
                          ownedBytes(std::vector<double>{1, 2}));
        else
            root.addBytes("dtype_changed", DType::Float32, {2}, ownedBytes(iota(2, 1)));
        std::vector<float> img = iota(24);
        if (isB)
            img[5] += 0.5f, img[13] -= 2, img[22] += 1;
        root.addBytes("img", DType::Float32, {2, 3, 4}, ownedBytes(img));
        std::vector<float> series = iota(8);
        if (isB)
            series[3] = 10;
        root.addBytes("series", DType::Float32, {8}, ownedBytes(series));
        root.addBytes("reshaped", DType::Float32,
                      isB ? std::vector<std::int64_t>{3, 2} : std::vector<std::int64_t>{2, 3},
                      ownedBytes(iota(6)));
        if (isB) {
            root.addBytes("added", DType::Int32, {3},
                          ownedBytes(std::vector<std::int32_t>{7, 8, 9}));
            root.addTensorDict("extra").addBytes("y", DType::Float32, {2}, ownedBytes(iota(2)));
        }
        save(td, (isB ? b : a).toStdString());
    }
}

// Key paths ("a/b"; "" for the root) of every row of `m`, depth first.
QStringList rows(const QAbstractItemModel* m, const QModelIndex& parent = {}) {
    QStringList out;
    for (int r = 0; r < m->rowCount(parent); ++r) {
        const QModelIndex i = m->index(r, 0, parent);
        out << i.data(CompareTreeModel::KeyPathRole).toStringList().join('/');
        out << rows(m, i);
    }
    return out;
}

const CompareTree::Item* itemAt(MainWindow& w, const QString& path) {
    std::vector<std::string> keys;
    for (const QString& k : path.split('/', Qt::SkipEmptyParts))
        keys.push_back(k.toStdString());
    return w.compareView()->treeModel()->tree()->find(keys);
}

Status statusOf(MainWindow& w, const QString& path) {
    const CompareTree::Item* item = itemAt(w, path);
    return item ? item->status : Status::Pending;
}

}  // namespace

class CompareViewTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void cleanup() { testsupport::verifyArchivesWithLibzip(scratch_.path()); }

    void initTestCase() {
        QVERIFY(scratch_.isValid());
        testsupport::isolateSettings("tst_compare_view");
        QSettings().clear();
        a_ = scratch_.path() + "/a";
        b_ = scratch_.path() + "/b.tdz";
        writeDatasets(a_, b_);
    }

    void statusesAndCounts() {
        MainWindow w;
        w.show();
        QVERIFY(openAndCompare(w));
        QCOMPARE(w.windowTitle(), QString("a ↔ b.tdz — tdstudio"));

        const QList<std::pair<QString, Status>> expected = {
            {"", Status::Same},
            {"obs", Status::Same},
            {"action", Status::Same},
            {"sub", Status::Same},
            {"sub/x", Status::Changed},
            {"sub/same", Status::Same},
            {"gone", Status::OnlyInA},
            {"note", Status::Same},
            {"note2", Status::Changed},
            {"dtype_changed", Status::Changed},
            {"img", Status::Changed},
            {"series", Status::Changed},
            {"reshaped", Status::Changed},
            {"added", Status::OnlyInB},
            {"extra", Status::OnlyInB},
            {"extra/y", Status::OnlyInB},
        };
        for (const auto& [path, status] : expected) {
            QVERIFY2(itemAt(w, path), qPrintable(path));
            QVERIFY2(statusOf(w, path) == status, qPrintable(path));
        }
        // Collections holding differences are marked, with how many.
        QCOMPARE(itemAt(w, "sub")->differingBelow, 1);
        QCOMPARE(itemAt(w, "")->differingBelow, 9);
        QVERIFY(itemAt(w, "sub")->reported);
        QVERIFY(!itemAt(w, "extra/y")->reported);  // below a key B alone has: not counted
        QCOMPARE(itemAt(w, "sub/x")->values->differing, std::uint64_t(2));
        QCOMPARE(itemAt(w, "img")->values->differing, std::uint64_t(3));

        // The tree: B's extra keys after A's, the status column as text and colour.
        CompareTreeModel* model = w.compareView()->treeModel();
        QAbstractItemModelTester tester(model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        const QModelIndex root = model->index(0, 0);
        QCOMPARE(model->rowCount(root), 12);
        QCOMPARE(model->index(10, 0, root).data().toString(), QString("added"));
        QCOMPARE(model->index(11, 0, root).data().toString(), QString("extra"));
        const QModelIndex sub = model->indexOf(itemAt(w, "sub"), CompareTreeModel::StatusColumn);
        QCOMPARE(sub.data().toString(), QString("differs: 1 inside"));
        const QModelIndex gone = model->indexOf(itemAt(w, "gone"), CompareTreeModel::StatusColumn);
        QCOMPARE(gone.data().toString(), QString("only in A"));
        QVERIFY(gone.data(Qt::BackgroundRole).isValid());
        QCOMPARE(model->indexOf(itemAt(w, "gone"), CompareTreeModel::BColumn).data().toString(),
                 QString("—"));
        const QModelIndex x =
            model->indexOf(itemAt(w, "sub/x"), CompareTreeModel::DifferenceColumn);
        QVERIFY(x.isValid());  // its collection opened: it holds a difference
        QVERIFY(x.data().toString().startsWith("values: 2 of 6 differ"));
        QCOMPARE(model->indexOf(itemAt(w, "reshaped"), CompareTreeModel::DifferenceColumn)
                     .data()
                     .toString(),
                 QString("shape: [2, 3] → [3, 2]"));
        QCOMPARE(model->indexOf(itemAt(w, "note2"), CompareTreeModel::DifferenceColumn)
                     .data()
                     .toString(),
                 QString("value: \"hi\" → \"ho\""));
        QVERIFY(!model->indexOf(itemAt(w, "obs"), CompareTreeModel::KeyColumn)
                     .data(Qt::BackgroundRole)
                     .isValid());

        // The counts, in the status bar.
        QLabel* counts = w.compareView()->countsLabel();
        QCOMPARE(counts->text(), QString("6 changed, 1 only in A, 2 only in B"));
        QVERIFY(w.statusBar()->isAncestorOf(counts));
        QVERIFY(counts->isVisible());
        QCOMPARE(w.compareView()->countsText(), counts->text());
        screenshot(&w, "compare-tree.png");
    }

    void differencesOnlyFilter() {
        MainWindow w;
        w.show();
        QVERIFY(openAndCompare(w));
        QAbstractItemModel* view = w.compareView()->treeView()->model();
        w.compareView()->differencesOnlyBox()->setChecked(true);
        // In A's order (as loaded: leaves, collections, non-tensors), then B's extra keys.
        QCOMPARE(rows(view), (QStringList{"", "gone", "dtype_changed", "img", "series", "reshaped",
                                          "sub", "sub/x", "note2", "added", "extra", "extra/y"}));
        QVERIFY(w.compareView()->treeView()->isExpanded(view->index(5, 0, view->index(0, 0))));

        // With a key pattern too: both must hold (ancestors still lead to matches).
        QTest::keyClicks(w.compareView()->filterEdit(), "x");
        QCOMPARE(rows(view), (QStringList{"", "sub", "sub/x", "extra"}));
        w.compareView()->filterEdit()->clear();

        w.compareView()->differencesOnlyBox()->setChecked(false);
        const QStringList all = rows(view);
        for (const char* key : {"obs", "action", "sub/same", "note"})
            QVERIFY2(all.contains(key), key);

        // Turned on before the results arrive, it follows them as they come.
        MainWindow w2;
        w2.show();
        QVERIFY(open(w2, a_));
        w2.compareView()->differencesOnlyBox()->setChecked(true);
        QSignalSpy finished(&w2, &MainWindow::comparisonFinished);
        w2.compareWith(b_);
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, kTimeoutMs);
        QCOMPARE(rows(w2.compareView()->treeView()->model()).size(), 12);
    }

    void tableHighlightsExactlyTheDifferingCells() {
        MainWindow w;
        w.show();
        QVERIFY(openAndCompare(w));
        ComparePanel* panel = w.compareView()->panel();
        QSignalSpy ready(panel, &ComparePanel::leafReady);
        QVERIFY(w.selectKeyPath({"sub", "x"}));
        QTRY_VERIFY_WITH_TIMEOUT(ready.count() == 1, kTimeoutMs);
        panel->setMode(ComparePanel::TableMode);
        TensorTableModel* table = panel->tableModel();
        QCOMPARE(table->totalRows(), 2);
        QCOMPARE(table->totalCols(), 3);
        // x[1] and x[4] differ: (0, 1) and (1, 1).
        for (int r = 0; r < 2; ++r)
            for (int c = 0; c < 3; ++c) {
                const bool expected = (r == 0 && c == 1) || (r == 1 && c == 1);
                QCOMPARE(table->differs(r, c), expected);
                QCOMPARE(table->index(r, c).data(Qt::BackgroundRole).isValid(), expected);
            }
        using Shown = TensorTableModel::Shown;
        QCOMPARE(table->text(0, 1, Shown::Leaf), QString("11."));
        QCOMPARE(table->text(0, 1, Shown::Other), QString("12."));
        QCOMPARE(table->text(0, 1, Shown::Difference), QString("-1."));
        QCOMPARE(table->text(1, 1, Shown::Difference), QString("28."));
        QCOMPARE(table->text(0, 0, Shown::Difference), QString("0"));  // not "0." or "-0."
        QCOMPARE(table->index(0, 1).data(Qt::ToolTipRole).toString(),
                 QString("A: 11.\nB: 12.\nA − B: -1."));
        table->setShown(Shown::Other);
        QCOMPARE(table->index(1, 1).data().toString(), QString("-14."));
        QVERIFY(panel->summary().contains("values: 2 of 6 differ"));

        // A leaf that is the same: nothing highlighted.
        QVERIFY(w.selectKeyPath({"obs"}));
        QTRY_VERIFY_WITH_TIMEOUT(ready.count() == 2, kTimeoutMs);
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 4; ++c)
                QVERIFY(!panel->tableModel()->differs(r, c));
    }

    void nextDifferenceVisitsInOrderAndWraps() {
        MainWindow w;
        w.show();
        QVERIFY(openAndCompare(w));
        ComparePanel* panel = w.compareView()->panel();
        QSignalSpy ready(panel, &ComparePanel::leafReady);
        QVERIFY(w.selectKeyPath({"img"}));
        QTRY_VERIFY_WITH_TIMEOUT(ready.count() == 1, kTimeoutMs);
        panel->setMode(ComparePanel::TableMode);
        QSignalSpy shown(panel, &ComparePanel::differenceShown);
        // Flat 5 = [0, 1, 1], 13 = [1, 0, 1], 22 = [1, 2, 2]; rows dim 1, columns dim 2.
        const struct {
            qint64 flat;
            std::int64_t slice, row, col;
            bool wrapped;
        } visits[] = {{5, 0, 1, 1, false},
                      {13, 1, 0, 1, false},
                      {22, 1, 2, 2, false},
                      {5, 0, 1, 1, true},
                      {13, 1, 0, 1, false}};
        for (const auto& v : visits) {
            const int before = shown.count();
            panel->nextDifference();
            QTRY_VERIFY_WITH_TIMEOUT(shown.count() == before + 1, kTimeoutMs);
            QCOMPARE(shown.last().at(0).toLongLong(), v.flat);
            QCOMPARE(shown.last().at(1).toBool(), v.wrapped);
            QCOMPARE(panel->tableSlice()->slice().index[0], v.slice);
            QCOMPARE(panel->tableModel()->slice().index[0], v.slice);
            std::int64_t row = -1, col = -1;
            QVERIFY(panel->tableView()->currentCell(&row, &col));
            QCOMPARE(row, v.row);
            QCOMPARE(col, v.col);
            QVERIFY(panel->tableModel()->differs(row, col));
        }
        screenshot(&w, "compare-table.png");

        // F3, the View menu's Next Difference, from the Statistics tab too:
        // the table shows it (on main F3 was in no menu and did nothing there).
        panel->setMode(ComparePanel::StatisticsMode);
        const int before = shown.count();
        QTest::keyClick(&w, Qt::Key_F3);
        QTRY_VERIFY_WITH_TIMEOUT(shown.count() == before + 1, kTimeoutMs);
        QCOMPARE(shown.last().at(0).toLongLong(), qint64(22));
        QCOMPARE(panel->mode(), ComparePanel::TableMode);
        bool inMenu = false;
        for (QAction* a : w.findChildren<QAction*>())
            inMenu = inMenu ||
                     (a->text() == "Next &Difference" && a->shortcut() == QKeySequence(Qt::Key_F3));
        QVERIFY(inMenu);
        // A key that is not a pair of leaves says what F3 needs.
        QVERIFY(w.selectKeyPath({"sub"}));
        QTest::keyClick(&w, Qt::Key_F3);
        QVERIFY(w.statusBar()->currentMessage().startsWith("Select a changed leaf"));

        // A leaf without differences says so.
        QVERIFY(w.selectKeyPath({"obs"}));
        QTRY_VERIFY_WITH_TIMEOUT(ready.count() == 2, kTimeoutMs);
        QSignalSpy none(panel, &ComparePanel::noDifference);
        panel->nextDifference();
        QTRY_VERIFY_WITH_TIMEOUT(none.count() == 1, kTimeoutMs);
    }

    void imagePlotAndStatisticsOfTheDifference() {
        MainWindow w;
        w.resize(1600, 900);
        w.show();
        QVERIFY(openAndCompare(w));
        ComparePanel* panel = w.compareView()->panel();
        QSignalSpy ready(panel, &ComparePanel::leafReady);
        QVERIFY(w.selectKeyPath({"img"}));
        QTRY_VERIFY_WITH_TIMEOUT(ready.count() == 1, kTimeoutMs);
        panel->setMode(ComparePanel::ImageMode);
        CompareImageView* images = panel->imageView();
        QTRY_VERIFY_WITH_TIMEOUT(
            !images->isRendering() && !images->images().difference.image.isNull(), kTimeoutMs);
        const ComparisonImages& r = images->images();
        QCOMPARE(r.a.image.size(), QSize(4, 3));
        QCOMPARE(r.a.low, r.b.low);  // one colour range for both
        QCOMPARE(r.a.high, r.b.high);
        QCOMPARE(r.maxAbsDiff, 0.5);  // slice 0: only [0, 1, 1] differs, A − B = -0.5
        for (int y = 0; y < 3; ++y)
            for (int x = 0; x < 4; ++x) {
                const QColor c = r.difference.image.pixelColor(x, y);
                if (x == 1 && y == 1) {
                    QVERIFY(c.blue() > 150 && c.red() < 100);  // A < B: blue
                } else {
                    QVERIFY2(c.red() >= 250 && c.green() >= 250 && c.blue() >= 250,
                             qPrintable(QString("(%1, %2)").arg(x).arg(y)));  // equal: white
                }
            }
        images->sliceSelector()->setIndex(0, 1);  // slice 1: [1, 0, 1] is 2 more in A (red)
        QTRY_VERIFY_WITH_TIMEOUT(!images->isRendering() && images->images().maxAbsDiff == 2,
                                 kTimeoutMs);
        const QColor red = images->images().difference.image.pixelColor(1, 0);
        QVERIFY(red.red() > 150 && red.blue() < 100);

        // The plot overlays both series.
        QVERIFY(w.selectKeyPath({"series"}));
        QTRY_VERIFY_WITH_TIMEOUT(ready.count() == 2, kTimeoutMs);
        panel->setMode(ComparePanel::PlotMode);
        QTRY_VERIFY_WITH_TIMEOUT(panel->plotView()->otherPointCount() == 8, kTimeoutMs);
        QCOMPARE(panel->plotView()->pointCount(), 8);

        // The statistics are those of A − B: one element is 3 − 10.
        QSignalSpy computed(panel->statisticsView(), &StatisticsView::finished);
        panel->setMode(ComparePanel::StatisticsMode);
        QTRY_VERIFY_WITH_TIMEOUT(computed.count() == 1, kTimeoutMs);
        const Statistics& s = panel->statisticsView()->result();
        QCOMPARE(s.count, std::int64_t(8));
        QCOMPARE(s.zeros, std::int64_t(7));
        QCOMPARE(s.min, -7.0);
        QCOMPARE(s.max, 0.0);
    }

    void describesWhatCannotBeComparedElementwise() {
        MainWindow w;
        w.show();
        QVERIFY(openAndCompare(w));
        ComparePanel* panel = w.compareView()->panel();

        QVERIFY(w.selectKeyPath({"reshaped"}));
        QVERIFY(!panel->showsValues());
        QString text = panel->description();
        QVERIFY2(text.contains("[2, 3]") && text.contains("[3, 2]"), qPrintable(text));
        QVERIFY(panel->summary().contains("shape: [2, 3] → [3, 2]"));
        screenshot(&w, "compare-description.png");

        QVERIFY(w.selectKeyPath({"note2"}));
        text = panel->description();
        QVERIFY2(text.contains("\"hi\"") && text.contains("\"ho\""), qPrintable(text));

        QVERIFY(w.selectKeyPath({"gone"}));
        QVERIFY(panel->description().startsWith("Only A has this key"));
        QVERIFY(w.selectKeyPath({"extra", "y"}));
        QVERIFY(panel->description().startsWith("Only B has this key (A lacks its parent too)"));

        QVERIFY(w.selectKeyPath({"sub"}));
        text = panel->description();
        QVERIFY2(text.contains("1 key inside differ") && text.contains("(\"sub\", \"x\")"),
                 qPrintable(text));

        // Same shape, another dtype: the values show, the summary names the dtypes.
        QSignalSpy ready(panel, &ComparePanel::leafReady);
        QVERIFY(w.selectKeyPath({"dtype_changed"}));
        QTRY_VERIFY_WITH_TIMEOUT(ready.count() == 1, kTimeoutMs);
        QVERIFY(panel->summary().contains("dtype: float32 → float64"));
        QVERIFY(!panel->tableModel()->differs(0, 0));
    }

    void dropWithModifierComparesAndCloseGoesBack() {
        MainWindow w;
        w.show();
        QVERIFY(open(w, a_));
        QVERIFY(w.selectKeyPath({"sub", "x"}));
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(b_)});
        QSignalSpy started(&w, &MainWindow::comparisonStarted);
        QSignalSpy finished(&w, &MainWindow::comparisonFinished);
        QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton,
                        Qt::ControlModifier);
        QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton,
                              Qt::ControlModifier);
        QApplication::sendEvent(&w, &enter);
        QVERIFY(enter.isAccepted());
        QApplication::sendEvent(&w, &drop);
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, kTimeoutMs);
        QCOMPARE(started.count(), 1);
        QVERIFY(w.isComparing());
        QCOMPARE(w.currentPath(), a_);  // A stays open
        QVERIFY(w.compareView()->isVisible());
        QCOMPARE(w.compareView()->currentKeyPath(), (QStringList{"sub", "x"}));  // kept
        QVERIFY(w.statusBar()->currentMessage().startsWith("Compared with"));

        w.closeComparison();
        QVERIFY(!w.isComparing());
        // The comparison's message goes with it (it stayed on main).
        QVERIFY2(!w.statusBar()->currentMessage().contains("Compared with"),
                 qPrintable(w.statusBar()->currentMessage()));
        QVERIFY(!w.compareView()->isVisible());
        QVERIFY(w.documentPage()->treeView()->isVisible());
        QVERIFY(!w.compareView()->countsLabel()->isVisible());
        QCOMPARE(w.windowTitle(), QString("a — tdstudio"));
        QVERIFY(w.documentPage()->selectedNode() && w.documentPage()->selectedNode()->key() == "x");

        // Without a modifier, a drop opens.
        QSignalSpy loaded(&w, &MainWindow::documentLoaded);
        QDragEnterEvent plainEnter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton,
                                   Qt::NoModifier);
        QApplication::sendEvent(&w, &plainEnter);
        QDropEvent plain(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(&w, &plain);
        QTRY_VERIFY_WITH_TIMEOUT(loaded.count() == 1, kTimeoutMs);
        QVERIFY(!w.isComparing());
        QCOMPARE(w.currentPath(), b_);
    }

    // A key selected in the comparison is the one selected after it, alone:
    // on main, Close Comparison left the key selected before comparing
    // selected too, and Save As offered "2 selected key(s)".
    void closingAComparisonLeavesOnlyItsKeySelected() {
        MainWindow w;
        w.show();
        QVERIFY(open(w, a_));
        QVERIFY(w.selectKeyPath({"obs"}));
        QVERIFY(compareWithB(w));
        QVERIFY(w.selectKeyPath({"series"}));
        // Ctrl+W, as the user closes it: Ctrl is still held while A's tree selects the key.
        QTest::keyClick(w.compareView()->treeView(), Qt::Key_W, Qt::ControlModifier);
        QVERIFY(!w.isComparing());
        const auto selected = w.documentPage()->selectedNodes();
        QCOMPARE(int(selected.size()), 1);
        QCOMPARE(selected.front()->key(), std::string("series"));
        QCOMPARE(w.documentPage()->currentKeyPath(), QStringList{"series"});
        // Nor does the comparison keep a selection of its own for next time.
        QVERIFY(compareWithB(w));
        QCOMPARE(w.compareView()->treeView()->selectionModel()->selectedRows().size(), 1);
        QCOMPARE(w.compareView()->currentKeyPath(), QStringList{"series"});
    }

    void missingSecondDatasetIsReported() {
        MainWindow w;
        QVERIFY(open(w, a_));
        QSignalSpy failed(&w, &MainWindow::comparisonFailed);
        w.compareWith(scratch_.path() + "/nothing-here");
        QTRY_VERIFY_WITH_TIMEOUT(failed.count() == 1, kTimeoutMs);
        QVERIFY(!w.isComparing());
        for (QMessageBox* box : w.findChildren<QMessageBox*>())
            box->close();
    }

    void cancelledComparisonMarksTheRest() {
        auto a = std::make_shared<const TensorDict>(load(a_.toStdString()));
        auto b = std::make_shared<const TensorDict>(load(b_.toStdString()));
        CompareTreeModel model;
        CompareJob job(a, b, Tolerance{});
        QObject::connect(&job, &CompareJob::treeReady, &model,
                         [&] { model.setTree(job.takeTree(), a, b, "a ↔ b"); });
        QObject::connect(&job, &CompareJob::keysCompared, &model,
                         [&](const std::vector<KeyComparison>& batch) { model.apply(batch); });
        QSignalSpy finished(&job, &CompareJob::finished);
        job.cancel();  // before it starts: its first progress report stops it
        job.start();
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, kTimeoutMs);
        QVERIFY(job.wasCancelled());
        model.markNotCompared();
        // Every key is known, or marked as not compared: none is left pending.
        std::size_t notCompared = 0;
        std::vector<const CompareTree::Item*> stack{&model.tree()->root()};
        while (!stack.empty()) {
            const CompareTree::Item* item = stack.back();
            stack.pop_back();
            QVERIFY(item->status != Status::Pending);
            notCompared += item->status == Status::NotCompared;
            for (const auto& c : item->children)
                stack.push_back(c.get());
        }
        QCOMPARE(model.tree()->counts().notCompared, notCompared);
        QCOMPARE(model.tree()->find({"gone"})->status, Status::OnlyInA);
    }

    void manyKeysAreHandedOutLazily() {
        // 600 leaves in one collection, the 500th changed.
        auto make = [](bool changed) {
            TensorDict td = TensorDict::create();
            Node& many = td.mutableRoot().addTensorDict("many");
            for (int i = 0; i < CompareTreeModel::kFetchBatch + 100; ++i)
                many.addBytes("k" + std::to_string(i), DType::Float32, {1},
                              ownedBytes(std::vector<float>{changed && i == 500 ? 1.f : 0.f}));
            return std::make_shared<const TensorDict>(std::move(td));
        };
        auto a = make(false), b = make(true);
        CompareTreeModel model;
        model.setTree(std::make_unique<CompareTree>(a->root(), b->root()), a, b, "a ↔ b");
        CompareOptions options;
        model.apply(compare(*a, *b, options).keys);
        model.fetchMore(model.index(0, 0));
        const QModelIndex many = model.index(0, 0, model.index(0, 0));
        QCOMPARE(model.rowCount(many), 0);
        QVERIFY(model.canFetchMore(many));
        model.fetchMore(many);
        QCOMPARE(model.rowCount(many), CompareTreeModel::kFetchBatch);
        QCOMPARE(model.tree()->counts().changed, std::size_t(1));

        CompareFilterModel filter;
        filter.setCompareModel(&model);
        filter.setDifferencesOnly(true);
        QCOMPARE(rows(&filter), (QStringList{"", "many", "many/k500"}));
    }

private:
    bool open(MainWindow& w, const QString& path) {
        QSignalSpy loaded(&w, &MainWindow::documentLoaded);
        w.openPath(path);
        return QTest::qWaitFor([&] { return loaded.count() > 0; }, kTimeoutMs);
    }

    bool openAndCompare(MainWindow& w) { return open(w, a_) && compareWithB(w); }

    // Compares the open A with B, to the end.
    bool compareWithB(MainWindow& w) {
        QSignalSpy finished(&w, &MainWindow::comparisonFinished);
        w.compareWith(b_);
        return QTest::qWaitFor([&] { return finished.count() > 0; }, kTimeoutMs) &&
               w.isComparing() && !w.compareView()->isComparing();
    }

    static void screenshot(QWidget* w, const QString& name) {
        const QByteArray dir = qgetenv("TDSTUDIO_SCREENSHOT_DIR");
        if (!dir.isEmpty())
            w->grab().save(QString::fromLocal8Bit(dir) + "/" + name);
    }

    QTemporaryDir scratch_;
    QString a_, b_;
};

QTEST_MAIN(CompareViewTest)
#include "tst_compare_view.moc"
