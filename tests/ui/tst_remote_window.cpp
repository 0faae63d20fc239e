// tdstudio on a web server's tensordict, from the window: File > Open URL,
// the preview of a remote leaf, the status bar's count of what was fetched,
// the recent files, and a file changed on the server ("changed on the
// server" with Reload, which reads the new version). Against a real nginx
// started here. TDSTUDIO_SCREENSHOT_DIR set: the window is kept as PNGs.

#include <QAction>
#include <QClipboard>
#include <QDateTime>
#include <QDialogButtonBox>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QPushButton>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QToolButton>
#include <QTreeWidget>
#include <QtTest>

#include "details_panel.h"
#include "document_page.h"
#include "fault_server.h"
#include "image_view.h"
#include "main_window.h"
#include "nginx_server.h"
#include "node_text.h"
#include "open_failure.h"
#include "open_url_dialog.h"
#include "preview_panel.h"
#include "s3_server.h"
#include "tensor_table_model.h"
#include "tensor_table_view.h"
#include "tensordict/http.h"
#include "tensordict/save.h"
#include "tensordict/tensordict.h"
#include "testsupport.h"
#include "welcome_page.h"

using namespace tensordict;

namespace {

constexpr int kBoundMs = 60000;  // a bound for a broken run, not a timing

// Leaves a (every byte `seed`) and b (every byte seed + 1), 1 MiB each.
void writeArchive(const QString& path, char seed) {
    TensorDict td = TensorDict::create();
    td.mutableRoot().addBytes("a", DType::UInt8, {1024, 1024},
                              ownedBytes(QByteArray(1 << 20, seed)));
    td.mutableRoot().addBytes("b", DType::UInt8, {1024, 1024},
                              ownedBytes(QByteArray(1 << 20, char(seed + 1))));
    SaveOptions options;
    options.archive = true;
    save(td, path.toStdString(), options);
}

void keepScreenshot(QWidget& w, const QString& name) {
    const QByteArray dir = qgetenv("TDSTUDIO_SCREENSHOT_DIR");
    QCoreApplication::processEvents();  // the status bar laid out with what it shows
    if (!dir.isEmpty())
        w.grab().save(QString::fromLocal8Bit(dir) + "/" + name);
}

QAction* menuAction(MainWindow& w, const QString& text) {
    for (QAction* a : w.menuBar()->findChildren<QAction*>())
        if (a->text() == text)
            return a;
    return nullptr;
}

// The status bar's "3 requests · 12 KiB fetched", or empty when hidden.
QString fetchedText(MainWindow& w) {
    for (QLabel* label : w.statusBar()->findChildren<QLabel*>())
        if (label->isVisible() && label->text().endsWith(" fetched"))
            return label->text();
    return {};
}

}  // namespace

class TestRemoteWindow : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { testsupport::isolateSettings("tst_remote_window"); }

    void openUrlShowsAndNoticesAChange() {
        QTemporaryDir served;
        QVERIFY(served.isValid());
        writeArchive(served.path() + "/data.tdz", 10);
        testsupport::NginxServer server(served.path());
        QVERIFY2(server.isRunning(), qPrintable(server.error()));
        const QString url = server.url() + "/data.tdz";

        MainWindow w;
        w.resize(1200, 800);
        w.show();
        QSignalSpy loaded(&w, &MainWindow::documentLoaded);
        // The welcome page offers it too.
        auto* welcome = w.findChild<WelcomePage*>();
        QVERIFY(welcome && welcome->openUrlButton()->isVisible());
        welcome->openUrlButton()->click();
        auto* asked = w.findChild<OpenUrlDialog*>();
        QVERIFY(asked);
        asked->reject();
        QTRY_VERIFY(!w.findChild<OpenUrlDialog*>());
        QAction* openUrl = menuAction(w, "Open &URL…");
        QVERIFY(openUrl);
        QCOMPARE(openUrl->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_U));
        openUrl->trigger();
        auto* dialog = w.findChild<OpenUrlDialog*>();
        QVERIFY(dialog);
        dialog->findChild<QLineEdit*>()->setText("  " + url + " ");
        dialog->findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Open)->click();
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, kBoundMs);
        QVERIFY2(w.windowTitle().contains("data.tdz"), qPrintable(w.windowTitle()));
        QCOMPARE(w.recentFiles().value(0), url);
        QCOMPARE(locationName(url), QString("data.tdz"));
        QCOMPARE(locationFolder(url), server.url() + "/");

        PreviewPanel* preview = w.documentPage()->previewPanel();
        QSignalSpy ready(preview, &PreviewPanel::leafReady);
        QVERIFY(w.selectKeyPath({"a"}));
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, kBoundMs);
        preview->setMode(PreviewPanel::TableMode);
        QCOMPARE(preview->tableModel()->text(0, 0), QString("10"));
        // The status bar counts what the window fetched.
        QTRY_VERIFY_WITH_TIMEOUT(!fetchedText(w).isEmpty(), kBoundMs);
        keepScreenshot(w, "remote-open.png");

        // A new version on the server: b, not read yet, cannot be read from
        // it; the preview says so and offers Reload, which reads the new one.
        QVERIFY(QFile::remove(served.path() + "/data.tdz"));
        writeArchive(served.path() + "/data.tdz", 20);
        QFile touched(served.path() + "/data.tdz");
        QVERIFY(touched.open(QIODevice::ReadWrite));
        QVERIFY(touched.setFileTime(QDateTime::currentDateTime().addSecs(60),
                                    QFileDevice::FileModificationTime));
        touched.close();
        QVERIFY(w.selectKeyPath({"b"}));
        QTRY_VERIFY_WITH_TIMEOUT(preview->offersReload(), kBoundMs);
        QVERIFY2(preview->message().contains("a new version on the server"),
                 qPrintable(preview->message()));
        // The details say why the entry's offset is unknown (not "damaged").
        const QString offset = w.documentPage()->detailsPanel()->field("Payload offset");
        QVERIFY2(
            offset.startsWith("unreadable: ") && offset.contains("a new version on the server"),
            qPrintable(offset));
        keepScreenshot(w, "remote-changed.png");
        w.reload();
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 2, kBoundMs);
        QVERIFY(w.selectKeyPath({"b"}));
        QTRY_VERIFY_WITH_TIMEOUT(preview->message().isEmpty() && ready.count() >= 2, kBoundMs);
        preview->setMode(PreviewPanel::TableMode);
        QTRY_COMPARE_WITH_TIMEOUT(preview->tableModel()->text(0, 0), QString("21"), kBoundMs);

        // The count is this document's: another one starts from none, where
        // main added up everything fetched since the window opened.
        const tensordict::HttpCounters before = tensordict::httpCounters();
        QVERIFY(before.requests > 0 && before.inFlight == 0);
        w.openPath(url);
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 3, kBoundMs);
        const auto expected = [&] {
            const tensordict::HttpCounters now = tensordict::httpCounters();
            return nodetext::countText(std::int64_t(now.requests - before.requests), "request",
                                       "requests") +
                   " · " + nodetext::byteSizeText(now.bytes - before.bytes) + " fetched";
        };
        QTRY_COMPARE_WITH_TIMEOUT(fetchedText(w), expected(), kBoundMs);
        QVERIFY(tensordict::httpCounters().requests - before.requests < before.requests);
    }

    // A large leaf on a server is fetched as far as it is shown: the
    // table's window (and a margin), every stride-th row for the fit
    // picture; a copy of cells far from the window reads them first.
    void largeLeafIsFetchedAsShown() {
        QTemporaryDir served;
        QVERIFY(served.isValid());
        constexpr std::int64_t rows = 2048, cols = 32768;  // 64 MiB, rows of 32 KiB
        const auto valueAt = [](std::int64_t r, std::int64_t c) {
            return static_cast<unsigned char>((r * 3 + c * 5) & 0xff);
        };
        {
            QByteArray bytes(rows * cols, Qt::Uninitialized);
            char* at = bytes.data();
            for (std::int64_t r = 0; r < rows; ++r)
                for (std::int64_t c = 0; c < cols; ++c)
                    *at++ = static_cast<char>(valueAt(r, c));
            TensorDict td = TensorDict::create();
            td.mutableRoot().addBytes("big", DType::UInt8, {rows, cols}, ownedBytes(bytes));
            SaveOptions options;
            options.archive = true;
            save(td, (served.path() + "/big.tdz").toStdString(), options);
        }
        testsupport::NginxServer server(served.path());
        QVERIFY2(server.isRunning(), qPrintable(server.error()));
        const std::uint64_t leafBytes = rows * cols;

        MainWindow w;
        w.resize(1200, 800);
        w.show();
        QSignalSpy loaded(&w, &MainWindow::documentLoaded);
        w.openPath(server.url() + "/big.tdz");
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, kBoundMs);
        PreviewPanel* preview = w.documentPage()->previewPanel();
        preview->setMode(PreviewPanel::TableMode);
        QSignalSpy ready(preview, &PreviewPanel::leafReady);
        HttpCounters before = httpCounters();
        QVERIFY(w.selectKeyPath({"big"}));
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, kBoundMs);
        TensorTableModel* table = preview->tableModel();
        QTRY_VERIFY_WITH_TIMEOUT(!table->isFilling() && table->rowCount() > 0, kBoundMs);
        QCOMPARE(table->text(1, 2), QString::number(valueAt(1, 2)));
        const std::uint64_t tableBytes = httpCounters().bytes - before.bytes;
        QVERIFY2(tableBytes < (4u << 20),
                 qPrintable(QString("the first table screen fetched %1 bytes").arg(tableBytes)));

        // Far down: that window is fetched, its cells right.
        table->setWindow(1500, 20000, table->rowCount(), table->columnCount());
        QTRY_VERIFY_WITH_TIMEOUT(!table->isFilling(), kBoundMs);
        QCOMPARE(table->text(1503, 20004), QString::number(valueAt(1503, 20004)));

        // A copy of cells the window never held: read first, then right.
        TensorTableView* view = preview->findChild<TensorTableView*>();
        QVERIFY(view);
        QSignalSpy copied(view, &TensorTableView::copyFinished);
        CellSelection selection;
        selection.select({100, 30000});
        selection.extendTo({102, 30001});
        view->setSelection(selection);
        view->copySelection();
        QTRY_COMPARE_WITH_TIMEOUT(copied.count(), 1, kBoundMs);
        const QStringList lines = QApplication::clipboard()->text().split('\n');
        QCOMPARE(lines.value(0),
                 QString("%1\t%2").arg(valueAt(100, 30000)).arg(valueAt(100, 30001)));
        QCOMPARE(lines.value(2),
                 QString("%1\t%2").arg(valueAt(102, 30000)).arg(valueAt(102, 30001)));

        // The fit picture: every stride-th row, a small part of the leaf.
        before = httpCounters();
        preview->setMode(PreviewPanel::ImageMode);
        ImageView* image = preview->imageView();
        QTRY_VERIFY_WITH_TIMEOUT(!image->isRendering() && !image->image().isNull(), kBoundMs);
        const std::uint64_t imageBytes = httpCounters().bytes - before.bytes;
        QVERIFY2(
            imageBytes * 10 <= leafBytes,
            qPrintable(
                QString("the fit picture fetched %1 of %2 bytes").arg(imageBytes).arg(leafBytes)));
        QVERIFY(image->image().width() < cols);  // drawn with a stride
        QVERIFY(!image->rangeIsExact());         // its range is the sample's: no read of the rest
        keepScreenshot(w, "remote-large-leaf.png");
    }

    // A server that stops answering never holds the window: the status
    // bar's Cancel stops the open under way, then a leaf's read.
    void aSlowServerCanBeCancelled() {
        QTemporaryDir served;
        QVERIFY(served.isValid());
        writeArchive(served.path() + "/data.tdz", 10);
        testsupport::FaultServer faults(served.path());
        QVERIFY(faults.isRunning());

        MainWindow w;
        w.resize(1200, 800);
        w.show();
        QSignalSpy loaded(&w, &MainWindow::documentLoaded);
        QSignalSpy failed(&w, &MainWindow::documentFailed);
        auto* cancel = w.findChild<QToolButton*>("cancelReads");
        QVERIFY(cancel);
        QVERIFY(!cancel->isVisible());
        w.openPath(faults.url() + "/stall/data.tdz");
        QVERIFY(cancel->isVisible());
        QVERIFY(faults.waitForStall());
        keepScreenshot(w, "remote-opening.png");
        QTest::mouseClick(cancel, Qt::LeftButton);
        QVERIFY2(w.statusBar()->currentMessage().contains("was cancelled"),
                 qPrintable(w.statusBar()->currentMessage()));
        // The request itself ended (not left to time out), and nothing opened.
        QTRY_COMPARE_WITH_TIMEOUT(httpCounters().inFlight, std::uint64_t(0), kBoundMs);
        QTRY_VERIFY_WITH_TIMEOUT(!cancel->isVisible(), kBoundMs);
        QCOMPARE(loaded.count(), 0);
        QCOMPARE(failed.count(), 0);

        // The tree reads; the leaf's data stalls: cancelled the same way.
        w.openPath(faults.url() + "/stallbig/data.tdz");
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, kBoundMs);
        PreviewPanel* preview = w.documentPage()->previewPanel();
        QVERIFY(w.selectKeyPath({"a"}));
        QVERIFY(faults.waitForStall());
        QVERIFY(preview->isLoading());
        QTRY_VERIFY_WITH_TIMEOUT(cancel->isVisible(), kBoundMs);  // the next status update
        QTest::mouseClick(cancel, Qt::LeftButton);
        QVERIFY2(preview->message().contains("cancelled"), qPrintable(preview->message()));
        QTRY_COMPARE_WITH_TIMEOUT(httpCounters().inFlight, std::uint64_t(0), kBoundMs);
    }

    // File > Open URL… browses an S3 bucket (s3rver started here): its
    // folders, then a distributed checkpoint's folder, which Open opens as
    // the checkpoint (its .metadata) it holds.
    void browsesABucketAndOpensACheckpoint() {
        QTemporaryDir scratch;
        QVERIFY(scratch.isValid());
        testsupport::S3Server server("training-runs");
        QVERIFY2(server.isRunning(), qPrintable(server.error()));
        QString error;
        QVERIFY2(testsupport::runPython(
                     {TDSTUDIO_TEST_SUPPORT_DIR "/make_dcp.py", scratch.filePath("dcp"), "--marker",
                      scratch.filePath("marker")},
                     nullptr, &error),
                 qPrintable(error));
        QVERIFY2(server.put(scratch.filePath("dcp/four_ranks"), "llama/step-1000", &error),
                 qPrintable(error));
        QVERIFY2(server.put(scratch.filePath("dcp/one_rank"), "llama/step-500", &error),
                 qPrintable(error));
        // s3rver shows a folder only when an object lies directly in it.
        testsupport::writeFile(scratch.filePath("README.md"), "Llama runs, every 500 steps\n");
        QVERIFY2(server.put(scratch.filePath("README.md"), "llama/README.md", &error),
                 qPrintable(error));
        writeArchive(scratch.filePath("data.tdz"), 3);
        QVERIFY2(server.put(scratch.filePath("data.tdz"), "replay buffer.tdz", &error),
                 qPrintable(error));
        qputenv("AWS_ACCESS_KEY_ID", server.accessKey().toUtf8());
        qputenv("AWS_SECRET_ACCESS_KEY", server.secretKey().toUtf8());
        qputenv("AWS_ENDPOINT_URL", server.endpoint().toUtf8());
        qputenv("AWS_SHARED_CREDENTIALS_FILE", scratch.filePath("none").toUtf8());

        MainWindow w;
        w.resize(1200, 800);
        w.show();
        QSignalSpy loaded(&w, &MainWindow::documentLoaded);
        menuAction(w, "Open &URL…")->trigger();
        auto* dialog = w.findChild<OpenUrlDialog*>();
        QVERIFY(dialog);
        QSignalSpy listed(dialog, &OpenUrlDialog::listed);
        const auto into = [&](const QString& name) {
            auto* tree = dialog->findChild<QTreeWidget*>();
            const QList<QTreeWidgetItem*> found = tree->findItems(name, Qt::MatchExactly);
            QVERIFY2(found.size() == 1, qPrintable(name));
            Q_EMIT tree->itemActivated(found.front(), 0);
        };
        dialog->browse("s3://training-runs");
        QTRY_COMPARE_WITH_TIMEOUT(listed.count(), 1, kBoundMs);
        QCOMPARE(dialog->entries().size(), std::size_t(2));  // llama/, replay buffer.tdz
        QVERIFY(dialog->entries()[0].isFolder);
        into("llama/");
        QTRY_COMPARE_WITH_TIMEOUT(listed.count(), 2, kBoundMs);
        QCOMPARE(dialog->entries().size(), std::size_t(3));  // step-1000/, step-500/, README.md
        into("step-1000/");
        QTRY_COMPARE_WITH_TIMEOUT(listed.count(), 3, kBoundMs);
        QCOMPARE(dialog->findChild<QLineEdit*>()->text(),
                 QString("s3://training-runs/llama/step-1000/"));
        QCOMPARE(OpenUrlDialog::datasetIn("s3://training-runs/llama/step-1000/", dialog->entries()),
                 QString("s3://training-runs/llama/step-1000/.metadata"));
        if (const QByteArray dir = qgetenv("TDSTUDIO_SCREENSHOT_DIR"); !dir.isEmpty())
            dialog->grab().save(QString::fromLocal8Bit(dir) + "/s3-browse.png");
        dialog->findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Open)->click();
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, kBoundMs);
        QCOMPARE(w.currentPath(), QString("s3://training-runs/llama/step-1000/.metadata"));
        QVERIFY(w.selectKeyPath({"model"}));
        keepScreenshot(w, "s3-dcp-open.png");
        for (const char* name : {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ENDPOINT_URL",
                                 "AWS_SHARED_CREDENTIALS_FILE"})
            qunsetenv(name);
    }
};

QTEST_MAIN(TestRemoteWindow)
#include "tst_remote_window.moc"
