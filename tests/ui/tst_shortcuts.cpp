// The window's keyboard: every action has a shortcut, listed in Help >
// Keyboard Shortcuts; preview modes, slices, focus, Ctrl+C where the focus
// is; and the layout that gives the preview the room, remembered.

#include <QAction>
#include <QClipboard>
#include <QHeaderView>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QScreen>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QTableWidget>
#include <QTreeView>
#include <QtTest>

#include "details_panel.h"
#include "document_page.h"
#include "image_view.h"
#include "key_tree_model.h"
#include "main_window.h"
#include "overview_panel.h"
#include "preview_panel.h"
#include "shortcuts_dialog.h"
#include "slice_selector.h"
#include "tensor_table_model.h"
#include "tensor_table_view.h"
#include "testsupport.h"

namespace {

bool openAndWait(MainWindow& w, const QString& path) {
    QSignalSpy loaded(&w, &MainWindow::documentLoaded);
    QSignalSpy failed(&w, &MainWindow::documentFailed);
    w.openPath(path);
    return QTest::qWaitFor([&] { return loaded.count() + failed.count() > 0; }, 300000) &&
           loaded.count() == 1;
}

// Selects the leaf `key` of the demo and waits until its preview is ready.
bool showLeaf(MainWindow& w, const QString& key) {
    QSignalSpy ready(w.documentPage()->previewPanel(), &PreviewPanel::leafReady);
    return w.selectKeyPath({key}) && (ready.count() == 1 || ready.wait(20000));
}

void press(MainWindow& w, int key, Qt::KeyboardModifiers modifiers = Qt::ControlModifier) {
    QWidget* target = QApplication::focusWidget() ? QApplication::focusWidget() : &w;
    QTest::keyClick(target, static_cast<Qt::Key>(key), modifiers);
}

}  // namespace

class ShortcutsTest : public QObject {
    Q_OBJECT

private:
    // A shown, active window on the demo.
    bool openDemo(MainWindow& w) {
        w.show();
        w.activateWindow();
        return QTest::qWaitForWindowActive(&w) && openAndWait(w, TDSTUDIO_DEMO_PATH);
    }

private Q_SLOTS:
    void initTestCase() { testsupport::isolateSettings("tst_shortcuts"); }
    void init() { QSettings().clear(); }

    void modesSwitchWithCtrlDigits() {
        MainWindow w;
        QVERIFY(openDemo(w));
        QVERIFY(showLeaf(w, "audio"));
        w.documentPage()->treeView()->setFocus();
        PreviewPanel* p = w.documentPage()->previewPanel();
        press(w, Qt::Key_3);
        QCOMPARE(p->mode(), PreviewPanel::PlotMode);
        press(w, Qt::Key_4);
        QCOMPARE(p->mode(), PreviewPanel::StatisticsMode);
        press(w, Qt::Key_2);
        QCOMPARE(p->mode(), PreviewPanel::ImageMode);
        press(w, Qt::Key_1);
        QCOMPARE(p->mode(), PreviewPanel::TableMode);
    }

    void slicesStepAndJump() {
        MainWindow w;
        QVERIFY(openDemo(w));
        QVERIFY(showLeaf(w, "images"));  // [300, 28, 28]: rows 1, columns 2, a slider for dim 0
        w.documentPage()->previewPanel()->setMode(PreviewPanel::TableMode);
        w.documentPage()->treeView()->setFocus();
        SliceSelector* slice = w.documentPage()->previewPanel()->tableSlice();
        QCOMPARE(slice->slice().index[0], std::int64_t(0));
        press(w, Qt::Key_Period);
        QCOMPARE(slice->slice().index[0], std::int64_t(1));
        press(w, Qt::Key_Period);
        QCOMPARE(slice->slice().index[0], std::int64_t(2));
        QCOMPARE(w.documentPage()->previewPanel()->tableModel()->slice().index[0], std::int64_t(2));
        press(w, Qt::Key_Comma);
        QCOMPARE(slice->slice().index[0], std::int64_t(1));
        press(w, Qt::Key_Comma);
        press(w, Qt::Key_Comma);  // stays at the first slice
        QCOMPARE(slice->slice().index[0], std::int64_t(0));

        // Ctrl+G: the slider's index box, ready to type into.
        press(w, Qt::Key_G);
        auto* box = qobject_cast<QSpinBox*>(QApplication::focusWidget());
        QVERIFY(box);
        QVERIFY(slice->isAncestorOf(box));
        QTest::keyClicks(box, "42");
        QTest::keyClick(box, Qt::Key_Enter);
        QCOMPARE(slice->slice().index[0], std::int64_t(42));

        // The image view steps its own slider.
        press(w, Qt::Key_2);
        QCOMPARE(w.documentPage()->previewPanel()->mode(), PreviewPanel::ImageMode);
        SliceSelector* image = w.documentPage()->previewPanel()->imageView()->sliceSelector();
        const std::int64_t before = image->slice().index[0];
        press(w, Qt::Key_Period);
        QCOMPARE(image->slice().index[0], before + 1);

        // A 2-D table has no slider: Ctrl+G goes to the row field.
        QVERIFY(showLeaf(w, "features"));
        w.documentPage()->previewPanel()->setMode(PreviewPanel::TableMode);
        w.documentPage()->treeView()->setFocus();
        press(w, Qt::Key_G);
        QCOMPARE(QApplication::focusWidget(), w.documentPage()->previewPanel()->goToRowField());
    }

    void focusFilterAndTree() {
        MainWindow w;
        QVERIFY(openDemo(w));
        w.documentPage()->treeView()->setFocus();
        press(w, Qt::Key_F);
        QCOMPARE(QApplication::focusWidget(), w.documentPage()->filterEdit());
        press(w, Qt::Key_L);
        QCOMPARE(QApplication::focusWidget(), w.documentPage()->treeView());
    }

    void ctrlCCopiesWhatHasFocus() {
        MainWindow w;
        QVERIFY(openDemo(w));
        QVERIFY(showLeaf(w, "features"));
        w.documentPage()->previewPanel()->setMode(PreviewPanel::TableMode);
        QClipboard* clipboard = QGuiApplication::clipboard();

        // The table: its cells.
        auto* table = w.documentPage()->previewPanel()->tableView()->findChild<QTableView*>();
        QVERIFY(table);
        table->setFocus();
        table->setCurrentIndex(table->model()->index(0, 1));
        const QString cell = w.documentPage()->previewPanel()->tableModel()->text(0, 1);
        QVERIFY(!cell.isEmpty());
        clipboard->clear();
        QTest::keyClick(table, Qt::Key_C, Qt::ControlModifier);
        QCOMPARE(clipboard->text(), cell + '\n');  // tab-separated lines

        // The tree: the key path.
        w.documentPage()->treeView()->setFocus();
        QTest::keyClick(w.documentPage()->treeView(), Qt::Key_C, Qt::ControlModifier);
        QCOMPARE(clipboard->text(), QString("\"features\""));

        // When another Ctrl+C makes the tree's shortcut ambiguous (as once
        // after the Shortcuts dialog closed), the key reaches the tree: it
        // still copies the key path, not the bare name of the row.
        {
            QAction other(&w);
            other.setShortcut(QKeySequence::Copy);
            w.addAction(&other);
            clipboard->clear();
            w.documentPage()->treeView()->setFocus();
            QTest::keyClick(w.documentPage()->treeView(), Qt::Key_C, Qt::ControlModifier);
            QCOMPARE(clipboard->text(), QString("\"features\""));
            w.removeAction(&other);
        }

        // Edit > Copy Key Path (Ctrl+Shift+C) works from anywhere, the table included.
        clipboard->setText("x");
        table->setFocus();
        QTest::keyClick(table, Qt::Key_C, Qt::ControlModifier | Qt::ShiftModifier);
        QCOMPARE(clipboard->text(), QString("\"features\""));
    }

    void shortcutsDialogListsEveryAction() {
        MainWindow w;
        QVERIFY(openDemo(w));
        w.documentPage()->treeView()->setFocus();
        press(w, Qt::Key_F1, Qt::NoModifier);
        ShortcutsDialog* dialog = w.shortcutsDialog();
        QVERIFY(dialog);
        QTRY_VERIFY(dialog->isVisible());
        QTableWidget* table = dialog->table();
        QStringList rows;
        for (int r = 0; r < table->rowCount(); ++r)
            rows << table->item(r, 0)->text() + " | " + table->item(r, 1)->text() + " | " +
                        table->item(r, 2)->text();
        // Every action with a shortcut is listed by it.
        for (QAction* action : w.findChildren<QAction*>()) {
            if (action->shortcut().isEmpty())
                continue;
            const QString keys = action->shortcut().toString(QKeySequence::NativeText);
            QVERIFY2(!rows.filter(" | " + keys + " | ").isEmpty(),
                     qPrintable(action->text() + " " + keys + " missing from\n" + rows.join('\n')));
        }
        for (const QString& expected :
             {QString("Table | Ctrl+1 | View"),
              QString("Statistics | Ctrl+4 | View"),
              QString("Next Slice | Ctrl+. | View"),
              QString("Previous Slice | Ctrl+, | View"),
              QString("Go to Slice | Ctrl+G | View"),
              QString("Filter Keys | Ctrl+F | Edit"),
              QString("Focus Key Tree | Ctrl+L | Edit"),
              QString("Copy Key Path | Ctrl+Shift+C | Edit"),
              QString("Copy Key Path | Ctrl+C | Key tree"),
              QString("Open File | Ctrl+O | File"),
              QString("Compare With File | Ctrl+D | File > Compare With"),
              QString("Compare With Directory | Ctrl+Shift+D | File > Compare With"),
              QString("Copy selected cells | Ctrl+C | Table"),
              QString("Select all cells | Ctrl+A | Table"),
              QString("Export the slice as CSV | Ctrl+E | Table"),
              QString("Export the slice as .npy | Ctrl+Shift+E | Table"),
              QString("Cells show A − B | Alt+3 | Table"),
              QString("Go to row | Ctrl+J | Table"),
              QString("Export the image as PNG | Ctrl+E | Image"),
              QString("Fit the image to the view | Ctrl+0 | Image"),
              QString("Reset the plot's zoom | Ctrl+0 | Plot"),
              QString("Compute the statistics | Ctrl+Return | Statistics"),
              QString("Repair what the check found | Ctrl+Shift+R | Overview"),
              QString("Show differences only (or every key) | Ctrl+Shift+F | Comparison"),
              QString("About tdstudio | Alt+H, A | Help")})
            QVERIFY2(rows.contains(expected),
                     qPrintable(expected + "\nnot in\n" + rows.join('\n')));
        // Each row once (the statistics of a leaf and of a comparison share theirs),
        // and the dialog within the screen.
        QCOMPARE(QSet<QString>(rows.begin(), rows.end()).size(), rows.size());
        QVERIFY(dialog->screen()->availableGeometry().contains(dialog->frameGeometry()) ||
                dialog->height() <= dialog->screen()->availableGeometry().height() * 9 / 10);
        // Every menu item but About and the recent files has one.
        for (QAction* top : w.menuBar()->actions())
            for (QAction* action : top->menu()->actions())
                if (!action->isSeparator() && !action->menu() && !action->text().contains("About"))
                    QVERIFY2(!action->shortcut().isEmpty(), qPrintable(action->text()));
    }

    void theDetailsToggleAndTheLayoutIsRemembered() {
        QList<int> treeSizes, detailsSizes;
        {
            MainWindow w;
            w.resize(MainWindow::designedSize());  // offscreen's screen is 800x600
            w.show();                              // columns are sized for the screen they are on
            QVERIFY(openDemo(w));
            // At 1400x860 the preview gets most of the right column.
            QVERIFY2(w.documentPage()->detailsPanel()->height() * 3 <
                         w.documentPage()->detailsSplitter()->height(),
                     qPrintable(QString("details %1 of %2")
                                    .arg(w.documentPage()->detailsPanel()->height())
                                    .arg(w.documentPage()->detailsSplitter()->height())));
            // The tree's columns fit their contents: Storage is not cut off.
            QTreeView* tree = w.documentPage()->treeView();
            const QModelIndex root = tree->model()->index(0, 0);
            QVERIFY(tree->model()->rowCount(root) >= 7);
            for (int row = 0; row < tree->model()->rowCount(root); ++row)
                for (int c = KeyTreeModel::KindColumn; c < KeyTreeModel::ColumnCount; ++c) {
                    const QString text = tree->model()->index(row, c, root).data().toString();
                    QVERIFY2(tree->header()->sectionSize(c) >
                                 tree->fontMetrics().horizontalAdvance(text),
                             qPrintable(text));
                }
            QTRY_VERIFY(tree->header()->sectionPosition(KeyTreeModel::StorageColumn) +
                            tree->header()->sectionSize(KeyTreeModel::StorageColumn) <=
                        tree->viewport()->width());

            press(w, Qt::Key_I);  // View > Details off
            QVERIFY(w.documentPage()->detailsPanel()->isCollapsed());
            QVERIFY(w.documentPage()->detailsPanel()->height() < 60);
            // The preview takes the room: the splitter keeps no band below the header
            // (it kept ~130 px of nothing).
            const QList<int> folded = w.documentPage()->detailsSplitter()->sizes();
            QVERIFY2(folded[1] <= w.documentPage()->detailsPanel()->sizeHint().height(),
                     qPrintable(QString("details pane %1 px, header %2 px")
                                    .arg(folded[1])
                                    .arg(w.documentPage()->detailsPanel()->sizeHint().height())));
            w.documentPage()->treeSplitter()->setSizes({400, 1000});
            treeSizes = w.documentPage()->treeSplitter()->sizes();
            detailsSizes = w.documentPage()->detailsSplitter()->sizes();
            w.close();
        }
        MainWindow again;
        again.resize(MainWindow::designedSize());
        again.show();
        QVERIFY(QTest::qWaitForWindowExposed(&again));
        QVERIFY(openDemo(again));  // the document's panes show as they were left
        QVERIFY(again.documentPage()->detailsPanel()->isCollapsed());
        QCOMPARE(again.documentPage()->treeSplitter()->sizes(), treeSizes);
        QCOMPARE(again.documentPage()->detailsSplitter()->sizes(), detailsSizes);
        again.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&again));
        QTest::keyClick(&again, Qt::Key_I, Qt::ControlModifier);
        QVERIFY(!again.documentPage()->detailsPanel()->isCollapsed());
        QTRY_VERIFY(again.documentPage()->detailsPanel()->height() > 60);
    }
};

QTEST_MAIN(ShortcutsTest)
#include "tst_shortcuts.moc"
