#pragma once

#include <QStringList>
#include <QWidget>
#include <cstdint>
#include <vector>

// Horizontal bars, one a row: a label, a bar as long as its share of the
// largest, and the size. A bar that names a key can be clicked to select it.
class SizeBarChart : public QWidget {
    Q_OBJECT

public:
    struct Bar {
        QString label;
        std::uint64_t bytes = 0;
        QString valueText;    // "4.69 MiB", or more ("→ 1.2 MiB, 3.9×")
        QStringList keyPath;  // empty: not a key, not clickable
        QString toolTip;
    };

    explicit SizeBarChart(QWidget* parent = nullptr);

    void setBars(std::vector<Bar> bars, const QString& emptyText = QString());
    const std::vector<Bar>& bars() const { return bars_; }
    // Where bar `index` is drawn (the whole row); for tests and hit testing.
    QRect barRect(int index) const;
    // Whether the value text of bar `index` shows whole at the chart's width.
    bool valueFits(int index) const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

Q_SIGNALS:
    void keyActivated(const QStringList& keyPath);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;
    bool event(QEvent* event) override;

private:
    // Where a row's parts go at the current width: the label (elided to
    // fit), the bars' span, and the values, which are never cut.
    struct Columns {
        int labelWidth = 0;
        int barLeft = 0;
        int barSpan = 0;
    };
    Columns columns() const;
    int barLength(const Bar& bar, const Columns& c) const;
    int widestValue() const;
    int widestLabel() const;
    int rowHeight() const;
    int barAt(const QPoint& pos) const;

    std::vector<Bar> bars_;
    QString emptyText_;
    int hovered_ = -1;
};
