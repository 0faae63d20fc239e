// Saving from tdstudio: the options dialog's states and inline validation,
// saves through the GUI path to every target, cancel with atomic, and a GUI
// thread that keeps running while hundreds of MiB are written.

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QJsonDocument>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTreeView>
#include <QtTest>

#include "key_filter_model.h"
#include "key_tree_model.h"
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
    void initTestCase() {
        QVERIFY(scratch_.isValid());
        testsupport::isolateSettings("tst_save_dialog");
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
        QVERIFY(save->isEnabled());

        // A .tdz name switches to an archive; compression and level become available.
        dialog.destinationEdit()->clear();
        QTest::keyClicks(dialog.destinationEdit(), scratch_.path() + "/out.tdz");
        QVERIFY(dialog.archive());
        QVERIFY(dialog.compressionBox()->isEnabled());
        QVERIFY(!dialog.levelBox()->isEnabled());  // stored has no level
        dialog.setCompression(kZipLzma);
        QVERIFY(dialog.levelBox()->isEnabled());
        QCOMPARE(dialog.options().compression, int(kZipLzma));
        QCOMPARE(dialog.options().archive.value(), true);
        screenshot(&dialog, "save-dialog-archive.png");

        // Back to a directory name: compression resets, it cannot apply.
        dialog.destinationEdit()->clear();
        QTest::keyClicks(dialog.destinationEdit(), scratch_.path() + "/plain");
        QVERIFY(!dialog.archive());
        QCOMPARE(dialog.options().compression, int(kZipStored));

        // Impossible destinations are explained before Save.
        dialog.setDestination(scratch_.path() + "/missing/folder/x.tdz");
        QVERIFY(!save->isEnabled());
        QVERIFY(dialog.problem().contains("does not exist"));
        QFile file(scratch_.path() + "/a-file");
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.close();
        dialog.setDestination(scratch_.path() + "/a-file");
        QVERIFY(dialog.problem().contains("is a file"));

        // An existing destination is a warning: Save becomes Replace.
        QDir().mkpath(scratch_.path() + "/existing");
        QFile inside(scratch_.path() + "/existing/meta.json");
        QVERIFY(inside.open(QIODevice::WriteOnly));
        inside.close();
        dialog.setDestination(scratch_.path() + "/existing");
        QVERIFY(save->isEnabled());
        QVERIFY(dialog.warning().contains("will be replaced"));
        QCOMPARE(save->text(), QString("Replace"));

        // More than the free space: refused.
        SaveOptionsDialog huge(std::uint64_t(1) << 62, "everything", QString());
        huge.setDestination(scratch_.path() + "/big.tdz");
        QVERIFY(huge.problem().contains("Not enough free space"));
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
        QVERIFY(dialog.canSave());
        SaveJob* job = w.startSave(dialog.destination(), dialog.options());
        QVERIFY(job);
        QSignalSpy done(job, &SaveJob::succeeded);
        QVERIFY(done.wait(30000));
        QVERIFY(w.saveProgressDialog()->statusText().startsWith("Saved"));
        const QString mismatch = testsupport::compareWithExpected(
            report(prefix),
            testsupport::readJsonFile(testsupport::fixturePath("tensorclass_nested.expected.json")),
            false);
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
        // Offered: open the result, which shows locked and mapped.
        QSignalSpy loaded(&w, &MainWindow::documentLoaded);
        w.saveProgressDialog()->openButton()->click();
        QVERIFY2(loaded.wait(20000), qPrintable(w.lastError()));
        QCOMPARE(w.currentPath(), prefix);
    }

    void exportSelectedSubtrees() {
        MainWindow w;
        QVERIFY(openAndWait(w, testsupport::fixturePath("nested3")));
        QVERIFY(w.selectKeyPath({"l1", "l2", "z"}));
        QVERIFY(w.selectKeyPath({"x"}));
        // Both rows selected (the second with Ctrl held).
        w.keyModel()->ensureFetched(w.keyModel()->tensorDict()->root().find({"l1", "l2", "z"}));
        const QModelIndex z = w.filterModel()->mapFromSource(
            w.keyModel()->indexOf(w.keyModel()->tensorDict()->root().find({"l1", "l2", "z"})));
        w.treeView()->selectionModel()->select(
            z, QItemSelectionModel::Select | QItemSelectionModel::Rows);
        const QString prefix = scratch_.path() + "/subset";
        // Without copy_existing the mapped leaves are refused, and the dialog says why.
        SaveJob* refused = w.startSave(prefix, SaveOptions{});
        QSignalSpy failed(refused, &SaveJob::failed);
        QVERIFY(failed.wait(30000));
        QVERIFY(failed.front().front().toString().contains("copy_existing"));
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

    void cancelKeepsTheDestination() {
        const QString source = scratch_.path() + "/big-source";
        writeBig(source, 256, 1.0f);
        const QString prefix = scratch_.path() + "/cancel-target.tdz";
        TensorDict old = TensorDict::create();
        old.mutableRoot().addNonTensor("old", Value("content"));
        save(old, prefix.toStdString());
        const QStringList before = testsupport::fileFingerprints(prefix);

        MainWindow w;
        QVERIFY(openAndWait(w, source));
        SaveOptions options;
        options.atomic = true;
        options.copyExisting = true;
        options.compression = kZipDeflate;  // slow enough to cancel in the middle
        options.numThreads = 2;
        SaveJob* job = w.startSave(prefix, options);
        QSignalSpy progress(job, &SaveJob::progressed);
        QSignalSpy cancelled(job, &SaveJob::cancelled);
        QVERIFY(progress.wait(20000));
        QTRY_VERIFY_WITH_TIMEOUT(job->progress().bytesDone > job->progress().bytesTotal / 5, 30000);
        QTRY_VERIFY(!w.saveProgressDialog()->detailText().isEmpty());
        screenshot(w.saveProgressDialog(), "save-progress.png");
        w.saveProgressDialog()->cancelButton()->click();
        QVERIFY(cancelled.wait(20000));
        QVERIFY(w.saveProgressDialog()->statusText().contains("exactly as it was"));
        QCOMPARE(testsupport::fileFingerprints(prefix), before);
        QCOMPARE(QDir(scratch_.path())
                     .entryList({".cancel-target.tdz.tdstudio-*"}, QDir::AllEntries | QDir::Hidden),
                 QStringList());
        QVERIFY(!w.currentSave());  // another save may start
    }

    void guiStaysResponsiveDuringALargeSave() {
        const QString source = scratch_.path() + "/responsive-source";
        writeBig(source, 512, 2.0f);
        MainWindow w;
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
        clock.start();
        timer.start();
        SaveJob* job = w.startSave(scratch_.path() + "/responsive-out", options);
        QSignalSpy done(job, &SaveJob::succeeded);
        QVERIFY(done.wait(120000));
        timer.stop();
        const qint64 total = clock.elapsed();
        qInfo("512 MiB saved in %lld ms; GUI timer fired %d times, longest gap %lld ms", total,
              ticks, worstGap);
        QVERIFY2(worstGap < 250,
                 qPrintable(QString("the GUI thread stalled for %1 ms").arg(worstGap)));
    }

private:
    QTemporaryDir scratch_;
};

QTEST_MAIN(SaveDialogTest)
#include "tst_save_dialog.moc"
