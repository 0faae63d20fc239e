#pragma once

#include <QFutureWatcher>
#include <QWidget>
#include <atomic>
#include <memory>

#include "image_render.h"
#include "tensordict/node.h"

class QComboBox;
class QLabel;
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
    ~CompareImageView() override;

    void setLeaves(tensordict::DType aType, tensordict::LeafBytes a, tensordict::DType bType,
                   tensordict::LeafBytes b, const std::vector<std::int64_t>& shape);
    void clear();
    const ComparisonImages& images() const { return result_; }
    SliceSelector* sliceSelector() const { return selector_; }
    bool isRendering() const { return watcher_.isRunning(); }
    QString hoverText() const;

Q_SIGNALS:
    void rendered();
    void sourceChanged();  // a leaf's file lost data while it was read

private:
    void render();
    void showHover(qint64 col, qint64 row);  // a slice element

    tensordict::DType aType_ = tensordict::DType::Float32, bType_ = tensordict::DType::Float32;
    tensordict::LeafBytes a_, b_;
    int channelDim_ = -1;
    SliceSelector* selector_;
    ImageControls* controls_;
    ImageCanvas* canvases_[3];
    QLabel* captions_[3];
    QLabel* status_;
    ComparisonImages result_;
    TensorSlice renderedSlice_;
    QFutureWatcher<ComparisonImages> watcher_;
    std::shared_ptr<std::atomic<bool>> cancel_;
    bool pending_ = false;
};
