#pragma once

#include <QWidget>
#include <memory>

#include "job_tracker.h"
#include "page.h"
#include "series_table_model.h"

class QChart;
class QChartView;
class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSortFilterProxyModel;
class QTreeView;

// File > Compare Along Steps: a series of checkpoints compared along
// training steps, as `tdstudio --series` compares them. A table of keys x
// steps of one figure (coloured along each row; frozen keys and keys that
// appear or go marked), a plot of that figure along the steps for the
// selected keys, and the histograms of the current key at every step on one
// axis, overlaid or stacked. The figures are computed on a job, with
// progress and cancel; a key's histograms on another when it is chosen.
class SeriesPage : public QWidget, public Page {
    Q_OBJECT

public:
    explicit SeriesPage(QWidget* parent = nullptr);
    ~SeriesPage() override;

    // Compares the checkpoints at `locations`, in this order.
    void start(const QStringList& locations);
    void cancel();
    void close();
    bool isActive() const { return active_; }
    bool isRunning() const { return run_.isBusy(); }
    // Blocks until the jobs started so far have returned (tests: a result
    // of a cancelled job must then still not show).
    void waitForJobs() {
        run_.waitForFinished();
        histogramJob_.waitForFinished();
    }

    // Page
    QTreeView* treeView() const override { return table_; }
    QLineEdit* filterEdit() const override { return filter_; }
    bool hasCurrentKey() const override;
    QStringList currentKeyPath() const override;
    bool selectKeyPath(const QStringList& path) override;
    QString showMode(int mode) override;
    SliceSelector* currentSliceSelector() const override { return nullptr; }

    SeriesTableModel* model() const { return model_; }
    QComboBox* metricBox() const { return metric_; }
    QComboBox* histogramLayoutBox() const { return layout_; }
    QChart* plotChart() const { return plot_; }
    QChart* histogramChart() const { return histograms_; }
    QLabel* statusLabel() const { return status_; }
    QPushButton* cancelButton() const { return cancel_; }

    // A key's histograms at every step: equal bins over the range of all
    // its values, nullopt where the step has no such key.
    struct KeyHistograms {
        std::vector<std::string> key;
        double low = 0, high = 0;
        std::vector<std::optional<std::vector<std::int64_t>>> steps;
        QString error;
    };
    const KeyHistograms& histogramsShown() const { return shown_; }

Q_SIGNALS:
    // The figures of every key are on screen.
    void finished();
    // The histograms of the current key are on screen.
    void histogramsReady();

private:
    struct Outcome {
        std::optional<tensordict::SeriesReport> report;
        QString error;
        bool cancelled = false;
    };
    class StepTrees;
    void showOutcome(Outcome outcome);
    void updatePlot();
    void requestHistograms();
    void drawHistograms();
    std::vector<const tensordict::SeriesKey*> selectedKeys() const;
    const tensordict::SeriesKey* currentKey() const;

    SeriesTableModel* model_;
    QSortFilterProxyModel* proxy_;
    QLabel* title_;
    QComboBox* metric_;
    QComboBox* layout_;
    QProgressBar* progress_;
    QPushButton* cancel_;
    QLabel* status_;
    QLineEdit* filter_;
    QTreeView* table_;
    QChart* plot_;
    QChartView* plotView_;
    QChart* histograms_;
    QChartView* histogramView_;
    QLabel* histogramStatus_;
    bool active_ = false;
    QStringList locations_;
    std::shared_ptr<StepTrees> trees_;  // opened by the first histograms, kept for the next
    KeyHistograms shown_;
    JobTracker<Outcome> run_{this};
    JobTracker<KeyHistograms> histogramJob_{this};
};
