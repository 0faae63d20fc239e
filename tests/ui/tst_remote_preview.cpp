// A large float leaf on a web server is previewed exactly as the same file
// is locally, in every view: table, image, plot and statistics. Leaves of 16
// MiB or more are read page by page over HTTP; the table once took the empty
// window it was still fetching for pages lost under it and said the file had
// changed. Against a real nginx started here, for float32 and float64 leaves
// of 16, 64 and 256 MiB in a memmap directory, a stored and a deflated .tdz.

#include <QLineSeries>
#include <QTemporaryDir>
#include <QtTest>
#include <cstring>
#include <mutex>
#include <set>
#include <vector>

#include "document_page.h"
#include "image_render.h"
#include "image_view.h"
#include "main_window.h"
#include "nginx_server.h"
#include "plot_view.h"
#include "preview_panel.h"
#include "statistics_view.h"
#include "tensor_table_model.h"
#include "tensordict/leaf_pages.h"
#include "tensordict/save.h"
#include "tensordict/tensordict.h"
#include "testsupport.h"

using namespace tensordict;

namespace {

constexpr int kBoundMs = 120000;  // a bound for a broken run, not a timing
constexpr std::int64_t kCols = 2048;

// Every row holds every value of 0.25 .. 255.25 (so a picture of sampled
// rows has the whole leaf's colour range), shifted by its row.
double valueAt(std::int64_t r, std::int64_t c) {
    return double((r + c) % 256) + 0.25;
}

QByteArray leafBytes(DType dtype, std::int64_t rows) {
    QByteArray bytes(rows * kCols * qsizetype(itemSize(dtype)), Qt::Uninitialized);
    char* at = bytes.data();
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = 0; c < kCols; ++c) {
            if (dtype == DType::Float32) {
                const float v = static_cast<float>(valueAt(r, c));
                std::memcpy(at, &v, 4), at += 4;
            } else {
                const double v = valueAt(r, c);
                std::memcpy(at, &v, 8), at += 8;
            }
        }
    return bytes;
}

// What each view shows once it has settled, to compare two windows.
struct Shown {
    QStringList cells;
    QImage image;
    QList<QPointF> plot;
    Statistics statistics;
};

class Window {
public:
    explicit Window(const QString& location) {
        w.resize(1200, 800);
        w.show();
        QSignalSpy loaded(&w, &MainWindow::documentLoaded);
        w.openPath(location);
        if (!QTest::qWaitFor([&] { return loaded.count() == 1; }, kBoundMs))
            qWarning("%s did not open", qPrintable(location));
    }

    // Shows `key` in every view; false (with the preview's message) when one failed.
    bool show(const QStringList& key, Shown* out, QString* message) {
        PreviewPanel* preview = w.documentPage()->previewPanel();
        preview->setMode(PreviewPanel::TableMode);
        QSignalSpy ready(preview, &PreviewPanel::leafReady);
        QSignalSpy failed(preview, &PreviewPanel::leafFailed);
        if (!w.selectKeyPath(key))
            return false;
        // Waits for a view to show what `done` says, or for the preview to fail.
        const auto settled = [&](auto done) -> bool {
            if (!QTest::qWaitFor([&] { return done() || failed.count() > 0; }, kBoundMs)) {
                *message = "a view did not settle";
                return false;
            }
            QCoreApplication::processEvents();
            if (failed.count() > 0)
                *message = preview->message();
            return failed.count() == 0;
        };
        if (!settled([&] { return ready.count() > 0; }))
            return false;
        TensorTableModel* table = preview->tableModel();
        if (!settled([&] { return !table->isFilling() && table->rowCount() > 0; }))
            return false;
        for (int r : {0, 1, 5})
            for (int c : {0, 3, 7})
                out->cells << table->text(r, c);

        preview->setMode(PreviewPanel::ImageMode);
        ImageView* image = preview->imageView();
        if (!settled([&] { return !image->isRendering() && !image->image().isNull(); }))
            return false;
        out->image = image->image();

        preview->setMode(PreviewPanel::PlotMode);
        PlotView* plot = preview->plotView();
        if (!settled([&] { return plot->pointCount() > 0 && !plot->lines().empty(); }))
            return false;
        out->plot = plot->lines().front()->points();

        preview->setMode(PreviewPanel::StatisticsMode);
        StatisticsView* statistics = preview->statisticsView();
        QSignalSpy computed(statistics, &StatisticsView::finished);
        statistics->compute();
        if (!settled([&] { return computed.count() > 0 && !statistics->isRunning(); }))
            return false;
        out->statistics = statistics->result();
        return true;
    }

    MainWindow w;
};

}  // namespace

class TestRemotePreview : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() {
        testsupport::isolateSettings("tst_remote_preview");
        QVERIFY(served_.isValid());
        // One tensordict per container, with a leaf per dtype and size.
        TensorDict td = TensorDict::create();
        for (const DType dtype : {DType::Float32, DType::Float64})
            for (const std::int64_t mib : {16, 64, 256}) {
                const std::int64_t rows = (mib << 20) / (kCols * std::int64_t(itemSize(dtype)));
                td.mutableRoot().addBytes(key(dtype, mib), dtype, {rows, kCols},
                                          ownedBytes(leafBytes(dtype, rows)));
            }
        SaveOptions directory;
        directory.numThreads = 2;
        save(td, (served_.path() + "/leaves").toStdString(), directory);
        SaveOptions stored = directory;
        stored.archive = true;
        save(td, (served_.path() + "/stored.tdz").toStdString(), stored);
        SaveOptions deflated = stored;
        deflated.compression = kZipDeflate;
        deflated.compressionLevel = 1;
        save(td, (served_.path() + "/deflated.tdz").toStdString(), deflated);
        server_ = std::make_unique<testsupport::NginxServer>(served_.path());
        QVERIFY2(server_->isRunning(), qPrintable(server_->error()));
    }

    void remotePreviewEqualsLocal_data() {
        QTest::addColumn<QString>("container");
        QTest::addColumn<QString>("leaf");
        for (const char* container : {"leaves", "stored.tdz", "deflated.tdz"})
            for (const DType dtype : {DType::Float32, DType::Float64})
                for (const std::int64_t mib : {16, 64, 256})
                    QTest::addRow("%s %s", container, key(dtype, mib).c_str())
                        << QString(container) << QString::fromStdString(key(dtype, mib));
    }

    void remotePreviewEqualsLocal() {
        QFETCH(QString, container);
        QFETCH(QString, leaf);
        Shown local, remote;
        QString message;
        {
            Window window(served_.path() + "/" + container);
            QVERIFY2(window.show({leaf}, &local, &message), qPrintable(message));
        }
        {
            Window window(server_->url() + "/" + container);
            QVERIFY2(window.show({leaf}, &remote, &message), qPrintable(message));
        }
        QCOMPARE(remote.cells, local.cells);
        QCOMPARE(local.cells.value(1), QString("3.25"));   // row 0, column 3
        QCOMPARE(local.cells.value(8), QString("12.25"));  // row 5, column 7
        QCOMPARE(remote.image.size(), local.image.size());
        QVERIFY(remote.image == local.image);
        QCOMPARE(remote.plot, local.plot);
        QCOMPARE(remote.statistics.count, local.statistics.count);
        QCOMPARE(remote.statistics.min, 0.25);
        QCOMPARE(remote.statistics.max, 255.25);
        QCOMPARE(remote.statistics.mean, local.statistics.mean);
        QCOMPARE(remote.statistics.std, local.statistics.std);
        QCOMPARE(remote.statistics.histogram, local.statistics.histogram);
    }

    // The picture of a remote leaf reads every nth row; the rows between
    // are never fetched. Hovering one shows where it is and no value: the
    // hover reads an element only while its page is held (in a debug build
    // an unfetched page cannot be read at all; a release build read 0).
    void aRowThePictureSkippedIsHoveredWithoutAValue() {
        Window window(server_->url() + "/leaves");
        const QString leaf = QString::fromStdString(key(DType::Float32, 256));
        PreviewPanel* preview = window.w.documentPage()->previewPanel();
        // The rows each picture was drawn with, every stride.rows-th.
        std::mutex mutex;
        std::vector<std::int64_t> strides;
        ImageHooks hooks;
        hooks.renderFinished = [&](const ImageResult& r) {
            const std::lock_guard lock(mutex);
            strides.push_back(r.stride.rows);
        };
        preview->imageView()->setHooks(hooks);
        auto settle = qScopeGuard([preview] {  // no hook outlives what it writes to
            preview->imageView()->setHooks({});
            QThreadPool::globalInstance()->waitForDone();
        });
        preview->setMode(PreviewPanel::TableMode);  // as Window::show: the table first
        QSignalSpy ready(preview, &PreviewPanel::leafReady);
        QVERIFY(window.w.selectKeyPath({leaf}));
        QTRY_VERIFY_WITH_TIMEOUT(ready.count() > 0, kBoundMs / 4);
        preview->setMode(PreviewPanel::ImageMode);
        ImageView* image = preview->imageView();
        QTRY_VERIFY_WITH_TIMEOUT(!image->isRendering() && !image->image().isNull(), kBoundMs / 4);
        std::int64_t stride = 0;
        {
            const std::lock_guard lock(mutex);
            QCOMPARE(std::set<std::int64_t>(strides.begin(), strides.end()).size(), std::size_t(1));
            stride = strides.front();
        }
        // The row halfway between two drawn ones, far from the table's rows
        // at the top, lies on a page nothing has required.
        const std::int64_t rowsPerPage = std::int64_t(LeafPages::kRemotePageSize) / (kCols * 4);
        QVERIFY2(stride >= 2 * rowsPerPage, qPrintable(QString::number(stride)));
        const std::int64_t skipped = stride * (image->image().height() / 2) + stride / 2;
        Q_EMIT image->canvas()->hovered(3, skipped);
        QCOMPARE(image->hoverText(), QString("[%1, 3]").arg(skipped));
        // A drawn row's page was fetched: its value is shown.
        const std::int64_t drawn = skipped - stride / 2;
        Q_EMIT image->canvas()->hovered(3, drawn);
        QCOMPARE(image->hoverText(), QString("[%1, 3] = %2").arg(drawn).arg(valueAt(drawn, 3)));
    }

    void cleanupTestCase() { server_.reset(); }

private:
    static std::string key(DType dtype, std::int64_t mib) {
        return std::string(dtypeName(dtype)) + "_" + std::to_string(mib) + "mib";
    }

    QTemporaryDir served_;
    std::unique_ptr<testsupport::NginxServer> server_;
};

QTEST_MAIN(TestRemotePreview)
#include "tst_remote_preview.moc"
