#pragma once

#include <QFutureWatcher>
#include <QList>
#include <QPointF>
#include <QWidget>
#include <optional>

#include "tensor_slice.h"
#include "tensordict/node.h"

class QChart;
class QChartView;
class QLabel;
class QLineSeries;
class QValueAxis;
class SliceSelector;

// The points to draw for elements [first, last) of a 1-D slice: all of them
// when few, else each of ~`buckets` buckets as its min and max (an envelope
// that keeps every spike). NaN and Inf are skipped.
std::optional<QList<QPointF>> plotPoints(tensordict::DType dtype,
                                         const tensordict::LeafBytes& bytes,
                                         const TensorSlice& slice, std::int64_t first,
                                         std::int64_t last, int buckets = 2000);

// A 1-D slice as a line plot (QtCharts): zoom by dragging a range, the
// value under the cursor, reset.
class PlotView : public QWidget {
    Q_OBJECT

public:
    explicit PlotView(QWidget* parent = nullptr);
    ~PlotView() override;
    void setLeaf(tensordict::DType dtype, tensordict::LeafBytes bytes,
                 const std::vector<std::int64_t>& shape);
    void clear();
    // A second leaf of the same shape, drawn over the first with a legend
    // naming both (call it before setLeaf()); clear() drops it.
    void setOther(tensordict::DType dtype, tensordict::LeafBytes bytes, const QString& name,
                  const QString& otherName);
    void zoomTo(double first, double last);
    int pointCount() const;
    int otherPointCount() const;
    SliceSelector* sliceSelector() const { return selector_; }
    QString hoverText() const;

Q_SIGNALS:
    void plotted();
    void sourceChanged();  // the leaf's file lost data while it was read

private:
    void replot(double first, double last);
    void hover(const QPointF& point, bool state);

    // The points of the leaf and of the other leaf (empty without one).
    struct Lines {
        QList<QPointF> points, otherPoints;
    };

    tensordict::DType dtype_ = tensordict::DType::Float32;
    tensordict::LeafBytes bytes_;
    tensordict::DType otherDtype_ = tensordict::DType::Float32;
    tensordict::LeafBytes other_;
    SliceSelector* selector_;
    QChart* chart_;
    QChartView* view_;
    QLineSeries* series_;
    QLineSeries* otherSeries_;
    QValueAxis* xAxis_;
    QValueAxis* yAxis_;
    QLabel* status_;
    QFutureWatcher<std::optional<Lines>> watcher_;
    bool settingRange_ = false;
};
