#pragma once

#include <QFutureWatcher>
#include <QWidget>
#include <atomic>
#include <memory>

#include "image_render.h"
#include "tensordict/node.h"

class QComboBox;
class QLabel;
class SliceSelector;

// Paints an image with zoom (wheel, around the cursor) and pan (drag).
class ImageCanvas : public QWidget {
    Q_OBJECT

public:
    explicit ImageCanvas(QWidget* parent = nullptr);
    void setImage(const QImage& image);
    void fit();
    double zoom() const { return zoom_; }

Q_SIGNALS:
    void hovered(int x, int y);  // image pixel under the cursor, -1 outside

protected:
    void paintEvent(QPaintEvent*) override;
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void resizeEvent(QResizeEvent*) override;

private:
    QImage image_;
    double zoom_ = 1;
    QPointF offset_;  // widget position of the image's top-left corner
    QPoint dragStart_;
    bool fitted_ = true;
};

// A slice of a leaf as an image: single-channel data through a colormap,
// [H,W,3|4] and [3|4,H,W] as colour; stacks browse with the slice sliders.
class ImageView : public QWidget {
    Q_OBJECT

public:
    explicit ImageView(QWidget* parent = nullptr);
    ~ImageView() override;

    // Whether `shape` can be shown as an image, and with which channel dimension.
    static bool canShow(const std::vector<std::int64_t>& shape, int* channelDim = nullptr);
    void setLeaf(tensordict::DType dtype, tensordict::LeafBytes bytes,
                 const std::vector<std::int64_t>& shape);
    void clear();
    const QImage& image() const { return result_.image; }
    SliceSelector* sliceSelector() const { return selector_; }
    void setColormap(Colormap map);
    bool isRendering() const { return watcher_.isRunning(); }
    QString hoverText() const;
    bool exportPng(const QString& path) const { return result_.image.save(path, "PNG"); }

Q_SIGNALS:
    void rendered();
    void sourceChanged();  // the leaf's file lost data while it was read

private:
    void render();
    void showHover(int x, int y);

    tensordict::DType dtype_ = tensordict::DType::Float32;
    tensordict::LeafBytes bytes_;
    int channelDim_ = -1;
    SliceSelector* selector_;
    QComboBox* colormap_;
    QComboBox* scale_;
    ImageCanvas* canvas_;
    QLabel* status_;
    ImageResult result_;
    TensorSlice renderedSlice_;
    QFutureWatcher<ImageResult> watcher_;
    std::shared_ptr<std::atomic<bool>> cancel_;
    bool pending_ = false;
};
