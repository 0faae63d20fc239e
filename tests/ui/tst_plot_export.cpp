// Several series in one plot (columns of a leaf, leaves chosen together in
// the tree), readable axis ticks, slice exports on a worker with progress
// and cancel, and a failed PNG export that says so. Exports are held mid-way
// through the job's own progress hook, so that what is checked while they
// run does not depend on how fast this machine writes.

#include <QCategoryAxis>
#include <QChart>
#include <QComboBox>
#include <QLegend>
#include <QLineSeries>
#include <QListWidget>
#include <QMessageBox>
#include <QProgressDialog>
#include <QPushButton>
#include <QScopeGuard>
#include <QSemaphore>
#include <QStyle>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTreeView>
#include <QValueAxis>
#include <QtTest>
#include <atomic>
#include <cmath>

#include "document_page.h"
#include "image_view.h"
#include "key_filter_model.h"
#include "key_tree_model.h"
#include "main_window.h"
#include "plot_view.h"
#include "preview_panel.h"
#include "slice_export.h"
#include "slice_selector.h"
#include "tensordict/save.h"
#include "testsupport.h"

using namespace tensordict;

namespace {

// Value of column c at row i of the [rows, 4] test leaf: small, as in "0.00479215".
float wave(std::int64_t i, int c) {
    return static_cast<float>(0.001 * (c + 1) * std::sin(double(i) / 60.0 + c) + 0.002 * c);
}

QByteArray waveBytes(std::int64_t rows) {
    QByteArray raw(static_cast<int>(rows * 4 * 4), '\0');
    auto* v = reinterpret_cast<float*>(raw.data());
    for (std::int64_t i = 0; i < rows; ++i)
        for (int c = 0; c < 4; ++c)
            v[i * 4 + c] = wave(i, c);
    return raw;
}

QStringList lineNames(const PlotView& plot) {
    QStringList names;
    for (QLineSeries* line : plot.lines())
        names << line->name();
    return names;
}

// Whether `step` is 1, 2 or 5 times a power of ten.
bool isNiceStep(double step) {
    if (!(step > 0))
        return false;
    const double mantissa = step / std::pow(10.0, std::floor(std::log10(step) + 1e-9));
    for (double nice : {1.0, 2.0, 5.0, 10.0})
        if (std::abs(mantissa - nice) < 1e-6)
            return true;
    return false;
}

// Checks that `axis` is labelled at round values with just enough digits.
// The step between an axis' labels (0 with fewer than two).
double labelStep(QCategoryAxis* axis) {
    const QStringList labels = axis->categoriesLabels();
    return labels.size() < 2 ? 0 : axis->endValue(labels[1]) - axis->endValue(labels[0]);
}

void checkNiceAxis(QCategoryAxis* axis, int maxLabelLength) {
    const double step = labelStep(axis);
    QVERIFY2(isNiceStep(step), qPrintable(QString::number(step)));
    const QStringList labels = axis->categoriesLabels();
    QVERIFY2(labels.size() >= 2 && labels.size() <= 12, qPrintable(labels.join(" ")));
    QCOMPARE(QSet<QString>(labels.begin(), labels.end()).size(), labels.size());  // distinct
    for (const QString& label : labels) {
        QVERIFY2(label.size() <= maxLabelLength, qPrintable(labels.join(" ")));
        QVERIFY2(!(label.startsWith(QChar('-')) && label.toDouble() == 0),
                 qPrintable(label));  // no -0
        // Each label is its tick exactly: no rounding hides a digit.
        const double value = label.toDouble();
        QVERIFY2(std::abs(value - axis->endValue(label)) <= step * 1e-6,
                 qPrintable(labels.join(" ")));
        const double k = value / step;
        QVERIFY2(std::abs(k - std::round(k)) < 1e-6, qPrintable(labels.join(" ")));
    }
}

QMessageBox* openMessageBox(QWidget* parent) {
    for (QMessageBox* box : parent->findChildren<QMessageBox*>())
        if (box->isVisible())
            return box;
    return nullptr;
}

// Saves `w` as it looks into $TDSTUDIO_SCREENSHOT_DIR, when set.
void screenshot(QWidget* w, const QString& name) {
    const QByteArray dir = qgetenv("TDSTUDIO_SCREENSHOT_DIR");
    if (!dir.isEmpty())
        QVERIFY(w->grab().save(QString::fromLocal8Bit(dir) + "/" + name));
}

bool openAndWait(MainWindow& w, const QString& path) {
    QSignalSpy loaded(&w, &MainWindow::documentLoaded);
    w.openPath(path);
    return loaded.wait(20000);
}

// Holds an export's worker at its first report past half of the rows
// until release() (or the end of the test). An export on the GUI thread is
// not held (that would hang the test): it is recorded, and the test fails.
struct ExportHold {
    std::atomic<bool> once{false}, onGuiThread{false};
    QSemaphore reached, letGo;
    std::function<void(std::int64_t, std::int64_t)> hook() {
        return [this](std::int64_t done, std::int64_t rows) {
            if (QThread::currentThread() == qApp->thread()) {
                onGuiThread = true;
                return;
            }
            if (done >= rows / 2 && done < rows && !once.exchange(true)) {
                reached.release();
                letGo.acquire();
            }
        };
    }
    void release() { letGo.release(); }
};

}  // namespace

class PlotExportTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(scratch_.isValid());
        testsupport::isolateSettings("tst_plot_export");
        QLocale::setDefault(QLocale::c());
    }

    void niceTickSteps() {
        const NiceTicks small = niceTicks(0, 0.00479215);
        QCOMPARE(small.step, 0.001);
        QCOMPARE(small.format, QString("%.3f"));
        const NiceTicks indices = niceTicks(0, 1000, 8);
        QCOMPARE(indices.step, 100.0);
        QCOMPARE(indices.format, QString("%.0f"));
        const NiceTicks mixed = niceTicks(-3.7, 12.2);
        QCOMPARE(mixed.step, 2.0);
        QCOMPARE(mixed.format, QString("%.0f"));
        const NiceTicks half = niceTicks(0, 3);
        QCOMPARE(half.step, 0.5);
        QCOMPARE(half.format, QString("%.1f"));
        const NiceTicks huge = niceTicks(0, 3e7);
        QCOMPARE(huge.step, 5e6);
        QCOMPARE(huge.format, QString("%.1e"));
        const NiceTicks tiny = niceTicks(1e-7, 4e-7);
        QCOMPARE(tiny.step, 5e-8);
        QCOMPARE(tiny.format, QString("%.1e"));
        QCOMPARE(niceTicks(1, 1).step, 1.0);  // an empty range does not divide by zero
    }

    // Columns of a [1000, 4] leaf: one line per column, named as numpy
    // would index it, with a legend; choosing columns redraws only those.
    // In a small window (a plot pane of an 800x600 window) the axes carry as
    // many labels as fit side by side: none is cut to "…", and the audio-like
    // x axis of 100,000 samples reads in whole numbers.
    void smallPlotsHaveFewerLabelsNotElidedOnes() {
        PlotView plot;
        plot.resize(420, 300);
        plot.show();
        QVERIFY(QTest::qWaitForWindowExposed(&plot));
        QSignalSpy plotted(&plot, &PlotView::plotted);
        std::vector<float> wave(100000);
        for (std::size_t i = 0; i < wave.size(); ++i)
            wave[i] = 0.8f * std::sin(float(i) * 0.01f) - 0.1f;
        plot.setLeaf(DType::Float32, ownedBytes(std::move(wave)), {100000});
        QVERIFY(plotted.wait(10000));
        // The chart's pending layout and the relabelling the resize queued, run now.
        QCoreApplication::sendPostedEvents();
        QCoreApplication::processEvents();
        const QRectF area = plot.chart()->plotArea();
        const QFontMetricsF metrics(plot.xAxis()->labelsFont());
        const QStringList x = plot.xTickLabels(), y = plot.yTickLabels();
        QVERIFY2(x.size() >= 2, qPrintable(x.join(" ")));
        double widths = 0;
        for (const QString& label : x)
            widths += metrics.horizontalAdvance(label);
        QVERIFY2(widths * 1.3 < area.width(), qPrintable(x.join(" ")));  // room between them
        QVERIFY2(y.size() >= 2 && y.size() * metrics.height() * 1.5 < area.height(),
                 qPrintable(y.join(" ")));
        for (const QString& label : x + y)
            QVERIFY2(
                !label.contains(QChar(0x2026)) && !(label.startsWith('-') && label.toDouble() == 0),
                qPrintable(label));
        checkNiceAxis(plot.yAxis(), 6);
    }

    void columnsOfALeafAsSeries() {
        PlotView plot;
        plot.resize(900, 500);
        plot.show();
        QSignalSpy plotted(&plot, &PlotView::plotted);
        plot.setLeaf(DType::Float32, ownedBytes(waveBytes(1000)), {1000, 4});
        QVERIFY(plotted.wait(10000));
        QCOMPARE(plot.sliceSelector()->slice().rowDim, 0);  // x: the 1000 rows
        QCOMPARE(plot.seriesDim(), 1);
        QCOMPARE(plot.seriesIndices(), (QList<qint64>{0, 1, 2, 3}));  // a short dimension: all
        QCOMPARE(lineNames(plot), (QStringList{"[:, 0]", "[:, 1]", "[:, 2]", "[:, 3]"}));
        QVERIFY(plot.chart()->legend()->isVisible());
        QCOMPARE(plot.seriesList()->count(), 4);
        screenshot(&plot, "plot-series.png");
        // Lines can run along any dimension but the x axis' (main offered it too).
        QCOMPARE(plot.seriesDimBox()->findData(0), -1);
        QVERIFY(plot.seriesDimBox()->findData(1) >= 0);
        // Each check box row has the height of its text: none overlaps the next.
        for (int row = 0; row + 1 < plot.seriesList()->count(); ++row) {
            const QRect a = plot.seriesList()->visualItemRect(plot.seriesList()->item(row));
            const QRect b = plot.seriesList()->visualItemRect(plot.seriesList()->item(row + 1));
            const int box = plot.seriesList()->style()->pixelMetric(QStyle::PM_IndicatorHeight);
            QVERIFY2(a.bottom() + 2 < b.top() &&
                         a.height() >= std::max(plot.seriesList()->fontMetrics().height(), box) + 4,
                     qPrintable(QString("row %1 at %2..%3, the next at %4")
                                    .arg(row)
                                    .arg(a.top())
                                    .arg(a.bottom())
                                    .arg(b.top())));
        }
        for (QLineSeries* line : plot.lines())
            QCOMPARE(line->count(), 1000);
        QCOMPARE(plot.lines()[2]->at(500), QPointF(500, double(wave(500, 2))));

        // The user unchecks column 2.
        plot.seriesList()->item(2)->setCheckState(Qt::Unchecked);
        QVERIFY(plotted.wait(10000));
        QCOMPARE(plot.seriesIndices(), (QList<qint64>{0, 1, 3}));
        QCOMPARE(lineNames(plot), (QStringList{"[:, 0]", "[:, 1]", "[:, 3]"}));
        QCOMPARE(plot.lines()[2]->at(999), QPointF(999, double(wave(999, 3))));
        QVERIFY(plot.statusText().contains("3 lines"));

        // Ticks at round values with just enough digits, not "0.00479215".
        checkNiceAxis(plot.yAxis(), 6);
        checkNiceAxis(plot.xAxis(), 4);
        for (const QString& label : plot.xTickLabels())  // whole indices
            QVERIFY2(!label.contains('.'), qPrintable(label));
        const double step = labelStep(plot.yAxis());
        QVERIFY(step < 0.01);
        for (double end : {plot.yAxis()->min(), plot.yAxis()->max()})  // labelled ends
            QVERIFY(std::abs(end / step - std::round(end / step)) < 1e-6);

        // The rows as lines instead: x becomes the columns, one row is drawn.
        plot.setSeriesDim(0);
        QVERIFY(plotted.wait(10000));
        QCOMPARE(plot.sliceSelector()->slice().rowDim, 1);
        QCOMPARE(lineNames(plot), (QStringList{"[0, :]"}));
        QCOMPARE(plot.pointCount(), 4);
        QVERIFY(!plot.chart()->legend()->isVisible());

        // One line: a long other dimension gives a slider, not lines.
        plot.setLeaf(DType::Float32, ownedBytes(QByteArray(64 * 64 * 4, '\0')), {64, 64});
        QVERIFY(plotted.wait(10000));
        QCOMPARE(plot.seriesDim(), -1);
        QCOMPARE(plot.lines().size(), std::size_t(1));
    }

    // Leaves of one length chosen together in the tree (Ctrl-click) are
    // plotted together, named by their keys.
    void leavesChosenTogetherInTheTree() {
        const QString dir = scratch_.path() + "/leaves";
        TensorDict td = TensorDict::create();
        auto ramp = [](int n, float scale) {
            QByteArray raw(n * 4, '\0');
            auto* v = reinterpret_cast<float*>(raw.data());
            for (int i = 0; i < n; ++i)
                v[i] = scale * float(i);
            return ownedBytes(raw);
        };
        td.mutableRoot().addBytes("loss", DType::Float32, {300}, ramp(300, 1));
        td.mutableRoot().addBytes("reward", DType::Float32, {300, 1}, ramp(300, 2));
        td.mutableRoot().addBytes("short", DType::Float32, {20}, ramp(20, 3));
        td.mutableRoot().addBytes("value", DType::Float32, {300}, ramp(300, -1));
        save(td, dir.toStdString());

        MainWindow w;
        w.resize(1400, 860);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(openAndWait(w, dir));
        PreviewPanel* preview = w.documentPage()->previewPanel();
        QSignalSpy ready(preview, &PreviewPanel::leafReady);
        QVERIFY(w.selectKeyPath({"loss"}));
        QTRY_COMPARE(ready.count(), 1);
        QTreeView* tree = w.documentPage()->treeView();
        auto ctrlClick = [&](const char* key) {
            const Node* node = w.documentPage()->keyModel()->tensorDict()->root().child(key);
            const QModelIndex index = w.documentPage()->filterModel()->mapFromSource(
                w.documentPage()->keyModel()->indexOf(node));
            QVERIFY(index.isValid());
            QTest::mouseClick(tree->viewport(), Qt::LeftButton, Qt::ControlModifier,
                              tree->visualRect(index).center());
        };
        ctrlClick("value");
        ctrlClick("reward");
        QTRY_COMPARE(preview->seriesNodes().size(), std::size_t(3));
        PlotView* plot = preview->plotView();
        QTRY_COMPARE(plot->lines().size(), std::size_t(3));
        QCOMPARE(preview->mode(), PreviewPanel::PlotMode);
        QVERIFY(!preview->canShow(PreviewPanel::TableMode));  // only the plot shows them all
        const QStringList names = lineNames(*plot);
        QCOMPARE(QSet<QString>(names.begin(), names.end()),
                 (QSet<QString>{"loss", "value", "reward"}));
        QVERIFY(plot->chart()->legend()->isVisible());
        for (QLineSeries* line : plot->lines()) {
            QCOMPARE(line->count(), 300);
            const double scale = line->name() == "loss" ? 1 : line->name() == "reward" ? 2 : -1;
            QCOMPARE(line->at(299), QPointF(299, scale * 299));
        }
        checkNiceAxis(plot->yAxis(), 6);
        screenshot(&w, "multileaf.png");

        // A leaf of another length does not fit: the clicked leaf is shown alone.
        const Node* shortLeaf = w.documentPage()->keyModel()->tensorDict()->root().child("short");
        QVERIFY(!PreviewPanel::areSeries({preview->seriesNodes().front(), shortLeaf}));
        ctrlClick("short");
        QCOMPARE(w.documentPage()->treeView()->selectionModel()->selectedRows().size(), 4);
        QTRY_VERIFY(preview->seriesNodes().empty() && preview->node() == shortLeaf);
        QTRY_VERIFY(preview->canShow(PreviewPanel::TableMode));  // every view back
    }

    // A large CSV export runs on a worker: held in the middle, the GUI
    // thread's timers keep firing and the progress dialog follows; released,
    // the file is complete.
    void exportRunsOffTheGuiThread_data() {
        QTest::addColumn<int>("format");
        QTest::newRow("csv") << int(SliceExportJob::Format::Csv);
        QTest::newRow("npy") << int(SliceExportJob::Format::Npy);
    }
    void exportRunsOffTheGuiThread() {
        QFETCH(int, format);
        const auto fmt = static_cast<SliceExportJob::Format>(format);
        MainWindow w;
        PreviewPanel* preview = openLongLeaf(w);
        QVERIFY(preview);
        ExportHold hold;
        const auto letGo = qScopeGuard([&hold] { hold.release(); });
        preview->setExportWorkerHook(hold.hook());
        const QString path =
            scratch_.path() + (fmt == SliceExportJob::Format::Csv ? "/long.csv" : "/long.npy");
        QSignalSpy finished(preview, &PreviewPanel::exportFinished);
        int ticks = 0;
        QTimer timer;
        timer.setInterval(5);
        connect(&timer, &QTimer::timeout, [&ticks] { ++ticks; });
        timer.start();
        SliceExportJob* job = preview->exportSlice(fmt, path);
        QVERIFY(job);
        QVERIFY(!preview->exportSlice(fmt, path));  // one at a time
        QVERIFY(!hold.onGuiThread);
        QTRY_VERIFY_WITH_TIMEOUT(hold.reached.available() > 0, 30000);
        // Held mid-way on the worker: the GUI thread runs on.
        const int before = ticks;
        QTRY_VERIFY(ticks >= before + 5);
        QVERIFY(job->isRunning());
        QTRY_VERIFY(preview->exportProgress() && preview->exportProgress()->value() > 0 &&
                    preview->exportProgress()->value() < 1000);
        screenshot(preview->exportProgress(), "export-progress.png");
        QVERIFY(!QFileInfo::exists(path));  // written under another name until complete
        QCOMPARE(finished.count(), 0);
        hold.release();
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 60000);
        QCOMPARE(finished.front().at(0).toString(), QString());
        QCOMPARE(finished.front().at(1).toBool(), false);
        QVERIFY(!preview->exportProgress());  // closed
        QVERIFY(!openMessageBox(preview));

        // The file holds every row.
        QString out;
        QVERIFY(testsupport::runPython(
            {"-c",
             fmt == SliceExportJob::Format::Csv
                 ? "import numpy as np,sys; a=np.loadtxt(sys.argv[1], dtype=np.float32); "
                   "print(a.shape, a[0], a[-1])"
                 : "import numpy as np,sys; a=np.load(sys.argv[1]); print(a.shape, a[0], a[-1])",
             path},
            &out));
        QCOMPARE(out.trimmed(), QString("(%1,) 0.0 %2.0").arg(kLongRows).arg(kLongRows - 1));
    }

    // Cancel in the middle: the partial file is removed, nothing else is left.
    void cancelledExportLeavesNoFile() {
        MainWindow w;
        PreviewPanel* preview = openLongLeaf(w);
        QVERIFY(preview);
        ExportHold hold;
        const auto letGo = qScopeGuard([&hold] { hold.release(); });
        preview->setExportWorkerHook(hold.hook());
        const QString dir = scratch_.path() + "/cancelled";
        QVERIFY(QDir().mkpath(dir));
        QSignalSpy finished(preview, &PreviewPanel::exportFinished);
        QVERIFY(preview->exportSlice(SliceExportJob::Format::Csv, dir + "/part.csv"));
        QTRY_VERIFY_WITH_TIMEOUT(hold.reached.available() > 0, 30000);
        // Rows are written, but not under the file's name (QSaveFile: a temporary file).
        QVERIFY(!QFileInfo::exists(dir + "/part.csv"));
        QVERIFY(preview->exportProgress());
        preview->exportProgress()->findChild<QPushButton*>()->click();  // Cancel
        hold.release();
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 60000);
        QCOMPARE(finished.front().at(0).toString(), QString());
        QCOMPARE(finished.front().at(1).toBool(), true);
        QCOMPARE(QDir(dir).entryList(QDir::Files | QDir::Hidden), QStringList());
        QVERIFY(!openMessageBox(preview));  // cancelling is not a failure
    }

    void failedExportsSaySo() {
        MainWindow w;
        PreviewPanel* preview = openLongLeaf(w);
        QVERIFY(preview);
        QSignalSpy finished(preview, &PreviewPanel::exportFinished);
        QVERIFY(preview->exportSlice(SliceExportJob::Format::Npy, "/nonexistent-dir/x.npy"));
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 30000);
        QVERIFY(finished.front().at(0).toString().contains("/nonexistent-dir/x.npy"));
        QTRY_VERIFY(openMessageBox(preview));
        QVERIFY(openMessageBox(preview)->text().contains("/nonexistent-dir/x.npy"));
        openMessageBox(preview)->close();
        QTRY_VERIFY(!openMessageBox(preview));

        // The image view's PNG: written, then refused by a folder that does not exist.
        QSignalSpy ready(preview, &PreviewPanel::leafReady);
        QVERIFY(w.selectKeyPath({"image"}));
        QTRY_COMPARE(ready.count(), 1);
        QSignalSpy exported(preview->imageView(), &ImageView::exported);
        const QString png = scratch_.path() + "/slice.png";
        preview->imageView()->exportPng(png);
        QTRY_VERIFY_WITH_TIMEOUT(exported.count() == 1, 30000);
        QCOMPARE(exported.front().at(0).toString(), png);
        QCOMPARE(exported.front().at(1).toString(), QString());
        QVERIFY(QFileInfo(png).size() > 0);
        QVERIFY(!openMessageBox(preview));
        preview->imageView()->exportPng("/nonexistent-dir/slice.png");
        QTRY_VERIFY_WITH_TIMEOUT(exported.count() == 2, 30000);
        QVERIFY(exported.back().at(1).toString().startsWith("/nonexistent-dir/slice.png: "));
        QTRY_VERIFY(openMessageBox(preview));
        QVERIFY(openMessageBox(preview)->text().contains("could not be written"));
        QVERIFY(openMessageBox(preview)->text().contains("/nonexistent-dir/slice.png"));
    }

    // The window as a user sees it: three columns of a [1000, 4] leaf.
    // Saved when TDSTUDIO_SCREENSHOT_DIR is set (as multiplot.png).
    void multiSeriesScreenshot() {
        const QString dir = scratch_.path() + "/shot";
        TensorDict td = TensorDict::create({1000});
        td.mutableRoot().addBytes("observation", DType::Float32, {1000, 4},
                                  ownedBytes(waveBytes(1000)));
        save(td, dir.toStdString());
        MainWindow w;
        w.resize(1400, 860);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(openAndWait(w, dir));
        PreviewPanel* preview = w.documentPage()->previewPanel();
        QSignalSpy ready(preview, &PreviewPanel::leafReady);
        QVERIFY(w.selectKeyPath({"observation"}));
        QTRY_COMPARE(ready.count(), 1);
        preview->setMode(PreviewPanel::PlotMode);
        PlotView* plot = preview->plotView();
        QTRY_COMPARE(plot->lines().size(), std::size_t(4));  // the columns, all at first
        QSignalSpy plotted(plot, &PlotView::plotted);
        plot->setSeriesIndices({0, 1, 3});
        QVERIFY(plotted.wait(10000));
        QCOMPARE(lineNames(*plot), (QStringList{"[:, 0]", "[:, 1]", "[:, 3]"}));
        QVERIFY(!w.grab().isNull());
        screenshot(&w, "multiplot.png");
    }

private:
    static constexpr int kLongRows = 2'000'000;

    // A window showing "long", [kLongRows] float32 counting from 0, in the table.
    PreviewPanel* openLongLeaf(MainWindow& w) {
        const QString dir = scratch_.path() + "/long";
        if (!QFileInfo::exists(dir + "/meta.json")) {
            TensorDict td = TensorDict::create();
            QByteArray raw(kLongRows * 4, '\0');
            auto* v = reinterpret_cast<float*>(raw.data());
            for (int i = 0; i < kLongRows; ++i)
                v[i] = float(i);
            td.mutableRoot().addBytes("long", DType::Float32, {kLongRows}, ownedBytes(raw));
            td.mutableRoot().addBytes("image", DType::UInt8, {16, 16},
                                      ownedBytes(QByteArray(256, '\x40')));
            save(td, dir.toStdString());
        }
        w.show();
        if (!openAndWait(w, dir))
            return nullptr;
        PreviewPanel* preview = w.documentPage()->previewPanel();
        QSignalSpy ready(preview, &PreviewPanel::leafReady);
        if (!w.selectKeyPath({"long"}) || !ready.wait(20000))
            return nullptr;
        return preview;
    }

    QTemporaryDir scratch_;
};

QTEST_MAIN(PlotExportTest)
#include "tst_plot_export.moc"
