#pragma once

#include <QWidget>
#include <cstdint>
#include <vector>

// A histogram of the finite values: equal bins over [lo, hi] as bars, a
// count axis with round ticks on the left, the value range underneath, and
// each bar's range and count (with its share) in a tooltip.
class HistogramWidget : public QWidget {
    Q_OBJECT

public:
    explicit HistogramWidget(QWidget* parent = nullptr);

    void setData(std::vector<std::int64_t> bins, double lo, double hi);
    void clear() { setData({}, 0, 0); }
    const std::vector<std::int64_t>& bins() const { return bins_; }
    // The bin under `pos` (widget coordinates), or -1.
    int binAt(const QPoint& pos) const;
    // "[0.25, 0.5): 1,204 values (12.0%)"
    QString binText(int bin) const;
    // The count at the top of the axis (a round number at least the largest bin).
    std::int64_t axisTop() const;

protected:
    void paintEvent(QPaintEvent* event) override;
    bool event(QEvent* event) override;

private:
    // Where the bars go: the widget less the count axis' labels and the range line.
    QRect plotArea() const;

    std::vector<std::int64_t> bins_;
    std::int64_t total_ = 0;
    double lo_ = 0, hi_ = 0;
};
