#pragma once

#include <QWidget>

#include "image_render.h"
#include "job_tracker.h"
#include "tensordict/node.h"

class QComboBox;
class QLabel;
class ColorBar;
class ImageCanvas;
class ImageControls;
class SliceSelector;

// A slice of two leaves of the same shape as three images side by side: A
// and B through one colour range (equal values look equal) and A - B through
// a diverging colormap, white where they agree. One slice selector drives all
// three; rendering runs on a worker, as ImageView's does.
class CompareImageView : public QWidget {
    Q_OBJECT

public:
    explicit CompareImageView(QWidget* parent = nullptr);

    void setLeaves(tensordict::DType aType, tensordict::LeafBytes a, tensordict::DType bType,
                   tensordict::LeafBytes b, const std::vector<std::int64_t>& shape);
    void clear();
    const ComparisonImages& images() const { return result_; }
    SliceSelector* sliceSelector() const { return selector_; }
    bool isRendering() const { return render_.isBusy(); }
    QString hoverText() const;
    // The keys to the colours: A and B's shared range, and A − B's.
    ColorBar* sharedColorBar() const { return sharedBar_; }
    ColorBar* differenceColorBar() const { return differenceBar_; }

Q_SIGNALS:
    void rendered();
    void sourceChanged();  // a leaf's file lost data while it was read

public:
    // Which rows and columns a sampled picture shows: " (every 2nd row, every 21st column)".
    static QString strideText(Strides stride);

private:
    void render();
    void showImages(const ComparisonImages& result);
    void showHover(qint64 col, qint64 row);  // a slice element

    tensordict::DType aType_ = tensordict::DType::Float32, bType_ = tensordict::DType::Float32;
    tensordict::LeafBytes a_, b_;
    int channelDim_ = -1;
    SliceSelector* selector_;
    ImageControls* controls_;
    ImageCanvas* canvases_[3];
    QLabel* captions_[3];
    ColorBar* sharedBar_;
    ColorBar* differenceBar_;
    QLabel* status_;
    ComparisonImages result_;
    TensorSlice renderedSlice_;
    JobTracker<ComparisonImages> render_{this};  // the newest request wins
};
