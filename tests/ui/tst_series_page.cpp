// File > Compare Along Steps: a real torch 1.13 run's five checkpoints
// (tests/support/make_series.py, figures by numpy) compared on their own
// page: the table of keys x steps matches numpy for the chosen figure, the
// frozen layer and the key added at the end are marked, the plot draws the
// selected keys, the histograms of the current key count every finite
// value of every step on one axis, a cancel shows nothing, and Close
// Comparison goes back. TDSTUDIO_SCREENSHOT_DIR set: the page is kept as PNGs.

#include <QAbstractSeries>
#include <QChart>
#include <QComboBox>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPushButton>
#include <QTemporaryDir>
#include <QTreeView>
#include <QtTest>
#include <cmath>

#include "main_window.h"
#include "series_page.h"
#include "tensordict/series.h"
#include "testsupport.h"

namespace {

void keep(QWidget& w, const char* name) {
    if (const QByteArray dir = qgetenv("TDSTUDIO_SCREENSHOT_DIR"); !dir.isEmpty()) {
        // The charts lay out what was just added from posted events.
        QCoreApplication::sendPostedEvents();
        QCoreApplication::processEvents();
        w.grab().save(QString::fromLocal8Bit(dir) + "/" + name);
    }
}

int rowOf(const SeriesTableModel& model, const QString& key) {
    for (int r = 0; r < model.rowCount(); ++r)
        if (model.index(r, 0).data().toString() == key)
            return r;
    return -1;
}

}  // namespace

class SeriesPageTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() {
        testsupport::isolateSettings("tst_series_page");
        QVERIFY(scratch_.isValid());
        dir_ = scratch_.filePath("series");
        QString out, error;
        QVERIFY2(testsupport::runPython({TDSTUDIO_TEST_SUPPORT_DIR "/make_series.py", dir_}, &out,
                                        &error),
                 qPrintable(error));
        expected_ = QJsonDocument::fromJson(out.toUtf8()).object();
        for (const std::string& step : tensordict::seriesInFolder(dir_.toStdString()))
            steps_ << QString::fromStdString(step);
        QCOMPARE(steps_.size(), expected_["steps"].toArray().size());
    }

    void tableMatchesNumpyAndMarksKeys() {
        MainWindow w;
        w.resize(1280, 800);
        w.show();
        SeriesPage* page = w.seriesPage();
        QSignalSpy finished(page, &SeriesPage::finished);
        w.compareAlongSteps(steps_);
        QVERIFY(page->isActive());
        QCOMPARE(static_cast<Page*>(page), w.page());
        QVERIFY(finished.wait(120000));
        const SeriesTableModel& model = *page->model();
        const QJsonObject keys = expected_["keys"].toObject();
        QCOMPARE(model.rowCount(), keys.size());
        QCOMPARE(model.columnCount(), SeriesTableModel::kFirstStepColumn + int(steps_.size()));
        // The norm, then the changed fraction, of every key at every step, as numpy has them.
        const std::pair<int, const char*> metrics[] = {
            {int(SeriesTableModel::Metric::Norm), "norm"},
            {int(SeriesTableModel::Metric::ChangedFraction), "changed_fraction"}};
        int compared = 0;
        for (const auto& [metric, field] : metrics) {
            page->metricBox()->setCurrentIndex(metric);
            for (auto it = keys.begin(); it != keys.end(); ++it) {
                const int row = rowOf(model, QString("\"%1\"").arg(it.key()));
                QVERIFY2(row >= 0, qPrintable(it.key()));
                const QJsonArray want = it.value().toArray();
                for (int s = 0; s < want.size(); ++s) {
                    const QModelIndex cell =
                        model.index(row, SeriesTableModel::kFirstStepColumn + s);
                    const QJsonValue w = want[s].isNull() ? QJsonValue() : want[s][field];
                    if (w.isNull()) {
                        QCOMPARE(cell.data().toString(), QString("–"));
                        continue;
                    }
                    const double got = QLocale().toDouble(cell.data(Qt::ToolTipRole).toString());
                    QVERIFY2(std::fabs(got - w.toDouble()) <=
                                 1e-6 * std::max(1e-6, std::fabs(w.toDouble())),
                             qPrintable(QString("%1 %2 step %3: %4 against numpy's %5")
                                            .arg(it.key(), field)
                                            .arg(s)
                                            .arg(got)
                                            .arg(w.toDouble())));
                    ++compared;
                }
            }
        }
        QVERIFY(compared > 50);
        // The frozen first layer, and the key that appears at the last step.
        QCOMPARE(model.index(rowOf(model, "\"0.weight\""), 1).data().toString(), QString("frozen"));
        QVERIFY(model.index(rowOf(model, "\"head.temperature\""), 1)
                    .data()
                    .toString()
                    .startsWith("appears at 4"));
        QVERIFY(!model.index(rowOf(model, "\"3.weight\""), 1).data().isValid());

        // Two keys selected: two lines along the steps.
        page->metricBox()->setCurrentIndex(int(SeriesTableModel::Metric::Norm));
        QVERIFY(page->selectKeyPath({"3.weight"}));
        const QModelIndex other = page->treeView()->model()->index(
            rowOf(model, "\"0.weight\""), 0);  // no filter: rows are the model's
        page->treeView()->selectionModel()->select(
            other, QItemSelectionModel::Select | QItemSelectionModel::Rows);
        QCOMPARE(page->plotChart()->series().size(), 2);

        // The current key's histograms: every finite value of every step, on one axis.
        QSignalSpy histograms(page, &SeriesPage::histogramsReady);
        QVERIFY(page->selectKeyPath({"3.weight"}));
        QVERIFY(histograms.wait(60000));
        const SeriesPage::KeyHistograms& h = page->histogramsShown();
        QVERIFY2(h.error.isEmpty(), qPrintable(h.error));
        QCOMPARE(h.key, std::vector<std::string>{"3.weight"});
        QCOMPARE(int(h.steps.size()), steps_.size());
        const QJsonArray want = keys["3.weight"].toArray();
        double low = INFINITY, high = -INFINITY;
        for (int s = 0; s < want.size(); ++s) {
            QVERIFY(h.steps[std::size_t(s)]);
            std::int64_t total = 0;
            for (const std::int64_t c : *h.steps[std::size_t(s)])
                total += c;
            QCOMPARE(total, want[s]["count"].toInteger() - want[s]["nan"].toInteger() -
                                want[s]["inf"].toInteger());
            low = std::min(low, want[s]["min"].toDouble());
            high = std::max(high, want[s]["max"].toDouble());
        }
        QVERIFY(std::fabs(h.low - low) <= 1e-9 * std::fabs(low) + 1e-12);
        QVERIFY(std::fabs(h.high - high) <= 1e-9 * std::fabs(high) + 1e-12);
        QCOMPARE(page->histogramChart()->series().size(), steps_.size());
        keep(w, "series-overlaid.png");
        page->histogramLayoutBox()->setCurrentIndex(1);  // stacked
        QCOMPARE(page->histogramChart()->series().size(), steps_.size());
        keep(w, "series-stacked.png");

        // A key missing at first: its histograms say where it is not.
        QVERIFY(page->selectKeyPath({"head.temperature"}));
        QVERIFY(histograms.wait(60000));
        QVERIFY(!page->histogramsShown().steps[0]);
        QVERIFY(page->histogramsShown().steps.back());

        // Close Comparison: back to the window as it was.
        w.closeComparison();
        QVERIFY(!page->isActive());
        QVERIFY(w.page() != static_cast<Page*>(page));
    }

    // A cancel shows nothing: no figures, the page says so.
    void cancelShowsNothing() {
        MainWindow w;
        w.show();
        SeriesPage* page = w.seriesPage();
        QSignalSpy finished(page, &SeriesPage::finished);
        w.compareAlongSteps(steps_);
        QVERIFY(page->isRunning());
        QVERIFY(page->cancelButton()->isVisible());
        QTest::mouseClick(page->cancelButton(), Qt::LeftButton);
        QVERIFY(!page->isRunning());
        QVERIFY(page->statusLabel()->text().startsWith("Cancelled"));
        page->waitForJobs();  // what the cancelled job returns is dropped
        QCoreApplication::processEvents();
        QCOMPARE(finished.count(), 0);
        QCOMPARE(page->model()->rowCount(), 0);
        // A step that cannot be opened is named.
        w.compareAlongSteps({steps_[0], dir_ + "/missing.pt"});
        QTRY_VERIFY_WITH_TIMEOUT(page->statusLabel()->text().startsWith("Cannot compare"), 60000);
        QVERIFY(page->statusLabel()->text().contains("missing.pt"));
    }

private:
    QTemporaryDir scratch_;
    QString dir_;
    QStringList steps_;
    QJsonObject expected_;
};

QTEST_MAIN(SeriesPageTest)
#include "tst_series_page.moc"
