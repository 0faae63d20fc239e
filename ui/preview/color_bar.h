#pragma once

#include <QWidget>

#include "image_render.h"

// The key to an image's colours: the colormap as a strip from the value at
// its low end to the one at its high end, with the middle value, and the
// colour of NaN (magenta) beside it when the picture shows a NaN.
class ColorBar : public QWidget {
    Q_OBJECT

public:
    explicit ColorBar(QWidget* parent = nullptr);

    void setRange(Colormap map, double low, double high);
    // Whether to show NaN's colour (the picture shows a NaN).
    void setNanShown(bool shown);
    Colormap colormap() const { return map_; }
    double low() const { return low_; }
    double high() const { return high_; }
    bool nanShown() const { return nanShown_; }
    // The labels as drawn: low, middle, high.
    QStringList labels() const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    Colormap map_ = Colormap::Gray;
    double low_ = 0, high_ = 0;
    bool nanShown_ = false;
};
