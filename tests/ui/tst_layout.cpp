// The window at the sizes people have, down to 800x600: key names, the
// overview's figures, the comparison's description and table stay readable,
// and the panes give each other room when the splitter is dragged.

#include <QAbstractTextDocumentLayout>
#include <QClipboard>
#include <QComboBox>
#include <QFile>
#include <QHeaderView>
#include <QLabel>
#include <QScrollArea>
#include <QScrollBar>
#include <QSplitter>
#include <QTableView>
#include <QTemporaryDir>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextLayout>
#include <QTreeView>
#include <QWheelEvent>
#include <QtTest>

#include "compare_panel.h"
#include "compare_view.h"
#include "details_panel.h"
#include "document_page.h"
#include "key_tree_model.h"
#include "leaf_view.h"
#include "main_window.h"
#include "overview_panel.h"
#include "preview_panel.h"
#include "size_bar_chart.h"
#include "status_bar.h"
#include "table_mode.h"
#include "tensor_table_model.h"
#include "tensor_table_view.h"
#include "tensordict/save.h"
#include "testsupport.h"

namespace {

constexpr int kBoundMs = 30000;  // a bound for a broken load, not a timing

bool openDemo(MainWindow& w, const QString& path = TDSTUDIO_DEMO_PATH) {
    QSignalSpy loaded(&w, &MainWindow::documentLoaded);
    w.openPath(path);
    return QTest::qWaitFor([&] { return loaded.count() > 0; }, kBoundMs) &&
           QTest::qWaitFor([&] { return w.documentPage()->overviewPanel()->isReady(); }, kBoundMs);
}

// Shows the window at `size` with `path` open on its overview.
bool showAt(MainWindow& w, const QSize& size, const QString& path = TDSTUDIO_DEMO_PATH) {
    w.resize(size);
    w.show();
    return QTest::qWaitForWindowExposed(&w) && openDemo(w, path);
}

// Compares the open demo with the next one, to the end.
bool compareWithNext(MainWindow& w) {
    QSignalSpy finished(&w, &MainWindow::comparisonFinished);
    w.compareWith(TDSTUDIO_DEMO_NEXT_PATH);
    return QTest::qWaitFor([&] { return finished.count() > 0; }, kBoundMs);
}

void screenshot(QWidget* w, const QString& name) {
    const QByteArray dir = qgetenv("TDSTUDIO_SCREENSHOT_DIR");
    if (!dir.isEmpty())
        w->grab().save(QString::fromLocal8Bit(dir) + "/" + name);
}

void sizes_data() {
    QTest::addColumn<QSize>("size");
    QTest::newRow("1600x1000") << QSize(1600, 1000);
    QTest::newRow("1024x700") << QSize(1024, 700);
    QTest::newRow("800x600") << QSize(800, 600);
}

}  // namespace

class LayoutTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() {
        testsupport::isolateSettings("tst_layout");
        QSettings().clear();  // splitters an earlier run left
        QVERIFY(scratch_.isValid());
        // The demo deflated: its overview shows compression ratios.
        tensordict::SaveOptions options;
        options.compression = tensordict::kZipDeflate;
        options.copyExisting = true;
        deflated_ = scratch_.filePath("demo-deflated.tdz");
        tensordict::save(tensordict::load(TDSTUDIO_DEMO_PATH), deflated_.toStdString(), options);
    }

    // Every key of the demo reads in full in the tree, and the splitter
    // gives the tree half the window when dragged. On main, at 1024x700 the
    // key column was about 50 px of icons, and the splitter moved 12 px.
    void keyNamesAreReadable_data() { sizes_data(); }
    void keyNamesAreReadable() {
        QFETCH(QSize, size);
        MainWindow w;
        QVERIFY(showAt(w, size));
        QTreeView* tree = w.documentPage()->treeView();
        tree->expandAll();
        QCoreApplication::processEvents();
        const int keyWidth = tree->header()->sectionSize(KeyTreeModel::KeyColumn);
        QAbstractItemModel* model = tree->model();
        const QModelIndex root = model->index(0, 0);
        const QFontMetrics fm = tree->fontMetrics();
        for (int r = 0; r < model->rowCount(root); ++r) {
            const QModelIndex key = model->index(r, KeyTreeModel::KeyColumn, root);
            const QRect cell = tree->visualRect(key);
            const int text = fm.horizontalAdvance(key.data().toString());
            // The text starts after the indentation and the icon.
            QVERIFY2(cell.left() + tree->iconSize().width() + text + 8 <= keyWidth,
                     qPrintable(QString("%1 needs %2 px after %3 px, the column has %4 px")
                                    .arg(key.data().toString())
                                    .arg(text)
                                    .arg(cell.left() + tree->iconSize().width())
                                    .arg(keyWidth)));
        }
        screenshot(&w, QString("tree-%1x%2.png").arg(size.width()).arg(size.height()));

        QSplitter* splitter = w.documentPage()->treeSplitter();
        const int total = splitter->sizes().value(0) + splitter->sizes().value(1);
        splitter->setSizes({total / 2, total - total / 2});
        QVERIFY2(splitter->sizes().value(0) >= total / 2 - 2,
                 qPrintable(QString("the tree got %1 of %2 px; the right side needs %3 px")
                                .arg(splitter->sizes().value(0))
                                .arg(total)
                                .arg(splitter->widget(1)->minimumSizeHint().width())));
    }

    // The overview's figures (sizes, counts, compression ratios) are never
    // cut: on main "2 leave" at 1024x700, and "5.35 Mi" for a deflated
    // archive even at 1600 px.
    void overviewFiguresAreWhole_data() {
        QTest::addColumn<QSize>("size");
        QTest::addColumn<bool>("deflated");
        for (const QSize size : {QSize(1600, 1000), QSize(1024, 700), QSize(800, 600)})
            for (const bool deflated : {false, true})
                QTest::addRow("%dx%d%s", size.width(), size.height(), deflated ? " deflated" : "")
                    << size << deflated;
    }
    void overviewFiguresAreWhole() {
        QFETCH(QSize, size);
        QFETCH(bool, deflated);
        MainWindow w;
        QVERIFY(showAt(w, size, deflated ? deflated_ : QString(TDSTUDIO_DEMO_PATH)));
        if (deflated)
            QVERIFY(w.documentPage()
                        ->overviewPanel()
                        ->storageChart()
                        ->bars()
                        .front()
                        .valueText.contains("×"));
        QCoreApplication::processEvents();
        OverviewPanel* overview = w.documentPage()->overviewPanel();
        const auto charts = overview->findChildren<SizeBarChart*>();
        QVERIFY(charts.size() >= 4);
        QWidget* viewport = overview->findChild<QScrollArea*>()->viewport();
        for (const SizeBarChart* chart : charts) {
            if (chart->isHidden())
                continue;  // bytes by file: the demo is one file
            // Whole across the pane (no sideways scrolling), and each figure whole in it.
            const QRect shown(chart->mapTo(viewport, QPoint(0, 0)), chart->size());
            QVERIFY2(shown.left() >= 0 && shown.right() < viewport->width(),
                     qPrintable(QString("a chart spans x %1..%2 of a pane %3 px wide")
                                    .arg(shown.left())
                                    .arg(shown.right())
                                    .arg(viewport->width())));
            for (int i = 0; i < int(chart->bars().size()); ++i)
                QVERIFY2(chart->valueFits(i),
                         qPrintable(QString("\"%1\" is cut in a chart %2 px wide")
                                        .arg(chart->bars()[std::size_t(i)].valueText)
                                        .arg(chart->width())));
        }
        screenshot(&w, QString("overview-%1x%2%3.png")
                           .arg(size.width())
                           .arg(size.height())
                           .arg(deflated ? "-deflated" : ""));
    }

    // The comparison of a non-tensor value: each label on one line, A and
    // B side by side within the pane, the long value wrapped. On main the
    // labels were drawn a letter a line and B was pushed off the pane.
    void aNonTensorComparisonReadsSideBySide_data() { sizes_data(); }
    void aNonTensorComparisonReadsSideBySide() {
        QFETCH(QSize, size);
        MainWindow w;
        QVERIFY(showAt(w, size));
        QVERIFY(w.selectKeyPath({"description"}));
        QVERIFY(compareWithNext(w));
        QCOMPARE(w.compareView()->currentKeyPath(), QStringList{"description"});
        QTextBrowser* view = w.compareView()->panel()->descriptionView();
        QVERIFY(view->isVisible());
        QCoreApplication::processEvents();
        screenshot(&w, QString("compare-value-%1x%2.png").arg(size.width()).arg(size.height()));
        QCOMPARE(view->horizontalScrollBar()->maximum(), 0);  // nothing off to the side
        const QTextDocument* doc = view->document();
        bool sawValue = false;
        for (QTextBlock block = doc->begin(); block.isValid(); block = block.next()) {
            const QString text = block.text();
            if (text == "Batch size" || text == "Class" || text == "Value" || text == "Kind") {
                QVERIFY2(block.layout()->lineCount() == 1,
                         qPrintable(QString("\"%1\" is drawn on %2 lines")
                                        .arg(text)
                                        .arg(block.layout()->lineCount())));
            }
            sawValue = sawValue || text.startsWith("\"tdstudio demo");
        }
        QVERIFY(sawValue);
    }

    // The details read in full at every size: a value too long for its
    // column (a path, a file name) is elided in the middle with the whole
    // in its tooltip, and a narrow panel puts its two columns one above the
    // other. On main "images.memma" and "Compression: stored" were cut.
    void detailsAreWholeOrElidedWithATooltip_data() { sizes_data(); }
    void detailsAreWholeOrElidedWithATooltip() {
        QFETCH(QSize, size);
        MainWindow w;
        QVERIFY(showAt(w, size));
        QVERIFY(w.selectKeyPath({"images"}));
        DetailsPanel* details = w.documentPage()->detailsPanel();
        QTRY_COMPARE(details->field("Archive entry"), QString("images.memmap"));
        QCoreApplication::processEvents();
        screenshot(&w, QString("details-%1x%2.png").arg(size.width()).arg(size.height()));
        int fields = 0;
        for (QLabel* value : details->findChildren<QLabel*>()) {
            if (value->objectName().isEmpty() || !value->isVisible())
                continue;
            ++fields;
            const int needs = value->fontMetrics().horizontalAdvance(value->text());
            QVERIFY2(value->wordWrap() || needs <= value->contentsRect().width() ||
                         value->toolTip() == value->text(),
                     qPrintable(QString("%1 \"%2\" needs %3 px, has %4")
                                    .arg(value->objectName(), value->text())
                                    .arg(needs)
                                    .arg(value->contentsRect().width())));
            // What a label shows is in its column, not under the next one.
            QVERIFY(value->geometry().right() <= value->parentWidget()->width());
        }
        QVERIFY(fields >= 8);
        // In one column the values take the panel's width: "229.7 KiB (235,200
        // bytes)" on one line, where it wrapped in a third of the panel.
        auto* bytes = details->findChild<QLabel*>("Size");
        QVERIFY(bytes);
        QVERIFY2(bytes->fontMetrics().horizontalAdvance(bytes->text()) <= bytes->width(),
                 qPrintable(QString("Size is %1 px wide in a panel of %2")
                                .arg(bytes->width())
                                .arg(details->width())));
        // No row is squeezed over another (they were when the panel was short).
        QList<QLabel*> shown;
        for (QLabel* label : details->findChildren<QLabel*>())
            if (label->isVisible())
                shown << label;
        for (int i = 0; i < shown.size(); ++i)
            for (int j = i + 1; j < shown.size(); ++j) {
                const QRect a(shown[i]->mapTo(details, QPoint(0, 0)), shown[i]->size());
                const QRect b(shown[j]->mapTo(details, QPoint(0, 0)), shown[j]->size());
                QVERIFY2(!a.intersects(b),
                         qPrintable(shown[i]->text() + " over " + shown[j]->text()));
            }
    }

    // The comparison tree keeps key names readable, as the main tree does.
    // A message longer than its room ends in "…" clear of the right-hand
    // label, with the whole message as the tooltip. On main it was cut off
    // against the label, mid-word.
    void longMessagesAreElidedClearOfTheLabels_data() { sizes_data(); }
    void longMessagesAreElidedClearOfTheLabels() {
        QFETCH(QSize, size);
        MainWindow w;
        QVERIFY(showAt(w, size));
        auto* bar = qobject_cast<StatusBar*>(w.statusBar());
        QVERIFY(bar);
        QString message = "Cannot save demo.tdz: the key images links to /somewhere/else/entirely";
        while (bar->fontMetrics().horizontalAdvance(message) < size.width())
            message += ", and further";
        bar->showMessage(message);
        QVERIFY(bar->shownMessage().endsWith(QChar(0x2026)));
        QCOMPARE(bar->toolTip(), message);
        // The right-hand label is visible and the message ends before it.
        QLabel* right = nullptr;
        for (QLabel* label : bar->findChildren<QLabel*>())
            if (label->isVisible() && !label->text().isEmpty())
                right = label;
        QVERIFY(right);
        QVERIFY(bar->fontMetrics().horizontalAdvance(bar->shownMessage()) <
                right->geometry().left());
        screenshot(&w, QString("status-elided-%1x%2.png").arg(size.width()).arg(size.height()));
        bar->showMessage("Opened demo.tdz");
        QCOMPARE(bar->shownMessage(), "Opened demo.tdz");
        QVERIFY(bar->toolTip().isEmpty());
    }

    void comparisonKeysAreReadable_data() { sizes_data(); }
    void comparisonKeysAreReadable() {
        QFETCH(QSize, size);
        MainWindow w;
        QVERIFY(showAt(w, size));
        QVERIFY(compareWithNext(w));
        QTreeView* tree = w.compareView()->treeView();
        tree->expandAll();
        QCoreApplication::processEvents();
        screenshot(&w, QString("compare-tree-%1x%2.png").arg(size.width()).arg(size.height()));
        const int keyWidth = tree->header()->sectionSize(0);
        QAbstractItemModel* model = tree->model();
        const QModelIndex root = model->index(0, 0);
        const QFontMetrics fm = tree->fontMetrics();
        QList<QModelIndex> keys{root};
        for (int r = 0; r < model->rowCount(root); ++r)
            keys << model->index(r, 0, root);
        for (const QModelIndex& key : keys) {
            const int text = fm.horizontalAdvance(key.data().toString());
            QVERIFY2(tree->visualRect(key).left() + tree->iconSize().width() + text + 8 <= keyWidth,
                     qPrintable(QString("%1 needs %2 px, the column has %3 px")
                                    .arg(key.data().toString())
                                    .arg(text)
                                    .arg(keyWidth)));
        }
    }

    // The comparison table of a 1-D float64 leaf: every value whole, as the
    // user scrolls too; the float format offered as for one leaf; the
    // current cell's long line wrapped, never widening the pane. On main
    // the column showed "-0.25…", there was no format control, and F3's
    // line pushed the tree pane narrower.
    void theComparisonTableShowsWholeValues() {
        MainWindow w;
        QVERIFY(showAt(w, {1024, 700}));
        QVERIFY(w.selectKeyPath({"episode", "reward"}));
        QVERIFY(compareWithNext(w));
        ComparePanel* panel = w.compareView()->panel();
        QTRY_VERIFY_WITH_TIMEOUT(panel->showsValues(), kBoundMs);
        panel->setMode(ComparePanel::TableMode);
        auto* table = panel->leafView()->find<TableLeafMode>();
        QVERIFY(table);
        QTRY_VERIFY(table->floatFormatBox()->isVisible());
        QTableView* cells = table->view()->table();
        const auto everyValueIsWhole = [&]() -> QString {
            const QFontMetrics fm = cells->fontMetrics();
            for (int r = 0; r < table->model()->rowCount(); ++r) {
                const QModelIndex index = table->model()->index(r, 0);
                const int needed = fm.horizontalAdvance(index.data().toString()) + 8;
                if (needed > cells->columnWidth(0))
                    return QString("%1 needs %2 px, the column has %3")
                        .arg(index.data().toString())
                        .arg(needed)
                        .arg(cells->columnWidth(0));
            }
            return {};
        };
        for (const std::int64_t row : {0, 100, 200, 290}) {
            table->view()->scrollTo(row, 0);
            const QString cut = everyValueIsWhole();
            QVERIFY2(cut.isEmpty(), qPrintable(cut));
        }
        screenshot(&w, "compare-table-1024x700.png");

        QSignalSpy shown(table, &TableLeafMode::differenceShown);
        table->nextDifference();
        QTRY_VERIFY_WITH_TIMEOUT(shown.count() == 1, kBoundMs);
        QVERIFY(table->currentCellLabel()->isVisible());
        QVERIFY(table->currentCellLabel()->text().contains("A − B"));
        QSplitter* splitter = w.compareView()->findChild<QSplitter*>();
        QVERIFY2(splitter->widget(1)->minimumSizeHint().width() < 450,
                 qPrintable(QString("the comparison's side needs %1 px")
                                .arg(splitter->widget(1)->minimumSizeHint().width())));

        table->floatFormatBox()->setCurrentIndex(int(tensordict::FloatFormat::Scientific));
        QVERIFY(table->model()->index(0, 0).data().toString().contains('e'));
    }

    // A copy of several rows made across a scroll, as a user makes it: the
    // first row clicked, the wheel, the last row Shift-clicked. The clipboard
    // holds exactly those rows, each column in one notation (and with
    // TDSTUDIO_SCREENSHOT_DIR set, the window and the clipboard's text are kept).
    void aMultiRowCopyAfterScrolling_data() { sizes_data(); }
    void aMultiRowCopyAfterScrolling() {
        QFETCH(QSize, size);
        MainWindow w;
        QVERIFY(showAt(w, size));
        PreviewPanel* preview = w.documentPage()->previewPanel();
        QSignalSpy ready(preview, &PreviewPanel::leafReady);
        QVERIFY(w.selectKeyPath({"features"}));  // float32 [300, 16]
        QTRY_VERIFY_WITH_TIMEOUT(ready.count() >= 1, kBoundMs);
        preview->setMode(PreviewPanel::TableMode);
        QCoreApplication::processEvents();
        TensorTableView* view = preview->tableView();
        TensorTableModel* model = preview->tableModel();
        QWidget* cells = view->table()->viewport();
        const auto at = [&](int row, int col) {
            return view->table()
                ->visualRect(
                    model->index(int(row - model->firstRow()), int(col - model->firstCol())))
                .center();
        };
        QTest::mouseClick(cells, Qt::LeftButton, {}, at(2, 1));
        const QPoint middle = cells->rect().center();
        QWheelEvent wheel(middle, cells->mapToGlobal(middle), {}, {0, -120 * 10}, Qt::NoButton,
                          Qt::NoModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(cells, &wheel);
        QCOMPARE(model->firstRow(), 30);
        const int last = 30 + std::min(model->rowCount(), 12) - 2;
        QTest::mouseClick(cells, Qt::LeftButton, Qt::ShiftModifier, at(last, 3));
        QGuiApplication::clipboard()->clear();
        view->copySelection();
        const QString copied = QGuiApplication::clipboard()->text();
        const QStringList lines = copied.split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), last - 2 + 1);
        QCOMPARE(lines.front().split('\t').size(), 3);
        // Row 2, column 1 as the table shows it when on screen.
        view->scrollTo(0, 0);
        QCOMPARE(lines.front().split('\t').front(), model->text(2, 1));
        view->scrollTo(30, 0);
        const QByteArray dir = qgetenv("TDSTUDIO_SCREENSHOT_DIR");
        if (!dir.isEmpty()) {
            const QString name = QString("copy-%1x%2").arg(size.width()).arg(size.height());
            screenshot(&w, name + ".png");
            QFile text(QString::fromLocal8Bit(dir) + "/" + name + ".txt");
            QVERIFY(text.open(QIODevice::WriteOnly));
            text.write(copied.toUtf8());
        }
    }

private:
    QTemporaryDir scratch_;
    QString deflated_;
};

QTEST_MAIN(LayoutTest)
#include "tst_layout.moc"
