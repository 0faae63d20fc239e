// Saving from tdstudio: the options dialog's states and inline validation,
// saves through the GUI path to every target, cancel with atomic, and a GUI
// thread that keeps running while the writers are busy. The writers are held
// at chosen points through the save's own progress callback (a Hold), so
// that what is checked does not depend on how fast this machine writes.

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QJsonDocument>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QPushButton>
#include <QRadioButton>
#include <QScopeGuard>
#include <QSpinBox>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTreeView>
#include <QtTest>
#include <atomic>

#include "document_page.h"
#include "key_filter_model.h"
#include "key_tree_model.h"
#include "libzip_reader.h"
#include "main_window.h"
#include "save_job.h"
#include "save_options_dialog.h"
#include "save_progress_dialog.h"
#include "tensordict/report.h"
#include "testsupport.h"

using namespace tensordict;

namespace {

bool openAndWait(MainWindow& w, const QString& path) {
    QSignalSpy loaded(&w, &MainWindow::documentLoaded);
    w.openPath(path);
    return loaded.wait(20000);
}

QJsonObject report(const QString& path) {
    DescribeOptions options;
    options.sha256 = true;
    options.firstValues = 16;
    return QJsonDocument::fromJson(
               QByteArray::fromStdString(
                   toJson(describe(load(path.toStdString()), options), JsonStyle::Compact)))
        .object();
}

// A tensordict of `mib` MiB of float32 in 16 leaves, written to `dir`.
void writeBig(const QString& dir, int mib, float value) {
    TensorDict td = TensorDict::create();
    for (int i = 0; i < 16; ++i) {
        const std::size_t floats = std::size_t(mib) * 262144 / 16;
        td.mutableRoot().addBytes("leaf" + std::to_string(i), DType::Float32,
                                  {std::int64_t(floats)},
                                  ownedBytes(std::vector<float>(floats, value + float(i))));
    }
    save(td, dir.toStdString());
}

void screenshot(QWidget* w, const QString& name) {
    const QByteArray dir = qgetenv("TDSTUDIO_SCREENSHOT_DIR");
    if (!dir.isEmpty())
        w->grab().save(QString::fromLocal8Bit(dir) + "/" + name);
}

}  // namespace

class SaveDialogTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void cleanup() { testsupport::verifyArchivesWithLibzip(scratch_.path()); }

    void initTestCase() {
        QVERIFY(scratch_.isValid());
        testsupport::isolateSettings("tst_save_dialog");
        QSettings().clear();  // the compression an earlier run chose
    }

    void dialogStatesAndInlineValidation() {
        SaveOptionsDialog dialog(12345, "the whole tensordict", testsupport::fixturePath("simple"));
        dialog.show();
        QPushButton* save = dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Save);
        QVERIFY(!save->isEnabled());  // no destination yet
        QVERIFY(dialog.problem().contains("Choose a destination"));
        QVERIFY(dialog.atomicBox()->isChecked());
        QVERIFY(dialog.robustKeyBox()->isChecked());
        QCOMPARE(dialog.threadsBox()->value(), std::max(1, QThread::idealThreadCount()));

        // A directory: compression is not offered.
        QTest::keyClicks(dialog.destinationEdit(), scratch_.path() + "/out-dir");
        QVERIFY(!dialog.archive());
        QVERIFY(!dialog.compressionBox()->isEnabled());
        QVERIFY(!dialog.canSave());  // until the disk has been asked
        dialog.finishPendingCheck();
        QVERIFY(dialog.canSave());
        QVERIFY(save->isEnabled());

        // A .tdz name switches to an archive; compression and level become available.
        dialog.destinationEdit()->clear();
        QTest::keyClicks(dialog.destinationEdit(), scratch_.path() + "/out.tdz");
        QVERIFY(dialog.archive());
        QVERIFY(dialog.compressionBox()->isEnabled());
        QVERIFY(!dialog.levelBox()->isEnabled());  // stored has no level
        QVERIFY(dialog.compressionNoteText().contains("load without a copy"));
        // Deflate's levels say what they trade: 1-3 fast (ISA-L), the default Python's sizes.
        dialog.setCompression(kZipDeflate);
        QVERIFY2(dialog.compressionNoteText().contains("Level 6"),
                 qPrintable(dialog.compressionNoteText()));
        dialog.levelBox()->setValue(1);
        QVERIFY2(dialog.compressionNoteText().startsWith("Fast: 10-30x faster"),
                 qPrintable(dialog.compressionNoteText()));
        QCOMPARE(dialog.options().compressionLevel, 1);
        dialog.finishPendingCheck();
        screenshot(&dialog, "save-dialog-deflate-fast.png");
        dialog.levelBox()->setValue(9);
        QVERIFY(dialog.compressionNoteText().contains("Level 9"));
        dialog.levelBox()->setValue(-1);
        dialog.setCompression(kZipLzma);
        QVERIFY(dialog.levelBox()->isEnabled());
        QVERIFY(dialog.compressionNoteText().contains("many times slower"));
        QCOMPARE(dialog.options().compression, int(kZipLzma));
        QCOMPARE(dialog.options().archive.value(), true);
        dialog.finishPendingCheck();  // the picture shows what the disk said
        screenshot(&dialog, "save-dialog-archive.png");

        // Back to a directory name: compression resets, it cannot apply.
        dialog.destinationEdit()->clear();
        QTest::keyClicks(dialog.destinationEdit(), scratch_.path() + "/plain");
        QVERIFY(!dialog.archive());
        QCOMPARE(dialog.options().compression, int(kZipStored));

        // Impossible destinations are explained before Save.
        dialog.setDestination(scratch_.path() + "/missing/folder/x.tdz");
        dialog.finishPendingCheck();
        QVERIFY(!save->isEnabled());
        QVERIFY(dialog.problem().contains("does not exist"));
        QFile file(scratch_.path() + "/a-file");
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.close();
        dialog.setDestination(scratch_.path() + "/a-file");
        dialog.finishPendingCheck();
        QVERIFY(dialog.problem().contains("is a file"));

        // An existing destination is a warning: Save becomes Replace.
        QDir().mkpath(scratch_.path() + "/existing");
        QFile inside(scratch_.path() + "/existing/meta.json");
        QVERIFY(inside.open(QIODevice::WriteOnly));
        inside.close();
        dialog.setDestination(scratch_.path() + "/existing");
        dialog.finishPendingCheck();
        QVERIFY(save->isEnabled());
        QVERIFY(dialog.warning().contains("will be replaced"));
        QCOMPARE(save->text(), QString("Replace"));

        // More than the free space: refused.
        SaveOptionsDialog huge(std::uint64_t(1) << 62, "everything", QString());
        huge.setDestination(scratch_.path() + "/big.tdz");
        huge.finishPendingCheck();
        QVERIFY(huge.problem().contains("Not enough free space"));
    }

    // Typing a destination does not ask the disk at every keystroke: the
    // checks wait for typing to pause (a single-shot timer restarted by each
    // edit, which cannot fire while keyClicks sends its events) and run once,
    // on a worker. Save runs a pending check before it decides.
    // Destinations that cannot be written say why, not a misleading reason
    // (main said "Not enough free space: ... 0 B free" for /proc, and that
    // the folder does not exist for a path inside a file).
    void impossibleDestinationsSayWhy_data() {
        QTest::addColumn<QString>("destination");
        QTest::addColumn<QString>("reason");
        QTest::newRow("inside a file") << "/etc/passwd/x.tdz"
                                       << "/etc/passwd is a file, not a folder";
        QTest::newRow("a virtual file system") << "/proc/x.tdz"
                                               << "/proc cannot hold files";
        QTest::newRow("a missing folder") << "/no/such/folder/x.tdz"
                                          << "The folder /no/such/folder does not exist";
    }

    void impossibleDestinationsSayWhy() {
        QFETCH(QString, destination);
        QFETCH(QString, reason);
        SaveOptionsDialog dialog(12345, "all", testsupport::fixturePath("simple"));
        dialog.setDestination(destination);
        dialog.finishPendingCheck();
        QVERIFY(!dialog.canSave());
        QVERIFY2(dialog.problem().startsWith(reason), qPrintable(dialog.problem()));
    }

    void destinationIsCheckedOncePerPause() {
        SaveOptionsDialog dialog(1, "the whole tensordict", QString());
        dialog.show();
        QPushButton* save = dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Save);
        QSignalSpy checked(&dialog, &SaveOptionsDialog::destinationChecked);
        const QString typed = scratch_.path() + "/typed-destination";
        QTest::keyClicks(dialog.destinationEdit(), typed);
        QCOMPARE(dialog.destinationEdit()->text(), typed);
        QCOMPARE(dialog.diskCheckCount(), 0);  // one edit per character, no disk yet
        QVERIFY(dialog.isChecking());
        QVERIFY(!dialog.canSave());
        QVERIFY(checked.wait(10000));  // the pause: one check, off the GUI thread
        QCOMPARE(dialog.diskCheckCount(), 1);
        QVERIFY(!dialog.isChecking());
        QVERIFY(save->isEnabled());
        QCOMPARE(dialog.problem(), QString());

        // Format and atomic choices reuse what the disk said.
        dialog.setArchive(true);
        dialog.atomicBox()->setChecked(false);
        QCOMPARE(dialog.diskCheckCount(), 1);

        // More typing, then Save before the pause: the check runs first, once,
        // and Save follows when it is in (the GUI thread never waits for it).
        dialog.setArchive(false);
        QTest::keyClicks(dialog.destinationEdit(), "-more");
        QCOMPARE(dialog.diskCheckCount(), 1);
        QSignalSpy accepted(&dialog, &QDialog::accepted);
        save->click();
        QCOMPARE(dialog.diskCheckCount(), 2);
        QCOMPARE(accepted.count(), 0);
        QTRY_COMPARE_WITH_TIMEOUT(accepted.count(), 1, 300000);
        QCOMPARE(dialog.destination(), typed + "-more");
        QCOMPARE(checked.count(), 2);
    }

    void saveThroughTheGui_data() {
        QTest::addColumn<QString>("target");
        QTest::newRow("directory") << "dir";
        for (const char* c : {"stored", "deflate", "bzip2", "lzma"})
            QTest::newRow(c) << QString(c);
    }
    void saveThroughTheGui() {
        QFETCH(QString, target);
        MainWindow w;
        QVERIFY(openAndWait(w, testsupport::fixturePath("tensorclass_nested")));
        SaveOptionsDialog dialog(0, "all", w.currentPath());
        const QString prefix = scratch_.path() + "/gui-" + target + (target == "dir" ? "" : ".tdz");
        dialog.setDestination(prefix);
        if (target != "dir")
            dialog.setCompression(*zipMethodFromName(target.toStdString()));
        dialog.finishPendingCheck();
        QVERIFY(dialog.canSave());
        SaveJob* job = w.startSave(dialog.destination(), dialog.options());
        QVERIFY(job);
        QSignalSpy done(job, &SaveJob::succeeded);
        QVERIFY(done.wait(30000));
        QVERIFY(w.saveProgressDialog()->statusText().startsWith("Saved"));
        // Done: the figures stay, the time estimate goes (it said "1 s left" at 100%).
        const QString detail = w.saveProgressDialog()->detailText();
        QVERIFY2(
            detail.contains("files") && !detail.contains("left") && !detail.contains("finishing"),
            qPrintable(detail));
        const QString mismatch = testsupport::compareWithExpected(
            report(prefix),
            testsupport::readJsonFile(testsupport::fixturePath("tensorclass_nested.expected.json")),
            false);
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
        // Offered: its folder, noted in the status bar too.
        QVERIFY(!w.saveProgressDialog()->showInFolderButton()->isHidden());
        QCOMPARE(w.statusBar()->currentMessage(), "Saved " + prefix);
        QVERIFY(!w.showInFolderButton()->isHidden());
        // Offered: open the result, which shows locked and mapped.
        QSignalSpy loaded(&w, &MainWindow::documentLoaded);
        w.saveProgressDialog()->openButton()->click();
        QVERIFY2(loaded.wait(20000), qPrintable(w.lastError()));
        QCOMPARE(w.currentPath(), prefix);
    }

    // A checkpoint with a pickled module: the dialog offers to leave the
    // object out (only then), and the save through the window does so.
    void aCheckpointsObjectsCanBeLeftOut() {
        SaveOptionsDialog plain(0, "all", testsupport::fixturePath("simple"));
        QVERIFY(plain.skipObjectsBox()->isHidden());
        QVERIFY(!plain.options().skipObjects);

        const QString pt = scratch_.path() + "/module.pt";
        QString error;
        QVERIFY2(testsupport::runPython({"-c",
                                         "import sys, torch\n"
                                         "torch.save({'model': torch.nn.Linear(2, 3), "
                                         "'w': torch.ones(3)}, sys.argv[1])\n",
                                         pt},
                                        nullptr, &error),
                 qPrintable(error));
        MainWindow w;
        QVERIFY(openAndWait(w, pt));
        SaveOptionsDialog dialog(0, "all", w.currentPath());
        dialog.setHasObjects(true);
        dialog.show();
        QVERIFY(dialog.skipObjectsBox()->isVisible());
        QVERIFY(!dialog.skipObjectsBox()->isChecked());
        const QString prefix = scratch_.path() + "/module.tdz";
        dialog.setDestination(prefix);
        dialog.finishPendingCheck();

        SaveJob* refused = w.startSave(dialog.destination(), dialog.options());
        QSignalSpy failed(refused, &SaveJob::failed);
        QVERIFY(failed.wait(30000));
        const JobOutcome refusal = failed.front().front().value<JobOutcome>();
        QCOMPARE(refusal.failure.kind, tensordict::ErrorKind::Invalid);
        QVERIFY2(refusal.text().contains("model: a Python object"), qPrintable(refusal.text()));
        QTRY_VERIFY(!w.currentSave());

        dialog.skipObjectsBox()->setChecked(true);
        SaveJob* job = w.startSave(dialog.destination(), dialog.options());
        QSignalSpy done(job, &SaveJob::succeeded);
        QVERIFY(done.wait(30000));
        const TensorDict saved = load(prefix.toStdString());
        QVERIFY(!saved.root().child("model"));
        QVERIFY(saved.root().child("w"));
    }

    // A checkpoint with a quantized tensor (grey, not read): the window's
    // dialog offers to leave it out, says the save would be refused until
    // then, and the save leaves it out.
    void partsNotReadHereCanBeLeftOut() {
        const QString pt = scratch_.path() + "/quantized.pt";
        QString error;
        QVERIFY2(testsupport::runPython(
                     {"-c",
                      "import sys, torch\n"
                      "q = torch.quantize_per_tensor(torch.ones(4), 0.5, 0, torch.qint8)\n"
                      "torch.save({'q': q, 'w': torch.ones(3)}, sys.argv[1])\n",
                      pt},
                     nullptr, &error),
                 qPrintable(error));
        MainWindow w;
        w.show();
        QVERIFY(openAndWait(w, pt));
        const QString prefix = scratch_.path() + "/quantized.tdz";
        bool offered = false;
        QString problemBefore, problemAfter;
        QTimer::singleShot(0, &w, [&] {
            auto* dialog = qobject_cast<SaveOptionsDialog*>(QApplication::activeModalWidget());
            if (!dialog)
                return;
            offered =
                dialog->skipObjectsBox()->isVisible() && dialog->skipObjectsBox()->isEnabled();
            dialog->setDestination(prefix);
            dialog->finishPendingCheck();
            problemBefore = dialog->problem();
            dialog->skipObjectsBox()->setChecked(true);
            dialog->finishPendingCheck();
            problemAfter = dialog->problem();
            screenshot(dialog, "save-dialog-not-read.png");
            dialog->findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Save)->click();
        });
        w.saveAs();
        QVERIFY(offered);
        QVERIFY2(problemBefore.contains("quantized tensor"), qPrintable(problemBefore));
        QVERIFY2(problemAfter.isEmpty(), qPrintable(problemAfter));
        QTRY_VERIFY_WITH_TIMEOUT(w.currentSave(), 30000);
        QSignalSpy done(w.currentSave(), &SaveJob::succeeded);
        QVERIFY(done.wait(30000));
        const TensorDict saved = load(prefix.toStdString());
        QVERIFY(saved.root().child("w") && !saved.root().child("q"));
    }

    void exportSelectedSubtrees() {
        MainWindow w;
        QVERIFY(openAndWait(w, testsupport::fixturePath("nested3")));
        QVERIFY(w.selectKeyPath({"l1", "l2", "z"}));
        QVERIFY(w.selectKeyPath({"x"}));
        // Both rows selected (the second with Ctrl held).
        w.documentPage()->keyModel()->ensureFetched(
            w.documentPage()->keyModel()->tensorDict()->root().find({"l1", "l2", "z"}));
        const QModelIndex z =
            w.documentPage()->filterModel()->mapFromSource(w.documentPage()->keyModel()->indexOf(
                w.documentPage()->keyModel()->tensorDict()->root().find({"l1", "l2", "z"})));
        w.documentPage()->treeView()->selectionModel()->select(
            z, QItemSelectionModel::Select | QItemSelectionModel::Rows);
        const QString prefix = scratch_.path() + "/subset";
        // Without copy_existing the mapped leaves are refused, and the dialog says why.
        SaveJob* refused = w.startSave(prefix, SaveOptions{});
        QSignalSpy failed(refused, &SaveJob::failed);
        QVERIFY(failed.wait(30000));
        QVERIFY(failed.front().front().value<JobOutcome>().text().contains("copy_existing"));
        QVERIFY(w.saveProgressDialog()->statusText().contains("copy_existing"));
        QVERIFY(!QFileInfo::exists(prefix + "/meta.json"));
        SaveOptions options;
        options.copyExisting = true;
        SaveJob* job = w.startSave(prefix, options);
        QSignalSpy done(job, &SaveJob::succeeded);
        QVERIFY(done.wait(30000));
        const TensorDict out = load(prefix.toStdString());
        QVERIFY(out.root().child("x"));
        QVERIFY(out.root().find({"l1", "l2", "z"}));
        QVERIFY(!out.root().find({"l1", "y"}));
    }

    // Save As with keys selected lists them, and one click saves the whole
    // tensordict instead (main only said "2 selected key(s)"). The
    // compression chosen is offered again by the next save.
    void theDialogListsTheKeysAndOffersTheWhole() {
        MainWindow w;
        w.show();
        QVERIFY(openAndWait(w, testsupport::fixturePath("nested3")));
        QVERIFY(w.selectKeyPath({"x"}));
        const auto* z = w.documentPage()->keyModel()->tensorDict()->root().find({"l1", "l2", "z"});
        w.documentPage()->keyModel()->ensureFetched(z);
        w.documentPage()->treeView()->selectionModel()->select(
            w.documentPage()->filterModel()->mapFromSource(
                w.documentPage()->keyModel()->indexOf(z)),
            QItemSelectionModel::Select | QItemSelectionModel::Rows);

        const QString prefix = scratch_.path() + "/whole-instead.tdz";
        QStringList listed;
        QString scopeTexts;
        QTimer::singleShot(0, &w, [&] {
            auto* dialog = qobject_cast<SaveOptionsDialog*>(QApplication::activeModalWidget());
            if (!dialog)
                return;
            for (int i = 0; i < dialog->keyList()->count(); ++i)
                listed << dialog->keyList()->item(i)->text();
            scopeTexts = dialog->scopeButton(0)->text() + " | " + dialog->scopeButton(1)->text();
            screenshot(dialog, "save-dialog-scopes.png");
            dialog->scopeButton(1)->click();
            dialog->setDestination(prefix);
            dialog->setCompression(kZipDeflate);
            dialog->copyExistingBox()->setChecked(true);
            dialog->findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Save)->click();
        });
        w.saveAs();
        QCOMPARE(listed, (QStringList{"\"x\"", "(\"l1\", \"l2\", \"z\")"}));
        QCOMPARE(scopeTexts,
                 QString("The 2 selected keys · 48 B | The whole tensordict (nested3) · 84 B"));
        QVERIFY(w.currentSave());
        QSignalSpy done(w.currentSave(), &SaveJob::succeeded);
        QVERIFY(done.wait(30000));
        const QString mismatch = testsupport::compareWithExpected(
            report(prefix),
            testsupport::readJsonFile(testsupport::fixturePath("nested3.expected.json")), false);
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));

        // The next dialog starts from deflate, for archives.
        SaveOptionsDialog next(0, "all", w.currentPath());
        next.setDestination(scratch_.path() + "/next.tdz");
        QCOMPARE(next.options().compression, int(kZipDeflate));
        next.setDestination(scratch_.path() + "/next-dir");
        QCOMPARE(next.options().compression, int(kZipStored));
        QCOMPARE(next.compressionBox()->currentData().toInt(), int(kZipStored));
    }

    // A file of one tensor: the dialog offers its name as the key to save it
    // under, says no before Save when the key is emptied, and saves it under
    // the key given. (It offered Replace, then failed with "a tensor cannot
    // be the root of a save".)
    void aFileOfOneTensorIsSavedUnderAKey() {
        MainWindow w;
        w.show();
        QVERIFY(openAndWait(w, testsupport::torchFixturesDir() + "/array.npy"));
        const QString prefix = scratch_.path() + "/one-tensor.tdz";
        QString problemWithoutKey, keyShown;
        QTimer::singleShot(0, &w, [&] {
            auto* dialog = qobject_cast<SaveOptionsDialog*>(QApplication::activeModalWidget());
            if (!dialog)
                return;
            keyShown = dialog->keyNameEdit()->text();
            dialog->setDestination(prefix);
            dialog->keyNameEdit()->clear();
            dialog->finishPendingCheck();
            problemWithoutKey = dialog->problem();
            screenshot(dialog, "save-dialog-one-tensor.png");
            dialog->keyNameEdit()->setText("values");
            dialog->findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Save)->click();
        });
        w.saveAs();
        QCOMPARE(keyShown, QString("array"));
        QVERIFY2(problemWithoutKey.contains("one tensor"), qPrintable(problemWithoutKey));
        QTRY_VERIFY_WITH_TIMEOUT(w.currentSave(), 300000);
        QSignalSpy done(w.currentSave(), &SaveJob::succeeded);
        QVERIFY(done.wait(300000));
        const TensorDict saved = load(prefix.toStdString());
        QVERIFY(saved.root().child("values") && saved.root().child("values")->isTensor());
    }

    // What the save would refuse about the data is said before Save: two
    // keys that would become one file, and a link out of the dataset (with
    // the checkbox that allows it).
    void refusalsAreSaidBeforeSave() {
        const TensorDict merged = [] {
            TensorDict td = TensorDict::create();
            td.mutableRoot().addNonTensor("x", Value(1));
            td.mutableRoot().addTensorDict("x.memmap");  // its folder would be x's file
            td.mutableRoot().addBytes("x", DType::UInt8, {1}, ownedBytes(QByteArray(1, '\1')));
            return td;
        }();
        auto data = std::make_shared<const TensorDict>(std::move(merged));
        SaveOptionsDialog dialog(1, "the whole tensordict", QString());
        dialog.setDataCheck([data](int, const QString&, const SaveOptions& options) {
            return saveRefusal(*data, options);
        });
        dialog.setDestination(scratch_.path() + "/merged-keys");
        dialog.finishPendingCheck();
        QVERIFY2(dialog.problem().contains("would both be saved as x.memmap"),
                 qPrintable(dialog.problem()));
        QVERIFY(
            !dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Save)->isEnabled());

        // A dataset whose leaf is a link out of it.
        const QString dir = scratch_.path() + "/linked";
        QDir(dir).removeRecursively();
        testsupport::copyTree(testsupport::fixturePath("simple"), dir);
        const QString outside = scratch_.path() + "/outside.memmap";
        QFile::remove(outside);
        QVERIFY(QFile::rename(dir + "/a.memmap", outside));
        QVERIFY(QFile::link(outside, dir + "/a.memmap"));
        auto linked = std::make_shared<const TensorDict>(load(dir.toStdString()));
        SaveOptionsDialog links(1, "the whole tensordict", dir);
        links.setDataCheck([linked](int, const QString&, const SaveOptions& options) {
            return saveRefusal(*linked, options);
        });
        links.setDestination(scratch_.path() + "/linked-copy.tdz");
        links.finishPendingCheck();
        QVERIFY2(links.problem().contains("outside the dataset") &&
                     links.problem().contains(links.allowOutsideLinksBox()->text()),
                 qPrintable(links.problem()));
        links.allowOutsideLinksBox()->setChecked(true);
        links.finishPendingCheck();
        QCOMPARE(links.problem(), QString());
    }

    // With a .tdz name the format is Archive, alone: Directory is not
    // offered, and says why. Both showed as checked, and a click on
    // Directory was ignored.
    void aTdzNameIsAnArchiveAlone() {
        SaveOptionsDialog dialog({SaveScopeChoice{"the 1 selected key", {"\"a\""}, 12},
                                  SaveScopeChoice{"the whole tensordict", {}, 40}},
                                 QString());
        dialog.show();
        QTest::keyClicks(dialog.destinationEdit(), scratch_.path() + "/key.tdz");
        QVERIFY(dialog.archiveButton()->isChecked());
        QVERIFY(!dialog.directoryButton()->isChecked());
        QVERIFY(!dialog.directoryButton()->isEnabled());
        QVERIFY(dialog.directoryButton()->toolTip().contains(".tdz"));
        dialog.scopeButton(1)->click();
        QVERIFY(dialog.archiveButton()->isChecked() != dialog.directoryButton()->isChecked());
        dialog.destinationEdit()->clear();
        QTest::keyClicks(dialog.destinationEdit(), scratch_.path() + "/key-dir");
        QVERIFY(dialog.directoryButton()->isEnabled());
        dialog.directoryButton()->click();
        QVERIFY(dialog.directoryButton()->isChecked() && !dialog.archiveButton()->isChecked());
    }

    // The safetensors formats: a .safetensors name is one file alone (no
    // folder formats offered, each saying why); the Hugging Face folder has a
    // shard size, a folder with other files is warned about, and the save
    // through the window writes shards that read back equal to the source.
    void safetensorsFormatsAreOffered() {
        SaveOptionsDialog dialog({SaveScopeChoice{"the whole tensordict", {}, 40}}, QString());
        dialog.show();
        QTest::keyClicks(dialog.destinationEdit(), scratch_.path() + "/model.safetensors");
        QVERIFY(dialog.safetensorsButton()->isChecked());
        QCOMPARE(dialog.format(), SaveFormat::Safetensors);
        for (QRadioButton* folder : {dialog.directoryButton(), dialog.huggingFaceButton()}) {
            QVERIFY(!folder->isEnabled());
            QVERIFY(folder->toolTip().contains(".safetensors"));
        }
        QVERIFY(!dialog.shardSizeEdit()->isEnabled());
        QCOMPARE(dialog.options().format, std::optional(SaveFormat::Safetensors));

        const QString folder = scratch_.path() + "/hf-model";
        QVERIFY(QDir().mkpath(folder));
        QFile config(folder + "/config.json");
        QVERIFY(config.open(QIODevice::WriteOnly));
        config.write("{}");
        config.close();
        dialog.destinationEdit()->clear();
        QTest::keyClicks(dialog.destinationEdit(), folder);
        QVERIFY(dialog.huggingFaceButton()->isEnabled());
        dialog.huggingFaceButton()->click();
        QVERIFY(dialog.shardSizeEdit()->isEnabled());
        QVERIFY(!dialog.robustKeyBox()->isEnabled());
        dialog.shardSizeEdit()->setText("big");
        QVERIFY(dialog.problem().contains("not a size"));
        dialog.shardSizeEdit()->setText("20B");  // a (12 bytes) and b.c (24): two shards
        dialog.finishPendingCheck();
        QVERIFY2(dialog.canSave(), qPrintable(dialog.problem()));
        QVERIFY2(dialog.warning().contains("config.json"), qPrintable(dialog.warning()));
        const SaveOptions options = dialog.options();
        QCOMPARE(options.format, std::optional(SaveFormat::HuggingFace));
        QCOMPARE(options.maxShardSize, std::uint64_t(20));

        MainWindow w;
        QVERIFY(openAndWait(w, testsupport::fixturePath("simple")));
        SaveJob* job = w.startSave(folder, options);
        QVERIFY(job);
        QSignalSpy done(job, &SaveJob::succeeded);
        QVERIFY(done.wait(30000));
        QVERIFY(QFile::exists(folder + "/config.json"));
        QVERIFY(QFile::exists(folder + "/model.safetensors.index.json"));
        const TensorDict source = load(testsupport::fixturePath("simple").toStdString());
        const TensorDict saved = load(folder.toStdString());
        QCOMPARE(QString::fromStdString(saved.format()), QString("sharded"));
        int compared = 0;
        std::vector<const Node*> pending{&source.root()};
        while (!pending.empty()) {
            const Node* n = pending.back();
            pending.pop_back();
            for (const Node* c : n->children())
                pending.push_back(c);
            if (!n->isTensor())
                continue;
            std::string dotted;
            for (const std::string& k : n->keyPath())
                dotted += (dotted.empty() ? "" : ".") + k;
            const Node* copy = saved.root().child(dotted);
            QVERIFY2(copy && copy->isTensor(), dotted.c_str());
            QCOMPARE(leafSha256(*copy), leafSha256(*n));
            ++compared;
        }
        QVERIFY(compared >= 2);
    }

    void cancelKeepsTheDestination() {
        const QString source = scratch_.path() + "/big-source";
        writeBig(source, 64, 1.0f);
        const QString prefix = scratch_.path() + "/cancel-target.tdz";
        TensorDict old = TensorDict::create();
        old.mutableRoot().addNonTensor("old", Value("content"));
        save(old, prefix.toStdString());
        QVERIFY(testsupport::ageFiles(prefix));
        const QStringList before = testsupport::fileFingerprints(prefix);

        // The writers stop at their first report past half of the data
        // until Cancel has been clicked: the cancel lands in the middle of
        // the save whatever the speed of the machine.
        std::atomic<bool> once{false};
        testsupport::SaveHold hold([&once](const SaveProgress& p) {
            return p.bytesDone * 2 >= p.bytesTotal && !once.exchange(true);
        });
        MainWindow w;
        const auto letGo = qScopeGuard([&hold] { hold.open(); });
        QVERIFY(openAndWait(w, source));
        SaveOptions options;
        options.atomic = true;
        options.copyExisting = true;
        options.compression = kZipDeflate;
        options.numThreads = 2;
        options.progress = hold.callback();
        SaveJob* job = w.startSave(prefix, options);
        QVERIFY(job);
        QSignalSpy cancelled(job, &SaveJob::cancelled);
        QSignalSpy succeeded(job, &SaveJob::succeeded);
        QVERIFY2(hold.waitHeld(), "the save never reported progress");
        const SaveProgress at = hold.at();
        QVERIFY2(
            at.bytesDone < at.bytesTotal,
            qPrintable(QString("held at %1 of %2 bytes").arg(at.bytesDone).arg(at.bytesTotal)));
        // The report the writers are held in was posted to the GUI before the hold.
        QTRY_COMPARE(job->progress().bytesDone, at.bytesDone);
        QVERIFY(!w.saveProgressDialog()->detailText().isEmpty());
        screenshot(w.saveProgressDialog(), "save-progress.png");
        w.saveProgressDialog()->cancelButton()->click();
        hold.release();
        QVERIFY(cancelled.wait(60000));
        QCOMPARE(succeeded.count(), 0);
        QVERIFY(w.saveProgressDialog()->statusText().contains("exactly as it was"));
        QCOMPARE(testsupport::fileFingerprints(prefix), before);
        QCOMPARE(QDir(scratch_.path())
                     .entryList({".cancel-target.tdz.tdstudio-*"}, QDir::AllEntries | QDir::Hidden),
                 QStringList());
        QVERIFY(!w.currentSave());  // another save may start
    }

    // Closing the window during a save asks first; Yes cancels the save and
    // the window closes once the save has ended (the event loop runs on
    // meanwhile, with no nested loop), leaving the destination untouched.
    void closingDuringASaveCancelsItThenCloses() {
        const QString source = scratch_.path() + "/close-source";
        writeBig(source, 16, 1.0f);
        const QString prefix = scratch_.path() + "/close-target.tdz";
        std::atomic<bool> once{false};
        testsupport::SaveHold hold(
            [&once](const SaveProgress& p) { return p.bytesDone > 0 && !once.exchange(true); });
        auto* w = new MainWindow;
        w->setAttribute(Qt::WA_DeleteOnClose, false);
        const auto letGo = qScopeGuard([&hold, w] {
            hold.open();
            delete w;
        });
        w->show();
        QVERIFY(openAndWait(*w, source));
        SaveOptions options;
        options.atomic = true;
        options.copyExisting = true;
        options.progress = hold.callback();
        SaveJob* job = w->startSave(prefix, options);
        QVERIFY(job);
        QSignalSpy cancelled(job, &SaveJob::cancelled);
        QVERIFY2(hold.waitHeld(), "the save never reported progress");

        // Answer the question with Yes as soon as it shows.
        QTimer answer;
        int asked = 0;
        connect(&answer, &QTimer::timeout, [&] {
            for (QWidget* top : QApplication::topLevelWidgets())
                if (auto* box = qobject_cast<QMessageBox*>(top); box && box->isVisible()) {
                    ++asked;
                    box->button(QMessageBox::Yes)->click();
                }
        });
        answer.start(10);
        QVERIFY(!w->close());  // not yet: the save is cancelled first
        answer.stop();
        QCOMPARE(asked, 1);
        QVERIFY(w->isVisible());
        QVERIFY(!w->close());  // asked again while cancelling: still waits, no second question
        QCOMPARE(asked, 1);
        hold.release();
        QVERIFY(cancelled.wait(60000));
        QTRY_VERIFY(!w->isVisible());
        QVERIFY(!QFileInfo::exists(prefix));
    }

    // The GUI never waits for the writers: with the writers held in the
    // middle of the data, and again with every file written but before the
    // atomic flush and rename, the event loop runs (timers fire, the
    // progress dialog shows the report the writers are held in, the tree
    // answers), and the save completes once they are let go. How long the
    // GUI thread went without an event is printed, not checked: that
    // depends on the machine.
    void guiStaysResponsiveDuringALargeSave() {
        const QString source = scratch_.path() + "/responsive-source";
        writeBig(source, 64, 2.0f);
        std::atomic<int> holds{0};
        testsupport::SaveHold hold([&holds](const SaveProgress& p) {
            // The first report (some data written), then the last file's (all written).
            if (holds == 0 && p.bytesDone > 0 && p.filesDone < p.filesTotal)
                return ++holds, true;
            if (holds == 1 && p.filesDone == p.filesTotal)
                return ++holds, true;
            return false;
        });
        MainWindow w;
        const auto letGo = qScopeGuard([&hold] { hold.open(); });
        w.show();
        QVERIFY(openAndWait(w, source));
        QElapsedTimer clock;
        qint64 last = 0, worstGap = 0;
        int ticks = 0;
        QTimer timer;
        timer.setInterval(10);
        connect(&timer, &QTimer::timeout, [&] {
            const qint64 now = clock.elapsed();
            worstGap = std::max(worstGap, now - last);
            last = now;
            ++ticks;
        });
        SaveOptions options;
        options.copyExisting = true;
        options.numThreads = 2;
        options.atomic = true;
        options.progress = hold.callback();
        clock.start();
        timer.start();
        const QString prefix = scratch_.path() + "/responsive-out";
        SaveJob* job = w.startSave(prefix, options);
        QVERIFY(job);
        QSignalSpy done(job, &SaveJob::succeeded);
        for (int h = 1; h <= 2; ++h) {
            QVERIFY2(hold.waitHeld(),
                     qPrintable(QString("the writers never reached hold %1").arg(h)));
            const SaveProgress at = hold.at();
            QCOMPARE(at.filesDone == at.filesTotal, h == 2);
            const int ticksBefore = ticks;
            QTRY_VERIFY(ticks >= ticksBefore + 3);                  // the GUI's timers run
            QTRY_COMPARE(job->progress().bytesDone, at.bytesDone);  // and its queued signals
            QVERIFY(w.saveProgressDialog()->detailText().contains(
                QString("files %1 of %2").arg(at.filesDone).arg(at.filesTotal)));
            QVERIFY(w.selectKeyPath({"leaf3"}));  // the tree answers
            QVERIFY(w.selectKeyPath({"leaf1"}));
            QVERIFY(job->isRunning());
            QVERIFY(!QFileInfo::exists(prefix));  // not yet renamed into place
            hold.release();
        }
        QVERIFY(done.wait(120000));
        timer.stop();
        QCOMPARE(holds.load(), 2);
        QVERIFY(QFileInfo::exists(prefix + "/meta.json"));
        qInfo(
            "64 MiB saved in %lld ms with two holds; GUI timer fired %d times, longest gap %lld ms",
            clock.elapsed(), ticks, worstGap);
    }

private:
    QTemporaryDir scratch_;
};

QTEST_MAIN(SaveDialogTest)
#include "tst_save_dialog.moc"
