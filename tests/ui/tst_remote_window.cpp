// tdstudio on a web server's tensordict, from the window: File > Open URL,
// the preview of a remote leaf, the status bar's count of what was fetched,
// the recent files, and a file changed on the server ("changed on the
// server" with Reload, which reads the new version). Against a real nginx
// started here. TDSTUDIO_SCREENSHOT_DIR set: the window is kept as PNGs.

#include <QAction>
#include <QDateTime>
#include <QInputDialog>
#include <QLabel>
#include <QMenuBar>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QtTest>

#include "document_page.h"
#include "main_window.h"
#include "nginx_server.h"
#include "preview_panel.h"
#include "tensor_table_model.h"
#include "tensordict/save.h"
#include "tensordict/tensordict.h"
#include "testsupport.h"

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
    if (!dir.isEmpty())
        w.grab().save(QString::fromLocal8Bit(dir) + "/" + name);
}

QAction* menuAction(MainWindow& w, const QString& text) {
    for (QAction* a : w.menuBar()->findChildren<QAction*>())
        if (a->text() == text)
            return a;
    return nullptr;
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
        QAction* openUrl = menuAction(w, "Open &URL…");
        QVERIFY(openUrl);
        QCOMPARE(openUrl->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_U));
        openUrl->trigger();
        auto* dialog = w.findChild<QInputDialog*>();
        QVERIFY(dialog);
        dialog->setTextValue("  " + url + " ");
        dialog->accept();
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, kBoundMs);
        QVERIFY2(w.windowTitle().contains("data.tdz"), qPrintable(w.windowTitle()));
        QCOMPARE(w.recentFiles().value(0), url);

        PreviewPanel* preview = w.documentPage()->previewPanel();
        QSignalSpy ready(preview, &PreviewPanel::leafReady);
        QVERIFY(w.selectKeyPath({"a"}));
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, kBoundMs);
        preview->setMode(PreviewPanel::TableMode);
        QCOMPARE(preview->tableModel()->text(0, 0), QString("10"));
        // The status bar counts what the window fetched.
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                for (QLabel* label : w.statusBar()->findChildren<QLabel*>())
                    if (label->isVisible() && label->text().contains("fetched"))
                        return true;
                return false;
            }(),
            kBoundMs);
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
        QVERIFY2(preview->message().contains("changed on the server"),
                 qPrintable(preview->message()));
        keepScreenshot(w, "remote-changed.png");
        w.reload();
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 2, kBoundMs);
        QVERIFY(w.selectKeyPath({"b"}));
        QTRY_VERIFY_WITH_TIMEOUT(preview->message().isEmpty() && ready.count() >= 2, kBoundMs);
        preview->setMode(PreviewPanel::TableMode);
        QTRY_COMPARE_WITH_TIMEOUT(preview->tableModel()->text(0, 0), QString("21"), kBoundMs);
    }
};

QTEST_MAIN(TestRemoteWindow)
#include "tst_remote_window.moc"
