#pragma once

#include <QAbstractTableModel>
#include <optional>
#include <vector>

#include "tensordict/series.h"

// A series of checkpoints as a table: a key a row, its mark (frozen,
// appears, goes), then one column a step of the chosen figure, coloured
// along the row (fractions and cosines on their own 0 to 1 scale).
class SeriesTableModel : public QAbstractTableModel {
    Q_OBJECT

public:
    // The figures a step can show, as their columns are named.
    enum class Metric {
        Norm,
        Mean,
        Std,
        Min,
        Max,
        MaxAbsDelta,
        ChangedFraction,
        Cosine,
    };
    static QStringList metricNames();
    static std::optional<double> figure(const tensordict::StepFigures& f, Metric metric);

    // What a key did along the steps.
    enum class Mark { None, Frozen, Appears, Goes };
    static Mark markOf(const tensordict::SeriesKey& key);

    explicit SeriesTableModel(QObject* parent = nullptr);

    void setReport(tensordict::SeriesReport report);
    void clear();
    const tensordict::SeriesReport& report() const { return report_; }
    void setMetric(Metric metric);
    Metric metric() const { return metric_; }
    static constexpr int kFirstStepColumn = 2;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    tensordict::SeriesReport report_;
    std::vector<Mark> marks_;
    // Each row's range of the metric, for its colours.
    std::vector<std::pair<double, double>> ranges_;
    Metric metric_ = Metric::Norm;
    void updateRanges();
};
