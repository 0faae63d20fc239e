// The main window end to end: open a fixture, filter keys, inspect the
// details panel, copy a key path, survive bad input, remember recent files.

#include <QAbstractButton>
#include <QClipboard>
#include <QFile>
#include <QFileDialog>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QMessageBox>
#include <QMimeData>
#include <QPushButton>
#include <QScopeGuard>
#include <QScreen>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTreeView>
#include <QtTest>

#include "check_controller.h"
#include "details_panel.h"
#include "document_page.h"
#include "file_dialogs.h"
#include "key_filter_model.h"
#include "key_tree_model.h"
#include "main_window.h"
#include "node_properties.h"
#include "overview_panel.h"
#include "preview_panel.h"
#include "recent_files.h"
#include "save_job.h"
#include "tensordict/node.h"
#include "tensordict/tensordict.h"
#include "testsupport.h"
#include "welcome_page.h"

namespace {

constexpr int kTimeoutMs = 30000;  // a bound for a broken job, not a timing

bool openAndWait(MainWindow& w, const QString& path) {
    QSignalSpy loaded(&w, &MainWindow::documentLoaded);
    QSignalSpy failed(&w, &MainWindow::documentFailed);
    w.openPath(path);
    return QTest::qWaitFor([&] { return loaded.count() + failed.count() > 0; }, 300000) &&
           loaded.count() == 1;
}

QPushButton* findButton(QWidget* in, const QString& text) {
    for (QPushButton* b : in->findChildren<QPushButton*>())
        if (b->text() == text)
            return b;
    return nullptr;
}

void clickButton(QWidget* in, const QString& text) {
    QPushButton* b = findButton(in, text);
    QVERIFY2(b, qPrintable(text));
    b->click();
}

void screenshot(QWidget* w, const QString& name) {
    const QByteArray dir = qgetenv("TDSTUDIO_SCREENSHOT_DIR");
    if (!dir.isEmpty())
        w->grab().save(QString::fromLocal8Bit(dir) + "/" + name);
}

void closeMessageBoxes(QWidget& w) {
    for (QMessageBox* box : w.findChildren<QMessageBox*>())
        box->close();
}

}  // namespace

class MainWindowTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { testsupport::isolateSettings("tst_main_window"); }

    void filterSelectAndInspect() {
        MainWindow w;
        w.show();
        QVERIFY(openAndWait(w, testsupport::fixturePath("tensorclass_nested")));
        QCOMPARE(w.windowTitle(), QString("tensorclass_nested — tdstudio"));

        // Type into the filter box as a user would.
        QTest::keyClicks(w.documentPage()->filterEdit(), "rew");
        QVERIFY(QTest::qWaitFor([&] { return !w.documentPage()->filterModel()->isSearching(); },
                                10000));
        QAbstractItemModel* view = w.documentPage()->treeView()->model();
        const QModelIndex root = view->index(0, 0);
        QCOMPARE(view->rowCount(root), 1);
        const QModelIndex tc = view->index(0, 0, root);
        QCOMPARE(tc.data().toString(), QString("tc"));
        QCOMPARE(view->rowCount(tc), 1);
        const QModelIndex reward = view->index(0, 0, tc);
        QCOMPARE(reward.data().toString(), QString("reward"));
        QVERIFY(w.documentPage()->treeView()->isExpanded(tc));

        w.documentPage()->treeView()->setCurrentIndex(reward);
        DetailsPanel* d = w.documentPage()->detailsPanel();
        QCOMPARE(d->field("Key path"), QString("(\"tc\", \"reward\")"));
        QCOMPARE(d->field("DType"), QString("torch.float32"));
        QCOMPARE(d->field("Shape"), QString("[3]"));
        QCOMPARE(d->field("File"), QString("tc/_tensordict/reward.memmap"));
        QCOMPARE(d->field("Storage"), QString("file"));

        w.copySelectedKeyPath();
        QCOMPARE(QGuiApplication::clipboard()->text(), QString("(\"tc\", \"reward\")"));

        // Clearing the filter brings every key back.
        w.documentPage()->filterEdit()->clear();
        QCOMPARE(view->rowCount(view->index(0, 0)), 2);

        QVERIFY(w.selectKeyPath({"tc", "label"}));
        QCOMPARE(d->field("Kind"), QString("non-tensor"));
        QVERIFY(d->valueText().contains("\"nested\""));
        QVERIFY(w.selectKeyPath({"tc"}));
        QCOMPARE(d->field("Class"), QString("fixture_classes.MyTC"));
        QCOMPARE(d->field("Batch size"), QString("[3]"));
        QVERIFY(d->valueText().contains("\"info\": null"));
    }

    // The filter with the keyboard: it counts its matches (or says there
    // are none), Down goes to the first match, Escape clears it and the key
    // selected in it stays selected, shown in the whole tree. On main the
    // selection was lost, Escape did nothing and there was no count.
    void filterWorksFromTheKeyboard() {
        MainWindow w;
        w.show();
        QVERIFY(openAndWait(w, testsupport::fixturePath("tensorclass_nested")));
        DocumentPage* page = w.documentPage();
        QLineEdit* filter = page->filterEdit();
        filter->setFocus();
        QTest::keyClicks(filter, "zzz");
        QTRY_VERIFY(!page->filterModel()->isSearching());
        QVERIFY(page->filterStatus()->isVisible());
        QCOMPARE(page->filterStatus()->text(), QString("No key matches “zzz”."));

        filter->clear();
        QVERIFY(page->filterStatus()->isHidden());
        QTest::keyClicks(filter, "rew");
        QTRY_VERIFY(!page->filterModel()->isSearching());
        QCOMPARE(page->filterStatus()->text(), QString("1 key matches"));
        QTest::keyClick(filter, Qt::Key_Down);
        QVERIFY(page->treeView()->hasFocus());
        QCOMPARE(page->currentKeyPath(), (QStringList{"tc", "reward"}));

        filter->setFocus();
        QTest::keyClick(filter, Qt::Key_Escape);
        QVERIFY(filter->text().isEmpty());
        QCOMPARE(page->currentKeyPath(), (QStringList{"tc", "reward"}));
        const QModelIndex current = page->treeView()->currentIndex();
        QVERIFY(current.isValid() && page->treeView()->isExpanded(current.parent()));
        QAbstractItemModel* view = page->treeView()->model();
        QCOMPARE(view->rowCount(view->index(0, 0)), 2);  // every key back
        QCOMPARE(page->previewPanel()->node(), page->selectedNode());
    }

    void filterFindsAKeyAmong100kWithoutExpandingTheRest() {
        QTemporaryDir dir;
        testsupport::writeWideTree(dir.path(), 100, 1000);
        // One key unlike the others, in group_042 at row 700.
        QFile group(dir.path() + "/group_042/meta.json");
        QVERIFY(group.open(QIODevice::ReadOnly));
        const QByteArray meta = group.readAll().replace("\"leaf_0700\"", "\"needle\"");
        group.close();
        testsupport::writeFile(group.fileName(), meta);

        MainWindow w;
        w.show();
        QVERIFY(openAndWait(w, dir.path()));
        QSignalSpy finished(w.documentPage()->filterModel(), &KeyFilterModel::searchFinished);
        w.documentPage()->filterEdit()->setText("NEEDLE");
        QVERIFY(finished.wait(30000));
        QCOMPARE(finished.at(0).at(0).toInt(), 1);

        // The view shows the path to the match, opened.
        QTreeView* tree = w.documentPage()->treeView();
        QAbstractItemModel* view = tree->model();
        const QModelIndex root = view->index(0, 0);
        QCOMPARE(view->rowCount(root), 1);
        const QModelIndex g42 = view->index(0, 0, root);
        QCOMPARE(g42.data().toString(), QString("group_042"));
        QCOMPARE(view->rowCount(g42), 1);
        QCOMPARE(view->index(0, 0, g42).data().toString(), QString("needle"));
        QVERIFY(tree->isExpanded(root));
        QVERIFY(tree->isExpanded(g42));

        // Nothing else was fetched or expanded, and the tree was never fully fetched.
        KeyTreeModel* keys = w.documentPage()->keyModel();
        const tensordict::Node& top = keys->tensorDict()->root();
        QVERIFY(keys->fetchedCount(top.children()[42]) > 700);
        for (int g = 0; g < 100; ++g)
            if (g != 42)
                QCOMPARE(keys->fetchedCount(top.children()[g]), 0);
        QVERIFY(keys->handedOverCount() <= 1 + 100 + 1000);

        // Clearing the filter shows every group again, closed but for the match's.
        w.documentPage()->filterEdit()->clear();
        QCOMPARE(view->rowCount(view->index(0, 0)), 100);
        for (int g = 0; g < 100; ++g) {
            const QModelIndex row =
                w.documentPage()->filterModel()->mapFromSource(keys->indexOf(top.children()[g]));
            QVERIFY(row.isValid());
            QCOMPARE(tree->isExpanded(row), g == 42);
        }
    }

    void archiveDetailsShowTheEntry() {
        MainWindow w;
        QVERIFY(openAndWait(w, testsupport::fixturePath("archive_simple.tdz")));
        QVERIFY(w.selectKeyPath({"a"}));
        DetailsPanel* d = w.documentPage()->detailsPanel();
        QCOMPARE(d->field("Archive entry"), QString("a.memmap"));
        QCOMPARE(d->field("Payload offset"), QString("320 (64-byte aligned)"));
        QCOMPARE(d->field("Compression"), QString("stored"));
        // The root of an archive is its top level ("." on main).
        QVERIFY(w.selectKeyPath({}));
        QCOMPARE(d->field("Directory"), QString("(top level)"));
        QCOMPARE(w.recentFiles().front(),
                 QFileInfo(testsupport::fixturePath("archive_simple.tdz")).filePath());
    }

    // The details show every property row of the node, as the shared table words it.
    void detailsShowEveryPropertyOfTheNode() {
        MainWindow w;
        QVERIFY(openAndWait(w, testsupport::fixturePath("archive_simple.tdz")));
        for (const QStringList& keys : {QStringList{"a"}, QStringList{}}) {
            QVERIFY(w.selectKeyPath(keys));
            std::vector<std::string> path;
            for (const QString& k : keys)
                path.push_back(k.toStdString());
            const tensordict::Node* node =
                w.documentPage()->keyModel()->tensorDict()->root().find(path);
            QVERIFY(node);
            int rows = 0;
            for (const nodetext::PropertyRow& row : nodetext::propertyRows(*node)) {
                if (row.isLong) {
                    QCOMPARE(w.documentPage()->detailsPanel()->valueText(), row.text);
                } else {
                    QCOMPARE(w.documentPage()->detailsPanel()->field(row.label), row.text);
                    ++rows;
                }
            }
            QVERIFY(rows >= (path.empty() ? 5 : 10));
        }
    }

    // View > Group Keys by Dots: a state_dict nests by its dots, the key
    // paths stay the file's own (selecting, the details, saving), and the
    // choice is kept for the next document.
    void keysGroupByDotsAndKeepTheirPaths() {
        MainWindow w;
        QVERIFY(openAndWait(w, testsupport::torchFixturesDir() + "/state_dict.pt"));
        KeyTreeModel* model = w.documentPage()->keyModel();
        const QModelIndex root = model->index(0, 0);
        QCOMPARE(model->rowCount(root), 9);  // flat: "0.weight" ... "4.bias"
        QVERIFY(w.selectKeyPath({"1.running_var"}));

        QSignalSpy shown(w.documentPage(), &DocumentPage::treeShown);
        w.groupKeysAction()->trigger();
        QVERIFY(shown.wait(kTimeoutMs));
        const QModelIndex groupedRoot = model->index(0, 0);
        QCOMPARE(model->rowCount(groupedRoot), 3);  // "0", "1", "4"
        const QModelIndex one = model->index(1, KeyTreeModel::KeyColumn, groupedRoot);
        QCOMPARE(one.data().toString(), QString("1"));
        QVERIFY(model->node(one)->isKeyGroup());
        // The selection stayed, under the group, with the file's key path.
        QCOMPARE(w.documentPage()->currentKeyPath(), QStringList{"1.running_var"});
        const tensordict::Node* leaf = w.documentPage()->selectedNode();
        QCOMPARE(QString::fromStdString(KeyTreeModel::groupedKey(*leaf)), QString("running_var"));
        QCOMPARE(leaf->parent()->key(), std::string("1."));
        QVERIFY(w.selectKeyPath({"4.weight"}));
        QCOMPARE(w.documentPage()->selectedNode()->leaf().shape,
                 (std::vector<std::int64_t>{10, 7200}));

        // Saving the group "1" saves its five keys, flat, as the file has them.
        w.documentPage()->treeView()->setCurrentIndex(
            w.documentPage()->filterModel()->mapFromSource(one));
        QTemporaryDir out;
        SaveJob* job = w.startSave(out.path() + "/group.tdz", {});
        QVERIFY(job);
        QSignalSpy done(job, &SaveJob::succeeded);
        QVERIFY(done.wait(kTimeoutMs));
        const tensordict::TensorDict saved =
            tensordict::load((out.path() + "/group.tdz").toStdString());
        QCOMPARE(saved.root().children().size(), std::size_t(5));
        QVERIFY(saved.root().child("1.running_var"));

        // Kept for the next window; off again shows the flat tree.
        MainWindow next;
        QVERIFY(next.groupKeysAction()->isChecked());
        QVERIFY(openAndWait(next, testsupport::torchFixturesDir() + "/state_dict.pt"));
        QCOMPARE(
            next.documentPage()->keyModel()->rowCount(next.documentPage()->keyModel()->index(0, 0)),
            3);
        next.groupKeysAction()->trigger();
        QCOMPARE(
            next.documentPage()->keyModel()->rowCount(next.documentPage()->keyModel()->index(0, 0)),
            9);
        QVERIFY(!next.groupKeysAction()->isChecked());
    }

    void recentFilesKeepTheNewestFirst() {
        QMenu menu;
        RecentFiles recent(&menu);
        recent.clear();
        QVERIFY(!menu.isEnabled());
        for (int i = 0; i < RecentFiles::kMaxFiles + 2; ++i)
            recent.add(QString("/data/%1.tdz").arg(i));
        recent.add("/data/3.tdz");  // opened again: first, once
        const QStringList files = recent.files();
        QCOMPARE(files.size(), RecentFiles::kMaxFiles);
        QCOMPARE(files.front(), QString("/data/3.tdz"));
        QCOMPARE(files.count("/data/3.tdz"), 1);
        QCOMPARE(files[1], QString("/data/11.tdz"));
        QVERIFY(!files.contains("/data/0.tdz"));
        QVERIFY(menu.isEnabled());
        QSignalSpy open(&recent, &RecentFiles::openRequested);
        menu.actions().front()->trigger();
        QCOMPARE(open.count(), 1);
        QCOMPARE(open.front().front().toString(), QString("/data/3.tdz"));
        menu.actions().back()->trigger();  // Clear
        QVERIFY(recent.files().isEmpty());
        QVERIFY(!menu.isEnabled());
    }

    // A leaf that is a byte range of a file holding more (a .npy, a
    // safetensors file) names that File and the bytes it takes there; it is
    // never "longer than needed", nor is the file called a "Directory".
    void detailsOfALeafInAContainerFile() {
        MainWindow w;
        w.show();
        for (const QString& name : {QString("array.npy"), QString("model.safetensors")}) {
            const QString path = testsupport::torchFixturesDir() + "/" + name;
            QVERIFY(openAndWait(w, path));
            const tensordict::Node* leaf = nullptr;
            std::function<void(const tensordict::Node&)> first = [&](const tensordict::Node& n) {
                if (!leaf && n.isTensor())
                    leaf = &n;
                for (const tensordict::Node* c : n.children())
                    first(*c);
            };
            const tensordict::TensorDict td = tensordict::load(path.toStdString());
            first(td.root());
            QVERIFY(leaf);
            QStringList key;
            for (const std::string& k : leaf->keyPath())
                key << QString::fromStdString(k);
            QVERIFY(w.selectKeyPath(key));
            DetailsPanel* details = w.documentPage()->detailsPanel();
            QTRY_VERIFY(!details->field("Bytes in file").isEmpty());
            QCOMPARE(details->field("File"), QFileInfo(path).absoluteFilePath());
            QVERIFY2(details->field("Directory").isEmpty(),
                     qPrintable(details->field("Directory")));
            QVERIFY2(!details->field("File size").contains("longer than needed"),
                     qPrintable(details->field("File size")));
            const qint64 offset = qint64(leaf->leaf().storage.offset);
            QCOMPARE(details->field("Bytes in file"),
                     QString("%1 to %2")
                         .arg(QLocale().toString(offset),
                              QLocale().toString(offset + qint64(leaf->leaf().nbytes))));
        }
    }

    // Opened by a relative path, a file is remembered by its absolute one:
    // Open Recent from another folder finds it.
    void recentFilesAreAbsolute() {
        MainWindow w;
        w.show();
        const QString cwd = QDir::currentPath();
        QDir::setCurrent(testsupport::torchFixturesDir());
        const bool opened = openAndWait(w, "array.npy");
        QDir::setCurrent(cwd);
        QVERIFY(opened);
        QCOMPARE(w.recentFiles().value(0),
                 QFileInfo(testsupport::torchFixturesDir() + "/array.npy").absoluteFilePath());
        QCOMPARE(w.currentPath(), w.recentFiles().value(0));
    }

    void badInputIsReportedNotFatal() {
        MainWindow w;
        w.show();
        QTemporaryDir dir;
        const QString bogus = dir.path() + "/bogus.tdz";
        QFile f(bogus);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("not a zip at all");
        f.close();
        QVERIFY(!openAndWait(w, bogus));
        QVERIFY(w.lastError().contains(bogus));
        QVERIFY(w.lastError().contains("none of the formats tdstudio opens"));
        // Nothing open: the window itself says it.
        QVERIFY(w.welcomePage()->failureText().contains(
            "bogus.tdz: none of the formats tdstudio opens"));

        // A partly broken tree opens; the broken node is marked.
        testsupport::copyTree(testsupport::fixturePath("nested3"), dir.path() + "/n");
        QFile::remove(dir.path() + "/n/l1/y.memmap");
        QVERIFY(openAndWait(w, dir.path() + "/n"));
        QVERIFY(w.selectKeyPath({"l1", "y"}));
        QCOMPARE(w.documentPage()->detailsPanel()->field("Kind"), QString("error"));
        QVERIFY(w.documentPage()->detailsPanel()->valueText().contains("l1/y.memmap"));
        QVERIFY(w.selectKeyPath({"x"}));
        QCOMPARE(w.documentPage()->detailsPanel()->field("Kind"), QString("tensor"));
    }

    void dropOpensTheFile() {
        MainWindow w;
        w.show();
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(testsupport::fixturePath("lazy_stack"))});
        QSignalSpy loaded(&w, &MainWindow::documentLoaded);
        QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton,
                              Qt::NoModifier);
        QApplication::sendEvent(&w, &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(&w, &drop);
        QTRY_COMPARE(loaded.count(), 1);
        QVERIFY(w.selectKeyPath({"ls", "1", "x"}));
        QCOMPARE(w.documentPage()->detailsPanel()->field("Shape"), QString("[3]"));
        QVERIFY(w.selectKeyPath({"ls"}));
        QCOMPARE(w.documentPage()->detailsPanel()->field("Stack dim"), QString("0"));
    }

    // A window with nothing open says how to open something; after a failed
    // open it says what failed and why, leading with what to do, and offers
    // Open and the recent files (on main it said "Select a tensor leaf to
    // see its values."). With a tensordict open, a failed open keeps it.
    void aFailedOpenSaysWhatFailedAndOffersTheWayOn() {
        MainWindow first;
        QVERIFY(openAndWait(first, testsupport::fixturePath("simple")));
        QTemporaryDir scratch;
        const QString text = scratch.filePath("notes.tdz");
        testsupport::writeFile(text, "hello");

        MainWindow w;
        w.show();
        QVERIFY(w.welcomePage()->isVisible());
        QVERIFY(w.welcomePage()->failureText().isEmpty());
        QVERIFY(!openAndWait(w, scratch.filePath("gone.tdz")));
        QVERIFY(w.welcomePage()->isVisible());
        QVERIFY(!w.documentPage()->isVisible());
        QVERIFY2(w.welcomePage()->failureText().contains("“gone.tdz” does not exist"),
                 qPrintable(w.welcomePage()->failureText()));
        QVERIFY(w.findChildren<QMessageBox*>().isEmpty());  // the page says it
        QVERIFY(!openAndWait(w, text));
        QVERIFY2(w.welcomePage()->failureText().contains(
                     "This file is not a tensordict archive, or it is damaged.") &&
                     w.welcomePage()->failureText().contains("it looks like text"),
                 qPrintable(w.welcomePage()->failureText()));
        QVERIFY(w.welcomePage()->openFileButton()->isVisible());
        QVERIFY(w.welcomePage()->openDirectoryButton()->isVisible());
        // A well-formed file of a kind tdstudio does not show is not called damaged.
        const QString strings = scratch.filePath("labels.npy");
        QVERIFY(testsupport::runPython(
            {"-c", "import sys, numpy as np; np.save(sys.argv[1], np.array(['a', 'bc']))",
             strings}));
        QVERIFY(!openAndWait(w, strings));
        QVERIFY2(w.welcomePage()->failureText().contains("“labels.npy” is well-formed") &&
                     w.welcomePage()->failureText().contains("Unicode strings") &&
                     !w.welcomePage()->failureText().contains("damaged,"),
                 qPrintable(w.welcomePage()->failureText()));

        // A recent file, one click away; the failure box is below the list,
        // so a recent entry that fails never moves the list under the pointer.
        QListWidget* recent = w.welcomePage()->recentList();
        QVERIFY(recent->isVisible() && recent->count() >= 1);
        QVERIFY(!w.welcomePage()->failureText().isEmpty());
        const QLabel* box = nullptr;
        for (const QLabel* label : w.welcomePage()->findChildren<QLabel*>())
            if (label->isVisible() && label->text() == w.welcomePage()->failureText())
                box = label;
        QVERIFY(box);
        QVERIFY(box->mapTo(w.welcomePage(), QPoint(0, 0)).y() >
                recent->mapTo(w.welcomePage(), QPoint(0, recent->height())).y());
        QCOMPARE(recent->item(0)->data(Qt::UserRole).toString(),
                 QFileInfo(testsupport::fixturePath("simple")).filePath());
        QSignalSpy loaded(&w, &MainWindow::documentLoaded);
        QTest::mouseClick(recent->viewport(), Qt::LeftButton, {},
                          recent->visualItemRect(recent->item(0)).center());
        QTRY_VERIFY(loaded.count() >= 1);
        QVERIFY(w.documentPage()->isVisible());
        QVERIFY(!w.welcomePage()->isVisible());

        // Open: a failure keeps what is open and says why in a box.
        QVERIFY(!openAndWait(w, text));
        QVERIFY(w.documentPage()->isVisible());
        QTRY_VERIFY(!w.findChildren<QMessageBox*>().isEmpty());
        QMessageBox* message = w.findChildren<QMessageBox*>().front();
        QCOMPARE(message->text(),
                 QString("This file is not a tensordict archive, or it is damaged."));
        QVERIFY(
            message->informativeText().contains("notes.tdz: none of the formats tdstudio opens"));
        closeMessageBoxes(w);
    }

    // File > Check Integrity on a damaged archive: its problems join the
    // overview's Problems list, clicking one selects its key, Repair asks
    // first, then the archive is sound and opened again.
    void checkIntegrityListsProblemsAndRepairs() {
        QTemporaryDir scratch;
        const QString archive = scratch.filePath("damaged.tdz");
        QVERIFY(QFile::copy(testsupport::fixturePath("archive_simple.tdz"), archive));
        QVERIFY(QFile::setPermissions(archive, QFile::ReadOwner | QFile::WriteOwner));
        {
            QFile f(archive);
            QVERIFY(f.open(QIODevice::ReadWrite));
            QVERIFY(f.seek(320));  // a.memmap's payload, as an in-place write changes it
            QVERIFY(f.putChar('\x7f'));
        }
        MainWindow w;
        w.resize(900, 520);  // a short window: the problems start below the fold
        w.show();
        QVERIFY(openAndWait(w, archive));
        OverviewPanel* overview = w.documentPage()->overviewPanel();
        QTRY_VERIFY(overview->isReady());
        QVERIFY(overview->checkButton()->isVisible());
        QSignalSpy checked(w.checks(), &CheckController::checked);
        overview->checkButton()->click();  // as File > Check Integrity
        QTRY_COMPARE_WITH_TIMEOUT(checked.count(), 1, kTimeoutMs);
        QListWidget* problems = overview->problemList();
        QListWidgetItem* crc = nullptr;
        for (int i = 0; i < problems->count(); ++i)
            if (problems->item(i)->text().contains("crc_mismatch"))
                crc = problems->item(i);
        QVERIFY2(crc, qPrintable(problems->item(0)->text()));
        QVERIFY(crc->text().contains("damaged.tdz:a.memmap"));
        QVERIFY(w.statusBar()->currentMessage().contains("1 error"));
        QVERIFY(overview->repairButton()->isVisible());
        // The progress dialog is gone once the check is done (it stayed, at
        // 100% with Cancel), and the broken key is marked in the tree.
        // Deleted, not hidden: its minimum-duration timer cannot bring it back.
        QTRY_VERIFY(!w.checks()->progressDialog());
        const tensordict::Node* a = w.documentPage()->keyModel()->tensorDict()->root().child("a");
        QVERIFY(w.documentPage()->keyModel()->isFlagged(a));
        QVERIFY(!w.documentPage()->keyModel()->isFlagged(
            w.documentPage()->keyModel()->tensorDict()->root().child("b")));
        // The problems are scrolled into view.
        QTRY_VERIFY(overview->problemsInView());
        screenshot(&w, "check-problems.png");

        // Clicking the problem selects its key.
        problems->scrollToItem(crc);
        QTest::mouseClick(problems->viewport(), Qt::LeftButton, {},
                          problems->visualItemRect(crc).center());
        QCOMPARE(w.documentPage()->currentKeyPath(), QStringList{"a"});

        // Repair asks; No changes nothing.
        QString asked;
        bool answer = false;
        w.checks()->setRepairConfirmation([&](const QString& q) {
            asked = q;
            return answer;
        });
        const QStringList before = testsupport::fileFingerprints(archive);
        w.checks()->repair();
        QVERIFY(asked.contains("re-stamp 1 CRC-32"));
        QVERIFY(asked.contains("No tensor's bytes and no meta.json are changed"));
        QCOMPARE(testsupport::fileFingerprints(archive), before);
        answer = true;
        QSignalSpy repaired(w.checks(), &CheckController::repaired);
        QSignalSpy loaded(&w, &MainWindow::documentLoaded);
        w.checks()->repair();
        QTRY_COMPARE_WITH_TIMEOUT(checked.count(), 2, kTimeoutMs);
        QCOMPARE(repaired.count(), 1);
        QVERIFY(w.checks()->report()->sound());
        QTRY_VERIFY_WITH_TIMEOUT(loaded.count() >= 1, kTimeoutMs);  // opened again
        QVERIFY(w.selectKeyPath({}));
        QTRY_VERIFY(overview->isReady());
        QTRY_VERIFY(problems->item(0)->text().contains("found the dataset sound"));
        QVERIFY(!overview->repairButton()->isVisible());
        // Opened again: the marks of the old check are gone.
        QVERIFY(!w.documentPage()->keyModel()->isFlagged(
            w.documentPage()->keyModel()->tensorDict()->root().child("a")));
    }

    // Every file dialog starts beside the open file the first time, then in
    // the folder last used for its kind (on main, each started in the
    // process's working directory). Exports say where they wrote, with Show
    // in Folder, as saves do (on main they said nothing).
    // The file dialogs open large enough for their columns: the names take
    // the room, size and date fit (they opened small, columns cut).
    void fileDialogsFitTheirColumns() {
        QFileDialog dialog(nullptr, "Open", testsupport::torchFixturesDir());
        dialog.setOption(QFileDialog::DontUseNativeDialog);
        file_dialogs::prepareDialog(dialog);
        dialog.show();
        QVERIFY(QTest::qWaitForWindowExposed(&dialog));
        const QRect screen = dialog.screen()->availableGeometry();
        QCOMPARE(dialog.width(), std::min(980, screen.width() * 9 / 10));
        QCOMPARE(dialog.height(), std::min(620, screen.height() * 9 / 10));
        auto* list = dialog.findChild<QTreeView*>("treeView");
        QVERIFY(list);
        QTRY_VERIFY(list->model() && list->model()->rowCount(list->rootIndex()) > 0);
        QCOMPARE(dialog.viewMode(), QFileDialog::Detail);
        const QFontMetrics metrics(list->font());
        QVERIFY(list->header()->sectionSize(0) >
                metrics.horizontalAdvance("consolidated_saved.expected.json"));
        dialog.close();
    }

    void fileDialogsStartWhereTheUserWorks() {
        QTemporaryDir scratch;
        const QString data = scratch.filePath("data"), out = scratch.filePath("out");
        testsupport::copyTree(testsupport::fixturePath("simple"), data + "/simple");
        QVERIFY(QDir().mkpath(out));
        for (const QString& key : QSettings().allKeys())
            if (key.startsWith("dialogs/"))
                QSettings().remove(key);

        QList<QPair<file_dialogs::Kind, QString>> asked;
        QStringList suggested;
        QString answer;
        file_dialogs::setChooser(
            [&](file_dialogs::Kind kind, const QString& start, const QString& name) {
                asked.append({kind, start});
                suggested.append(name);
                return std::exchange(answer, QString());
            });
        QString opened;
        file_dialogs::setFolderOpener([&](const QString& folder) { opened = folder; });
        const auto restore = qScopeGuard([] {
            file_dialogs::setChooser({});
            file_dialogs::setFolderOpener({});
        });
        MainWindow w;
        w.show();
        QVERIFY(openAndWait(w, data + "/simple"));
        const auto action = [&](const QString& text) -> QAction* {
            for (QAction* a : w.findChildren<QAction*>())
                if (a->text() == text)
                    return a;
            return nullptr;
        };
        // Cancelled dialogs: each starts beside the open file.
        QAction* compareFile = action("&File…");
        QAction* openDirectory = action("Open &Directory…");
        QVERIFY(compareFile && openDirectory);
        compareFile->trigger();
        openDirectory->trigger();
        QCOMPARE(asked.size(), 2);
        QCOMPARE(asked[0].first, file_dialogs::Kind::Compare);
        QCOMPARE(asked[0].second, data);
        QCOMPARE(asked[1].first, file_dialogs::Kind::OpenDirectory);
        QCOMPARE(asked[1].second, data);

        // A CSV export: it starts beside the file too, and says where it wrote.
        PreviewPanel* preview = w.documentPage()->previewPanel();
        QSignalSpy ready(preview, &PreviewPanel::leafReady);
        QVERIFY(w.selectKeyPath({"b", "c"}));
        QTRY_COMPARE(ready.count(), 1);
        preview->setMode(PreviewPanel::TableMode);
        QSignalSpy exported(preview, &PreviewPanel::exported);
        answer = out + "/c.csv";
        clickButton(preview, "CSV…");
        QCOMPARE(asked.back().first, file_dialogs::Kind::ExportCsv);
        QCOMPARE(suggested.back(), "c.csv");  // a 1-D leaf: all of it
        QCOMPARE(asked.back().second, data);
        QTRY_COMPARE_WITH_TIMEOUT(exported.count(), 1, kTimeoutMs);
        QCOMPARE(exported.front().front().toString(), out + "/c.csv");
        QVERIFY2(w.statusBar()->currentMessage().startsWith("Exported " + out + "/c.csv ("),
                 qPrintable(w.statusBar()->currentMessage()));
        QVERIFY(w.showInFolderButton()->isVisible());
        w.showInFolderButton()->click();
        QCOMPARE(opened, out);

        // The next CSV starts where the last one went; other kinds keep their own.
        clickButton(preview, "CSV…");
        QCOMPARE(asked.back().second, out);
        compareFile->trigger();
        QCOMPARE(asked.back().second, data);
        preview->setMode(PreviewPanel::ImageMode);
        QTRY_VERIFY(findButton(preview, "Export PNG…") &&
                    findButton(preview, "Export PNG…")->isVisible());
        answer = out + "/c.png";
        clickButton(preview, "Export PNG…");
        QCOMPARE(asked.back().first, file_dialogs::Kind::ExportPng);
        QCOMPARE(asked.back().second, data);
        QCOMPARE(suggested.back(), "c.png");
        QTRY_COMPARE_WITH_TIMEOUT(exported.count(), 2, kTimeoutMs);
        QVERIFY(w.statusBar()->currentMessage().startsWith("Exported " + out + "/c.png ("));
        // Another message takes the note's place, and its button goes with it.
        w.statusBar()->showMessage("something else");
        QVERIFY(!w.showInFolderButton()->isVisible());
    }
};

QTEST_MAIN(MainWindowTest)
#include "tst_main_window.moc"
