#pragma once

#include <QList>
#include <QPointF>
#include <QString>
#include <QWidget>
#include <memory>
#include <optional>
#include <vector>

#include "job_tracker.h"
#include "tensor_slice.h"
#include "tensordict/node.h"

class QChart;
class QChartView;
class QComboBox;
class QLabel;
class QLineSeries;
class QListWidget;
class QValueAxis;
class QCategoryAxis;
class SliceSelector;

// The points to draw for elements [first, last) of a 1-D slice: all of them
// when few, else each of ~`buckets` buckets as its min and max (an envelope
// that keeps every spike). NaN and Inf are skipped.
std::optional<QList<QPointF>> plotPoints(tensordict::DType dtype,
                                         const tensordict::LeafBytes& bytes,
                                         const TensorSlice& slice, std::int64_t first,
                                         std::int64_t last, int buckets = 2000,
                                         const tensordict::CancelToken* cancel = nullptr);

// Ticks people read: a step of 1, 2 or 5 x 10^k giving about `intervals`
// intervals over [lo, hi], and a printf format with just enough digits to
// tell the ticks apart ("%.3f", or "%.1e" for very large or small values).
struct NiceTicks {
    double step = 1;
    QString format = "%g";
};
NiceTicks niceTicks(double lo, double hi, int intervals = 6);

// Slices as line plots (QtCharts): zoom by dragging a range, the values
// under the cursor, reset. Several lines at once with a legend: chosen
// indices along one dimension of a leaf (columns of a 2-D leaf), several
// leaves of one length, or two leaves compared.
class PlotView : public QWidget {
    Q_OBJECT

public:
    // A leaf drawn as one line of a multi-leaf plot.
    struct Series {
        QString name;
        tensordict::DType dtype = tensordict::DType::Float32;
        tensordict::LeafBytes bytes;
    };
    // At most this many lines are drawn; more chosen are left out (the status says so).
    static constexpr int kMaxLines = 16;

    explicit PlotView(QWidget* parent = nullptr);
    ~PlotView() override;
    // One leaf. The x axis is its longest dimension; a short other dimension
    // (2 to 8) gives one line per index, as the columns of [1000, 4].
    void setLeaf(tensordict::DType dtype, tensordict::LeafBytes bytes,
                 const std::vector<std::int64_t>& shape);
    // Several leaves of `length` elements each, one line per leaf.
    void setSeries(std::vector<Series> leaves, std::int64_t length);
    void clear();
    // A second leaf of the same shape, drawn over the first with a legend
    // naming both (call it before setLeaf()); clear() drops it.
    void setOther(tensordict::DType dtype, tensordict::LeafBytes bytes, const QString& name,
                  const QString& otherName);
    // The dimension of setLeaf()'s leaf whose chosen indices are drawn as
    // lines (-1: one line); choosing the x axis' dimension swaps the two.
    void setSeriesDim(int dim);
    int seriesDim() const { return seriesDim_; }
    void setSeriesIndices(const QList<qint64>& indices);
    QList<qint64> seriesIndices() const { return chosen_; }
    void zoomTo(double first, double last);
    int pointCount() const;
    int otherPointCount() const;
    SliceSelector* sliceSelector() const { return selector_; }
    QComboBox* seriesDimBox() const { return seriesDimBox_; }
    QListWidget* seriesList() const { return seriesList_; }
    QChart* chart() const { return chart_; }
    // The lines drawn, in order.
    const std::vector<QLineSeries*>& lines() const { return lines_; }
    QCategoryAxis* xAxis() const { return xAxis_; }
    QCategoryAxis* yAxis() const { return yAxis_; }
    // The tick labels each axis shows now, left to right and bottom to top.
    QStringList xTickLabels() const;
    QStringList yTickLabels() const;
    QString statusText() const;
    QString hoverText() const;

Q_SIGNALS:
    void plotted();
    void sourceChanged();  // the leaf's file lost data while it was read

private:
    // What one line reads: a leaf's bytes along a slice.
    struct Line {
        QString name;
        tensordict::DType dtype;
        tensordict::LeafBytes bytes;
        TensorSlice slice;
    };
    using Points = std::vector<QList<QPointF>>;

    bool hasData() const { return bytes_.data || !series_.empty(); }
    std::vector<Line> linesToDraw() const;
    void replot(double first, double last);
    void replotAll();
    void showPoints(const Points& points);
    void hover(const QPointF& point, bool state);
    void fillSeriesPanel();
    void seriesChecked();
    // The indices drawn by default along `dim`: all of a short dimension.
    QList<qint64> defaultIndices(int dim) const;

    tensordict::DType dtype_ = tensordict::DType::Float32;
    tensordict::LeafBytes bytes_;
    tensordict::DType otherDtype_ = tensordict::DType::Float32;
    tensordict::LeafBytes other_;
    QString name_, otherName_;
    std::vector<Series> series_;
    int seriesDim_ = -1;
    QList<qint64> chosen_;
    SliceSelector* selector_;
    QWidget* seriesPanel_;
    QComboBox* seriesDimBox_;
    QListWidget* seriesList_;
    TensorSlice listedFor_;  // the slice the series panel was filled for
    QChart* chart_;
    QChartView* view_;
    std::vector<QLineSeries*> lines_;
    std::vector<Line> drawing_, drawn_;  // being read on the worker; on screen
    int leftOut_ = 0;                    // chosen lines beyond kMaxLines
    // Labels at nice values, formatted here: as many as fit the plot's size
    // (a number is never elided) and never "-0".
    QCategoryAxis* xAxis_;
    QCategoryAxis* yAxis_;
    void labelAxes();
    void resizeEvent(QResizeEvent* event) override;
    QLabel* status_;
    bool settingRange_ = false;
    // The points of the range shown, reduced on a worker (last: it waits for its job).
    JobTracker<std::optional<Points>> read_{this};
};
