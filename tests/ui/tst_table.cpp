// The table as a user drives it: cells selected with the mouse and the
// keyboard stay selected on their data while the window scrolls, pages and
// jumps to a row; Copy copies exactly those cells (a large selection asks
// first and is read on a worker); each column reads in one notation.

#include <QClipboard>
#include <QHeaderView>
#include <QLineEdit>
#include <QSignalSpy>
#include <QTableView>
#include <QWheelEvent>
#include <QtTest>
#include <cstring>

#include "document_page.h"
#include "main_window.h"
#include "preview_panel.h"
#include "tensor_table_model.h"
#include "tensor_table_view.h"
#include "tensordict/bytes.h"
#include "tensordict/element.h"
#include "testsupport.h"

using namespace tensordict;

namespace {

constexpr int kBoundMs = 60000;  // a bound for a broken copy, not a timing

// An int32 leaf of `rows` x `cols` whose element (r, c) is r * 100 + c.
LeafBytes gridLeaf(std::int64_t rows, std::int64_t cols) {
    QByteArray raw(static_cast<int>(rows * cols * 4), '\0');
    auto* v = reinterpret_cast<std::int32_t*>(raw.data());
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = 0; c < cols; ++c)
            v[r * cols + c] = static_cast<std::int32_t>(r * 100 + c);
    return ownedBytes(raw);
}

template <typename T>
LeafBytes leafOf(const std::vector<T>& values) {
    QByteArray raw(static_cast<int>(values.size() * sizeof(T)), '\0');
    std::memcpy(raw.data(), values.data(), static_cast<std::size_t>(raw.size()));
    return ownedBytes(raw);
}

// The tab-separated lines of rows first..last of the grid, columns left..right.
QString gridText(int first, int last, int left, int right) {
    QString text;
    for (int r = first; r <= last; ++r) {
        QStringList fields;
        for (int c = left; c <= right; ++c)
            fields << QString::number(r * 100 + c);
        text += fields.join('\t') + '\n';
    }
    return text;
}

// A table over a grid leaf, on screen.
struct Table {
    TensorTableModel model;
    TensorTableView view{&model};

    Table(std::int64_t rows, std::int64_t cols) {
        model.setLeaf(DType::Int32, gridLeaf(rows, cols), TensorSlice::defaultFor({rows, cols}));
        view.resize(700, 420);
        view.show();
        view.fitColumns();
    }
    QWidget* viewport() const { return view.table()->viewport(); }
    // The centre of the cell at slice (row, col), which must be on screen.
    QPoint at(std::int64_t row, std::int64_t col) const {
        const QModelIndex index =
            model.index(int(row - model.firstRow()), int(col - model.firstCol()));
        return view.table()->visualRect(index).center();
    }
    void click(std::int64_t row, std::int64_t col, Qt::KeyboardModifiers mods = {}) {
        QTest::mouseClick(viewport(), Qt::LeftButton, mods, at(row, col));
    }
    void wheel(int notches) {
        const QPoint pos = viewport()->rect().center();
        QWheelEvent event(pos, viewport()->mapToGlobal(pos), {}, {0, -120 * notches}, Qt::NoButton,
                          Qt::NoModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(viewport(), &event);
    }
    // What Copy puts on the clipboard.
    QString copy() {
        QGuiApplication::clipboard()->clear();
        view.copySelection();
        return QGuiApplication::clipboard()->text();
    }
    // Cells highlighted on screen.
    int highlighted() const {
        return int(view.table()->selectionModel()->selectedIndexes().size());
    }
};

}  // namespace

class TableTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // Rows 0-2 selected, then Go to row 250, the wheel, and back: the
    // selection stays on rows 0-2, highlighted only where they are on
    // screen. On main the highlight and Copy moved to rows 250-252.
    void aSelectionStaysOnItsRowsWhenTheWindowMoves() {
        Table t(1000, 4);
        QVERIFY(QTest::qWaitForWindowExposed(&t.view));
        t.click(0, 0);
        t.click(2, 3, Qt::ShiftModifier);
        QCOMPARE(t.highlighted(), 12);
        QCOMPARE(t.copy(), gridText(0, 2, 0, 3));

        t.view.scrollTo(250, 0);  // Go to row 250
        QCOMPARE(t.model.firstRow(), 250);
        QCOMPARE(t.highlighted(), 0);
        QCOMPARE(t.copy(), gridText(0, 2, 0, 3));

        t.view.scrollTo(0, 0);
        t.wheel(-1);  // at the top already: nothing moves
        t.wheel(2);   // six rows down
        QCOMPARE(t.model.firstRow(), 6);
        QCOMPARE(t.highlighted(), 0);
        QCOMPARE(t.copy(), gridText(0, 2, 0, 3));
        t.view.scrollTo(0, 0);
        QCOMPARE(t.highlighted(), 12);
        QVERIFY(t.view.table()->selectionModel()->isSelected(t.model.index(2, 3)));
        QVERIFY(!t.view.table()->selectionModel()->isSelected(t.model.index(3, 0)));
    }

    // Click row 0, scroll 30 rows, Shift-click row 52: rows 0-52, not 30-52
    // as on main.
    void shiftClickAfterScrollingExtendsFromTheAnchor() {
        Table t(1000, 4);
        QVERIFY(QTest::qWaitForWindowExposed(&t.view));
        t.click(0, 1);
        t.wheel(10);  // 30 rows
        QCOMPARE(t.model.firstRow(), 30);
        QVERIFY(t.model.firstRow() + t.model.rowCount() > 52);
        t.click(52, 2, Qt::ShiftModifier);
        QCOMPARE(t.copy(), gridText(0, 52, 1, 2));
        std::int64_t row = -1, col = -1;
        QVERIFY(t.view.currentCell(&row, &col));
        QCOMPARE(row, 52);
        QCOMPARE(col, 2);
    }

    // Dragging, the keyboard, headers, Ctrl-click and Ctrl+A all select
    // cells of the slice.
    void theMouseAndTheKeyboardSelectCellsOfTheSlice() {
        Table t(1000, 4);
        QVERIFY(QTest::qWaitForWindowExposed(&t.view));
        QWidget* vp = t.viewport();

        // A drag from (1, 0) to (4, 1).
        QTest::mousePress(vp, Qt::LeftButton, {}, t.at(1, 0));
        QMouseEvent move(QEvent::MouseMove, t.at(4, 1), vp->mapToGlobal(t.at(4, 1)), Qt::NoButton,
                         Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(vp, &move);
        QTest::mouseRelease(vp, Qt::LeftButton, {}, t.at(4, 1));
        QCOMPARE(t.copy(), gridText(1, 4, 0, 1));

        // Shift+Down from the current cell extends; a plain arrow starts over.
        t.click(5, 1);
        for (int i = 0; i < 3; ++i)
            QTest::keyClick(t.view.table(), Qt::Key_Down, Qt::ShiftModifier);
        QCOMPARE(t.copy(), gridText(5, 8, 1, 1));
        QTest::keyClick(t.view.table(), Qt::Key_Right);
        QCOMPARE(t.copy(), gridText(8, 8, 2, 2));
        // Shift+Page Down runs past the window: the selection follows its data.
        QTest::keyClick(t.view.table(), Qt::Key_PageDown, Qt::ShiftModifier);
        std::int64_t row = -1, col = -1;
        QVERIFY(t.view.currentCell(&row, &col));
        QVERIFY(row > 8);
        QCOMPARE(t.copy(), gridText(8, int(row), 2, 2));

        // Ctrl-click adds a range: the copy is their bounding box, the rest empty.
        t.view.scrollTo(0, 0);
        t.click(0, 0);
        t.click(2, 2, Qt::ControlModifier);
        QCOMPARE(t.copy(), QString("0\t\t\n\t\t\n\t\t202\n"));

        // A row header selects the whole row of the slice; Shift extends by rows.
        QHeaderView* rows = t.view.table()->verticalHeader();
        const QPoint row3(rows->width() / 2, rows->sectionViewportPosition(3) + 2);
        QTest::mouseClick(rows->viewport(), Qt::LeftButton, {}, row3);
        QCOMPARE(t.copy(), gridText(3, 3, 0, 3));
        const QPoint row5(rows->width() / 2, rows->sectionViewportPosition(5) + 2);
        QTest::mouseClick(rows->viewport(), Qt::LeftButton, Qt::ShiftModifier, row5);
        QCOMPARE(t.copy(), gridText(3, 5, 0, 3));

        // Ctrl+A: every cell of the slice, not only the window's.
        QTest::keyClick(t.view.table(), Qt::Key_A, Qt::ControlModifier);
        QCOMPARE(t.view.selection().bounds().cellCount(), std::uint64_t(4000));
        QCOMPARE(t.copy(), gridText(0, 999, 0, 3));
    }

    // Over a million cells: the user is asked first (No copies nothing),
    // then the text is built on a worker behind a progress dialog.
    void aLargeCopyAsksAndRunsOnAWorker() {
        constexpr int kRows = 300'000;
        Table t(kRows, 4);
        QVERIFY(QTest::qWaitForWindowExposed(&t.view));
        std::uint64_t asked = 0;
        bool answer = false;
        t.view.setCopyConfirmation([&](std::uint64_t cells) {
            asked = cells;
            return answer;
        });
        QSignalSpy finished(&t.view, &TensorTableView::copyFinished);
        QTest::keyClick(t.view.table(), Qt::Key_A, Qt::ControlModifier);
        QGuiApplication::clipboard()->setText("before");
        t.view.copySelection();
        QCOMPARE(asked, std::uint64_t(kRows) * 4);
        QCOMPARE(finished.count(), 1);
        QCOMPARE(finished.at(0).at(0).toULongLong(), 0ull);
        QCOMPARE(QGuiApplication::clipboard()->text(), QString("before"));

        answer = true;
        t.view.copySelection();
        QVERIFY(t.view.isCopying());
        QVERIFY(t.view.copyProgress() != nullptr);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, kBoundMs);
        QCOMPARE(finished.at(1).at(0).toULongLong(), quint64(kRows) * 4);
        const QString text = QGuiApplication::clipboard()->text();
        QCOMPARE(text.count('\n'), kRows);
        QVERIFY(text.startsWith(gridText(0, 1, 0, 3)));
        QVERIFY(text.endsWith(gridText(kRows - 1, kRows - 1, 0, 3)));
    }

    // One notation per column: 1e10 beside 10000000000.001 reads
    // positional (main wrote "1e+10"), a column with 1e-05 in it is all
    // scientific, complex numbers read "1-2j" (main: "1.-2.j"); Copy keeps
    // each copied column in one notation.
    // The Go to row box is cleared when another leaf is shown: a row typed
    // for one leaf means nothing for the next.
    void goToRowIsClearedForAnotherLeaf() {
        MainWindow w;
        w.show();
        QSignalSpy loaded(&w, &MainWindow::documentLoaded);
        w.openPath(testsupport::fixturePath("simple"));
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 300000);
        PreviewPanel* preview = w.documentPage()->previewPanel();
        preview->setMode(PreviewPanel::TableMode);
        QSignalSpy ready(preview, &PreviewPanel::leafReady);
        QVERIFY(w.selectKeyPath({"a"}));
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, 300000);
        preview->goToRowField()->setText("2");
        QVERIFY(w.selectKeyPath({"b", "c"}));
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 2, 300000);
        QCOMPARE(preview->goToRowField()->text(), QString());
    }

    void eachColumnReadsInOneNotation() {
        TensorTableModel model;
        model.setLeaf(DType::Float64, leafOf<double>({1e10, 1e-5, 10000000000.001, 2.0, 0.5, 3.5}),
                      TensorSlice::defaultFor({3, 2}));
        QCOMPARE(model.index(0, 0).data().toString(), QString("10000000000."));
        QCOMPARE(model.index(1, 0).data().toString(), QString("10000000000.001"));
        QCOMPARE(model.index(2, 0).data().toString(), QString("0.5"));
        QCOMPARE(model.index(0, 1).data().toString(), QString("1e-05"));
        QCOMPARE(model.index(1, 1).data().toString(), QString("2e+00"));
        QCOMPARE(model.index(2, 1).data().toString(), QString("3.5e+00"));
        CellSelection rows12;
        rows12.select({1, 0});
        rows12.extendTo({2, 1});  // 1e-05 is not copied: that column reads positional
        QCOMPARE(model.toTsv(rows12), QString("10000000000.001\t2.\n0.5\t3.5\n"));
        model.setFloatFormat(FloatFormat::Fixed, 2);
        QCOMPARE(model.index(0, 1).data().toString(), QString("0.00"));

        TensorTableModel complex;
        complex.setLeaf(DType::Complex128, leafOf<double>({1.0, -2.0, 0.5, 0.25}),
                        TensorSlice::defaultFor({2}));
        QCOMPARE(complex.index(0, 0).data().toString(), QString("1-2j"));
        QCOMPARE(complex.index(1, 0).data().toString(), QString("0.5+0.25j"));
    }

    // Columns are fitted to the values from the first row shown: scrolled
    // to short values far down, a format change narrows the columns that
    // long values at the top had widened. On main the sample was always
    // rows 0-63, so they stayed as wide as the values nobody was looking at.
    void columnsFitTheRowsShownWhenTheFormatChanges() {
        constexpr std::int64_t kRows = 2000, kCols = 4, kLongRows = 500;
        std::vector<double> values(kRows * kCols, 1.0);
        std::fill(values.begin(), values.begin() + kLongRows * kCols, -0.25000000000000006);
        TensorTableModel model;
        model.setLeaf(DType::Float64, leafOf(values), TensorSlice::defaultFor({kRows, kCols}));
        TensorTableView view(&model);
        view.resize(700, 420);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.fitColumns();
        const QFontMetrics fm = view.table()->fontMetrics();
        const int longWidth = fm.horizontalAdvance("-0.25000000000000006");
        QVERIFY(view.table()->horizontalHeader()->defaultSectionSize() > longWidth);

        view.scrollTo(1500, 0);
        QCOMPARE(model.firstRow(), 1500);
        QCOMPARE(model.index(0, 0).data().toString(), QString("1."));
        model.setFloatFormat(FloatFormat::Shortest, 6);  // what the format box does
        view.fitColumns();
        QVERIFY2(
            view.table()->horizontalHeader()->defaultSectionSize() < longWidth,
            qPrintable(QString::number(view.table()->horizontalHeader()->defaultSectionSize())));
    }
};

QTEST_MAIN(TableTest)
#include "tst_table.moc"
