#pragma once

#include <QWidget>
#include <deque>
#include <memory>
#include <optional>

#include "image_render.h"
#include "job_outcome.h"
#include "job_tracker.h"
#include "tensordict/node.h"

class QComboBox;
class ColorBar;
class FlowLayout;
class QLabel;
class SliceSelector;

// Paints a slice as images with zoom (wheel, around the cursor) and pan
// (drag), in the slice's coordinates: a picture of the whole slice at
// screen resolution and, zoomed in, a finer one of the region on screen
// drawn over it (level of detail: nothing is ever drawn at full size).
// Elements are square on screen, but for a slice far wider than tall (or
// taller than wide), which then fills the view: a [10, 7200] leaf shows
// its 10 rows as bands, not as one pixel row.
class ImageCanvas : public QWidget {
    Q_OBJECT

public:
    explicit ImageCanvas(QWidget* parent = nullptr);
    // How a slice of `elements` (columns x rows) fits `box` (device-independent
    // pixels): screen pixels per column (zoom) and per row (zoom x aspect).
    struct Scale {
        double zoom = 1, aspect = 1;
    };
    static Scale fitScale(QSizeF elements, QSizeF box);
    // The whole slice, every stride.rows-th row and stride.cols-th column.
    void setImage(const QImage& image, Strides stride = {});
    // Part of the slice: pixel (x, y) is element (top + y * rows, left + x * cols).
    void setDetail(const QImage& image, std::int64_t top, std::int64_t left, Strides stride);
    void clearDetail();
    const QImage& detail() const { return detail_; }
    void fit();
    // Screen pixels per slice column (rows: times aspect()), and zooming to
    // `zoom` around the centre.
    double zoom() const { return zoom_; }
    double aspect() const { return aspect_; }
    void setZoom(double zoom);
    // The slice elements on screen (within the slice), and how many slice
    // columns and rows one device pixel spans.
    QRectF visibleElements() const;
    QSizeF elementsPerDevicePixel() const;

Q_SIGNALS:
    void hovered(qint64 col, qint64 row);  // slice element under the cursor, -1 outside
    void viewChanged();                    // zoomed, panned or resized

protected:
    void paintEvent(QPaintEvent*) override;
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void resizeEvent(QResizeEvent*) override;

private:
    QSizeF covered() const;  // slice elements the whole-slice image spans
    // Widget position of slice element (column, row), and back.
    QPointF toWidget(QPointF element) const;
    QPointF toElement(QPointF widget) const;

    QImage image_;
    Strides stride_;
    QImage detail_;
    QPointF detailAt_;  // slice (column, row) of the detail's top-left pixel
    Strides detailStride_;
    double zoom_ = 1;
    double aspect_ = 1;  // rows are drawn aspect_ times as tall as columns are wide
    QPointF offset_;     // widget position of the slice's top-left corner
    QPoint dragStart_;
    bool fitted_ = true;
};

// The bar above an image: its colormap, its scale and Fit, with room for
// a view's own buttons at its end. ImageView and CompareImageView share it.
class ImageControls : public QWidget {
    Q_OBJECT

public:
    explicit ImageControls(const QString& colormapLabel, QWidget* parent = nullptr);

    Colormap colormap() const;
    ImageScale scale() const;
    void setColormap(Colormap map);
    void setScale(ImageScale scale);
    // After the stretch, at the right end of the bar.
    void addTrailingWidget(QWidget* widget);
    // A colour image ([H,W,3|4], [3|4,H,W]) has no colormap; one of 8-bit
    // values (`asStored`) no scale either: those controls are disabled, saying why.
    void setColourImage(bool colour, bool asStored);
    QComboBox* colormapBox() const { return colormap_; }
    QComboBox* scaleBox() const { return scale_; }

Q_SIGNALS:
    void changed();  // the colormap or the scale
    void fitRequested();

private:
    QComboBox* colormap_;
    QComboBox* scale_;
    FlowLayout* layout_;  // wraps when the pane is narrow
};

// A slice of a leaf as an image: single-channel data through a colormap,
// [H,W,3|4] and [3|4,H,W] as colour; stacks browse with the slice sliders.
// Work is done only while the view is visible, off the GUI thread, for what
// the screen shows: the whole slice at screen resolution first (its colour
// range fixed from those pixels, a sample), then the region on screen when
// zoomed in; then the exact range of the whole slice, redrawing with it if the
// sample missed. A newer request cancels the running one; a few frames of a
// stack are cached and the neighbours of the shown one rendered ahead.
class ImageView : public QWidget {
    Q_OBJECT

public:
    explicit ImageView(QWidget* parent = nullptr);
    ~ImageView() override;

    // Whether `shape` can be shown as an image, and with which channel dimension.
    static bool canShow(const std::vector<std::int64_t>& shape, int* channelDim = nullptr);
    // The slice an image of `shape` opens on: its last two dimensions, or the
    // two beside its channels (`channelDim`, or -1).
    static TensorSlice imageSlice(const std::vector<std::int64_t>& shape, int* channelDim);
    // Takes the leaf; renders once the view is visible.
    void setLeaf(tensordict::DType dtype, tensordict::LeafBytes bytes,
                 const std::vector<std::int64_t>& shape);
    // Drops the leaf and cancels its work; a result still on its way is dropped.
    void clear();
    // The name exports start from ("images" gives "images[27].png").
    void setExportStem(const QString& stem) { exportStem_ = stem; }
    // Hooks every render and range of this view's later requests calls (tests).
    void setHooks(ImageHooks hooks) {
        hooks_ = std::make_shared<const ImageHooks>(std::move(hooks));
    }
    // The whole slice, at screen resolution.
    const QImage& image() const { return result_.image; }
    ImageCanvas* canvas() const { return canvas_; }
    SliceSelector* sliceSelector() const { return selector_; }
    ImageControls* controls() const { return controls_; }
    ColorBar* colorBar() const { return colorBar_; }
    void setColormap(Colormap map);
    void setScale(ImageScale scale);
    // Whether what the screen needs is still being drawn.
    bool isRendering() const;
    // The line under the picture: its size, strides and colour range.
    QString statusText() const;
    // Frames of a stack held rendered (the shown one and those read ahead).
    int cachedFrames() const { return static_cast<int>(frames_.size()); }
    // Whether the shown colour range is the whole slice's, not a sample's.
    bool rangeIsExact() const { return shown_ && shown_->exact; }
    // The most of a compressed leaf read page by page that is inflated
    // only to make a sampled colour range exact (of a remote one: nothing).
    static constexpr std::uint64_t kExactRangeReadCap = 64u << 20;
    // The shown colour range.
    double rangeLow() const { return result_.low; }
    double rangeHigh() const { return result_.high; }
    QString hoverText() const;
    // Renders the whole slice (up to 4096 pixels a side) on a worker and
    // saves it atomically (slice_export::writePng); then emits exported().
    void exportPng(const QString& path);

Q_SIGNALS:
    void rendered();  // the screen shows the current slice in full detail
    // The end of exportPng() to `path`: `error` "" on success, or the error, naming the path.
    void exported(const QString& path, const QString& error);
    void sourceChanged();  // the leaf's file lost data while it was read

protected:
    void showEvent(QShowEvent* event) override;
    void hideEvent(QHideEvent* event) override;

private:
    std::shared_ptr<const ImageHooks> hooks_;
    // Range: the exact colour range of the shown slice, and the overview
    // redrawn with it when it differs from the sampled one.
    enum class JobKind { Overview, Detail, Range, ReadAhead };
    struct Job {
        JobKind kind = JobKind::Overview;
        ImageRequest request;
    };
    // A rendered whole slice, kept for scrubbing through a stack.
    struct Frame {
        TensorSlice slice;
        Colormap colormap;
        ImageScale scale;
        Strides stride;
        ImageResult result;
        bool exact = false;  // result's range is the whole slice's, not a sample's
    };

    ImageRequest requestFor(const TensorSlice& slice) const;
    Strides overviewStride() const;
    const Frame* cachedFrame(const TensorSlice& slice, Strides stride) const;
    // The exact range of `slice` at the current scale, if a cached frame knows it.
    const Frame* exactFrame(const TensorSlice& slice) const;
    // Colour images of bytes are drawn as they are: nothing to refine.
    bool rawColour() const;
    void keepFrame(const ImageRequest& request, const ImageResult& result, bool exact);
    // Starts (or shows from the cache) what the screen needs next, else a read-ahead.
    void runNext();
    std::optional<Job> visibleJob();
    std::optional<Job> rangeJob() const;
    std::optional<Job> readAheadJob() const;
    void start(Job job);
    void jobFinished(const Job& job, const ImageResult& result);
    void rangeFinished(const Job& job, const ImageResult& result);
    void showOverview(const Frame& frame);
    void cancelRunning();
    void sliceChosen(const TensorSlice& slice);
    void updateStatus();
    void showHover(qint64 col, qint64 row);

    tensordict::DType dtype_ = tensordict::DType::Float32;
    tensordict::LeafBytes bytes_;
    QString exportStem_ = QStringLiteral("image");
    int channelDim_ = -1;
    SliceSelector* selector_;
    ImageControls* controls_;
    ImageCanvas* canvas_;
    ColorBar* colorBar_;
    QLabel* status_;
    ImageResult result_;          // the shown whole slice
    std::optional<Frame> shown_;  // what result_ is of
    ImageResult detail_;          // the shown region, if any
    ImageRequest detailRequest_;
    std::deque<Frame> frames_;              // most recently used first
    int readAheadDim_ = -1;                 // the dimension last scrubbed
    std::optional<Job> running_;            // what render_ is drawing
    JobTracker<ImageResult> render_{this};  // one job at a time; a new one cancels it
    JobTracker<JobOutcome> pngExports_{this, JobDelivery::Every};  // each export reports
    bool announce_ = false;     // the screen changed since `rendered` was last emitted
    bool needsScreen_ = false;  // what the screen needs is not drawn yet
};
