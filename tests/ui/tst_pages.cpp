// The main window's two pages, the document alone and the comparison, run
// through the one Page interface the window's menus use: the same checks,
// data-driven over both pages, so that a new page passes them too.

#include <QLineEdit>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTreeView>
#include <QtTest>

#include "compare_panel.h"
#include "compare_view.h"
#include "document_page.h"
#include "leaf_view.h"
#include "main_window.h"
#include "page.h"
#include "preview_panel.h"
#include "slice_selector.h"
#include "tensordict/save.h"
#include "testsupport.h"

using namespace tensordict;

namespace {

constexpr int kTimeoutMs = 30000;  // a bound for a broken load, not a timing

// An image stack [4, 3, 5], frames [6, 4, 7], a series [6] and a group;
// B's series differs.
void writeDataset(const QString& path, float seriesStart) {
    TensorDict td = TensorDict::create();
    Node& root = td.mutableRoot();
    std::vector<float> stack(60), series(6), x(3);
    for (std::size_t i = 0; i < stack.size(); ++i)
        stack[i] = float(i);
    for (std::size_t i = 0; i < series.size(); ++i)
        series[i] = seriesStart + float(i);
    root.addBytes("stack", DType::Float32, {4, 3, 5}, ownedBytes(std::move(stack)));
    root.addBytes("series", DType::Float32, {6}, ownedBytes(std::move(series)));
    root.addBytes("frames", DType::Float32, {6, 4, 7}, ownedBytes(std::vector<float>(168, 1.0f)));
    root.addTensorDict("group").addBytes("x", DType::Float32, {3}, ownedBytes(std::move(x)));
    save(td, path.toStdString());
}

}  // namespace

class PagesTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(scratch_.isValid());
        a_ = scratch_.path() + "/a";
        b_ = scratch_.path() + "/b";
        writeDataset(a_, 0);
        writeDataset(b_, 10);
    }

    void init() {
        window_ = std::make_unique<MainWindow>();
        window_->show();
        QSignalSpy loaded(window_.get(), &MainWindow::documentLoaded);
        window_->openPath(a_);
        QVERIFY(QTest::qWaitFor([&] { return loaded.count() > 0; }, kTimeoutMs));
        QFETCH_GLOBAL(bool, comparing);
        if (comparing) {
            QSignalSpy finished(window_.get(), &MainWindow::comparisonFinished);
            window_->compareWith(b_);
            QVERIFY(QTest::qWaitFor([&] { return finished.count() > 0; }, kTimeoutMs));
            QCOMPARE(static_cast<void*>(window_->page()),
                     static_cast<void*>(static_cast<Page*>(window_->compareView())));
        } else {
            QCOMPARE(static_cast<void*>(window_->page()),
                     static_cast<void*>(static_cast<Page*>(window_->documentPage())));
        }
    }
    void cleanup() { window_.reset(); }

    void keysAreSelectedByPath() {
        Page* page = window_->page();
        QVERIFY(page->selectKeyPath({"group", "x"}));
        QVERIFY(page->hasCurrentKey());
        QCOMPARE(page->currentKeyPath(), (QStringList{"group", "x"}));
        QVERIFY(page->treeView()->currentIndex().isValid());
        QVERIFY(!page->selectKeyPath({"no", "such", "key"}));
        QCOMPARE(page->currentKeyPath(), (QStringList{"group", "x"}));  // unchanged
        QVERIFY(page->selectKeyPath({}));
        QCOMPARE(page->currentKeyPath(), QStringList());
    }

    void theFilterAndTreeAreThePagesOwn() {
        Page* page = window_->page();
        QVERIFY(page->filterEdit()->isVisible());
        QVERIFY(page->treeView()->isVisible());
        QVERIFY(page->filterEdit()->window() == window_.get());
        // Edit > Filter Keys focuses this page's filter.
        QTest::keySequence(window_.get(), QKeySequence::Find);
        QVERIFY(QTest::qWaitFor([&] { return page->filterEdit()->hasFocus(); }, kTimeoutMs));
    }

    void slicesStepAndAreTypedIn() {
        Page* page = window_->page();
        QVERIFY(page->selectKeyPath({"stack"}));
        // The leaf is read off the GUI thread: its slices arrive with it.
        const auto shownSelector = [&]() -> SliceSelector* {
            SliceSelector* s = page->currentSliceSelector();
            return QTest::qWaitFor(
                       [&] {
                           s = page->currentSliceSelector();
                           return s && s->slice().shape.size() == 3;
                       },
                       kTimeoutMs)
                       ? s
                       : nullptr;
        };
        QVERIFY(shownSelector());
        QCOMPARE(page->showMode(BuiltinLeafModes::TableMode), QString());
        SliceSelector* selector = shownSelector();
        QVERIFY(selector);
        QCOMPARE(selector->slice().index[0], std::int64_t(0));
        QVERIFY(selector->step(2));
        QCOMPARE(selector->slice().index[0], std::int64_t(2));
        QVERIFY(page->focusSliceEntry());
        QVERIFY(QTest::qWaitFor(
            [&] { return qobject_cast<QSpinBox*>(QApplication::focusWidget()); }, kTimeoutMs));

        // A collection has no slices.
        QVERIFY(page->selectKeyPath({"group"}));
        QVERIFY(!page->currentSliceSelector());
        QVERIFY(!page->focusSliceEntry());
    }

    // One leaf, one slice position: slice 2 in the table is slice 2 in the
    // image, and slice 3 chosen in the image is where the plot and the table
    // stand. On main the table and the image kept positions of their own.
    void everyViewSharesTheLeafsSlicePosition() {
        Page* page = window_->page();
        QVERIFY(page->selectKeyPath({"frames"}));
        LeafView* view = leafView();
        QVERIFY(QTest::qWaitFor([&] { return view->hasLeaves(); }, kTimeoutMs));
        // The slider of dim 0 in `mode`, once its tab shows the leaf.
        const auto indexIn = [&](int mode) {
            if (!page->showMode(mode).isEmpty())
                return std::int64_t(-1);
            SliceSelector* s = nullptr;
            const bool shown = QTest::qWaitFor(
                [&] {
                    s = page->currentSliceSelector();
                    return s && s->slice().shape.size() == 3;
                },
                kTimeoutMs);
            return shown ? s->slice().index[0] : std::int64_t(-1);
        };
        QCOMPARE(indexIn(BuiltinLeafModes::TableMode), std::int64_t(0));
        QVERIFY(page->currentSliceSelector()->step(2));
        QCOMPARE(indexIn(BuiltinLeafModes::ImageMode), std::int64_t(2));
        QVERIFY(page->currentSliceSelector()->step(1));
        QCOMPARE(indexIn(BuiltinLeafModes::PlotMode), std::int64_t(3));
        QCOMPARE(indexIn(BuiltinLeafModes::TableMode), std::int64_t(3));
        QCOMPARE(view->slicePosition().at(0), std::int64_t(3));
        // The plot may have a slider for a dimension that the table and the
        // image show as an axis (one leaf alone plots series along it):
        // moving it moves neither.
        QCOMPARE(indexIn(BuiltinLeafModes::PlotMode), std::int64_t(3));
        SliceSelector* plot = page->currentSliceSelector();
        SlicePosition expected{{0, 3}};
        for (const auto& [dim, index] : plot->position())
            if (dim != 0) {
                plot->setIndex(dim, 2);
                expected[dim] = 2;
            }
        QCOMPARE(view->slicePosition(), expected);
        QCOMPARE(indexIn(BuiltinLeafModes::ImageMode), std::int64_t(3));
        QCOMPARE(indexIn(BuiltinLeafModes::TableMode), std::int64_t(3));
        // Another leaf starts at its own beginning.
        QVERIFY(page->selectKeyPath({"series"}));
        QVERIFY(page->selectKeyPath({"frames"}));
        QVERIFY(QTest::qWaitFor([&] { return view->hasLeaves(); }, kTimeoutMs));
        QCOMPARE(indexIn(BuiltinLeafModes::TableMode), std::int64_t(0));
    }

    // A mode asked for while the leaf is still being read is the one it opens in.
    void aModeAskedWhileTheLeafIsReadIsKept() {
        Page* page = window_->page();
        QVERIFY(page->selectKeyPath({"stack"}));  // an image stack: opens as an image
        QVERIFY(
            QTest::qWaitFor([&] { return page->currentSliceSelector() != nullptr; }, kTimeoutMs));
        QVERIFY(page->selectKeyPath({"series"}));
        QVERIFY(page->selectKeyPath({"stack"}));
        QCOMPARE(page->showMode(BuiltinLeafModes::StatisticsMode), QString());  // before it arrives
        LeafView* view = leafView();
        QVERIFY(QTest::qWaitFor([&] { return view->hasLeaves(); }, kTimeoutMs));
        QCOMPARE(view->mode(), BuiltinLeafModes::StatisticsMode);
    }

    void modesAreShownOnlyWhereTheyApply() {
        Page* page = window_->page();
        QVERIFY(page->selectKeyPath({"series"}));
        QCOMPARE(page->showMode(BuiltinLeafModes::PlotMode), QString());
        QFETCH_GLOBAL(bool, comparing);
        if (!comparing) {  // the document page says why it cannot
            QVERIFY(page->selectKeyPath({"group"}));
            QVERIFY(!page->showMode(BuiltinLeafModes::PlotMode).isEmpty());
        }
    }

    void initTestCase_data() {
        QTest::addColumn<bool>("comparing");
        QTest::newRow("document page") << false;
        QTest::newRow("comparison page") << true;
    }

private:
    LeafView* leafView() const {
        QFETCH_GLOBAL(bool, comparing);
        return comparing ? window_->compareView()->panel()->leafView()
                         : window_->documentPage()->previewPanel()->leafView();
    }

    QTemporaryDir scratch_;
    QString a_, b_;
    std::unique_ptr<MainWindow> window_;
};

QTEST_MAIN(PagesTest)
#include "tst_pages.moc"
