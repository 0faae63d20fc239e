#include "image_view.h"

#include "color_bar.h"
#include "file_dialogs.h"
#include "flow_layout.h"
#include "tensordict/leaf_pages.h"

#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPushButton>
#include <QVBoxLayout>
#include <QWheelEvent>

#include "slice_export.h"
#include "slice_selector.h"
#include "tensordict/element.h"
#include "tensordict/guarded_read.h"
#include "widget_shortcut.h"

ImageCanvas::ImageCanvas(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setMinimumSize(200, 150);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

ImageCanvas::Scale ImageCanvas::fitScale(QSizeF elements, QSizeF box) {
    const double zx = box.width() / std::max(1.0, elements.width());
    const double zy = box.height() / std::max(1.0, elements.height());
    // Square elements unless that would leave the slice a thin strip (under
    // a quarter of the box) whose few rows (or columns) the box could show
    // each in a pixel of their own: then each axis fills the box.
    constexpr double kStretchFrom = 4;
    const bool fewRows = zy > kStretchFrom * zx && elements.height() <= box.height();
    const bool fewCols = zx > kStretchFrom * zy && elements.width() <= box.width();
    if (fewRows || fewCols) {
        const auto crisp = [](double z) { return z > 1 ? std::floor(z) : z; };
        return {crisp(zx), crisp(zy) / crisp(zx)};
    }
    double zoom = std::min(zx, zy);
    if (zoom > 1)
        zoom = std::floor(zoom);  // crisp pixels when enlarging
    return {zoom, 1};
}

void ImageCanvas::setImage(const QImage& image, Strides stride) {
    const QSizeF before = covered();
    const Strides strideBefore = stride_;
    image_ = image;
    stride_ = {std::max(1, stride.rows), std::max(1, stride.cols)};
    // The same slice at another stride covers the same elements (up to a
    // pixel's rounding): the zoom stays. Another slice is fitted.
    const QSizeF now = covered();
    const bool sameSlice =
        std::abs(now.width() - before.width()) <= std::max(strideBefore.cols, stride_.cols) &&
        std::abs(now.height() - before.height()) <= std::max(strideBefore.rows, stride_.rows);
    if (!sameSlice || fitted_)
        fit();
    update();
}

void ImageCanvas::setDetail(const QImage& image, std::int64_t top, std::int64_t left,
                            Strides stride) {
    detail_ = image;
    detailAt_ = QPointF(double(left), double(top));
    detailStride_ = {std::max(1, stride.rows), std::max(1, stride.cols)};
    update();
}

void ImageCanvas::clearDetail() {
    detail_ = {};
    update();
}

QSizeF ImageCanvas::covered() const {
    return {double(image_.width()) * stride_.cols, double(image_.height()) * stride_.rows};
}

QPointF ImageCanvas::toWidget(QPointF element) const {
    return offset_ + QPointF(element.x() * zoom_, element.y() * zoom_ * aspect_);
}

QPointF ImageCanvas::toElement(QPointF widget) const {
    const QPointF d = widget - offset_;
    return {d.x() / zoom_, d.y() / (zoom_ * aspect_)};
}

void ImageCanvas::fit() {
    fitted_ = true;
    if (image_.isNull())
        return;
    const QSizeF size = covered();
    const Scale scale = fitScale(size, QSizeF(width(), height()));
    zoom_ = scale.zoom, aspect_ = scale.aspect;
    offset_ = QPointF((width() - size.width() * zoom_) / 2,
                      (height() - size.height() * zoom_ * aspect_) / 2);
    update();
    Q_EMIT viewChanged();
}

void ImageCanvas::setZoom(double zoom) {
    const QPointF centre(width() / 2.0, height() / 2.0);
    const QPointF at = toElement(centre);
    zoom_ = std::clamp(zoom, 1e-4, 256.0);
    offset_ = centre - QPointF(at.x() * zoom_, at.y() * zoom_ * aspect_);
    fitted_ = false;
    update();
    Q_EMIT viewChanged();
}

QRectF ImageCanvas::visibleElements() const {
    const QRectF onScreen(toElement({0, 0}), toElement(QPointF(width(), height())));
    return onScreen.intersected(QRectF(QPointF(0, 0), covered()));
}

QSizeF ImageCanvas::elementsPerDevicePixel() const {
    const double dpr = devicePixelRatioF();
    return {1.0 / (zoom_ * dpr), 1.0 / (zoom_ * aspect_ * dpr)};
}

void ImageCanvas::resizeEvent(QResizeEvent*) {
    if (fitted_)
        fit();
    else
        Q_EMIT viewChanged();
}

void ImageCanvas::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.fillRect(rect(), palette().color(QPalette::Mid));
    auto draw = [&](const QImage& image, QPointF at, Strides stride) {
        if (image.isNull())
            return;
        // Screen pixels per image pixel, across and down.
        const double sx = stride.cols * zoom_, sy = stride.rows * zoom_ * aspect_;
        p.setRenderHint(QPainter::SmoothPixmapTransform,
                        std::min(sx, sy) * devicePixelRatioF() < 1);
        p.drawImage(QRectF(toWidget(at), QSizeF(image.width() * sx, image.height() * sy)), image);
    };
    draw(image_, {}, stride_);
    draw(detail_, detailAt_, detailStride_);  // finer, over the coarse picture
}

void ImageCanvas::wheelEvent(QWheelEvent* event) {
    if (image_.isNull())
        return;
    const double factor = std::pow(1.25, event->angleDelta().y() / 120.0);
    const QPointF at = event->position();
    const QPointF slicePoint = toElement(at);
    zoom_ = std::clamp(zoom_ * factor, 1e-4, 256.0);
    offset_ = at - QPointF(slicePoint.x() * zoom_, slicePoint.y() * zoom_ * aspect_);
    fitted_ = false;
    update();
    Q_EMIT viewChanged();
}

void ImageCanvas::mousePressEvent(QMouseEvent* event) {
    dragStart_ = event->position().toPoint();
}

void ImageCanvas::mouseMoveEvent(QMouseEvent* event) {
    if (event->buttons() & Qt::LeftButton) {
        offset_ += event->position() - dragStart_;
        dragStart_ = event->position().toPoint();
        fitted_ = false;
        update();
        Q_EMIT viewChanged();
    }
    const QPointF p = toElement(event->position());
    const QSizeF size = covered();
    if (p.x() >= 0 && p.y() >= 0 && p.x() < size.width() && p.y() < size.height())
        Q_EMIT hovered(static_cast<qint64>(p.x()), static_cast<qint64>(p.y()));
    else
        Q_EMIT hovered(-1, -1);
}

ImageControls::ImageControls(const QString& colormapLabel, QWidget* parent)
    : QWidget(parent),
      colormap_(new QComboBox),
      scale_(new QComboBox),
      layout_(new FlowLayout(this)) {
    colormap_->addItems(colormapNames());
    scale_->addItem(tr("min–max"));
    scale_->addItem(tr("1–99 percentile"));
    auto* fit = new QPushButton(tr("Fit"));
    layout_->addWidget(new QLabel(colormapLabel));
    layout_->addWidget(colormap_);
    layout_->addWidget(new QLabel(tr("Scale:")));
    layout_->addWidget(scale_);
    layout_->addWidget(fit);
    layout_->addStretch();
    connect(colormap_, &QComboBox::currentIndexChanged, this, &ImageControls::changed);
    connect(scale_, &QComboBox::currentIndexChanged, this, &ImageControls::changed);
    connect(fit, &QPushButton::clicked, this, &ImageControls::fitRequested);
}

void ImageControls::setColourImage(bool colour, bool asStored) {
    colormap_->setEnabled(!colour);
    colormap_->setToolTip(colour ? tr("A colour image is shown in its own colours.") : QString());
    scale_->setEnabled(!asStored);
    scale_->setToolTip(asStored ? tr("8-bit colour is shown as stored.") : QString());
}

Colormap ImageControls::colormap() const {
    return static_cast<Colormap>(colormap_->currentIndex());
}

ImageScale ImageControls::scale() const {
    return static_cast<ImageScale>(scale_->currentIndex());
}

void ImageControls::setColormap(Colormap map) {
    colormap_->setCurrentIndex(static_cast<int>(map));
}

void ImageControls::setScale(ImageScale scale) {
    scale_->setCurrentIndex(static_cast<int>(scale));
}

void ImageControls::addTrailingWidget(QWidget* widget) {
    layout_->addWidget(widget);
}

ImageView::ImageView(QWidget* parent)
    : QWidget(parent),
      selector_(new SliceSelector(SliceSelector::Mode::Image)),
      controls_(new ImageControls(tr("Colormap:"))),
      canvas_(new ImageCanvas),
      colorBar_(new ColorBar),
      status_(new QLabel) {
    auto* exportButton = new QPushButton(tr("Export PNG…"));
    controls_->addTrailingWidget(exportButton);
    setAccessibleName(tr("Image"));
    addButtonShortcut(this, exportButton, tr("Export the image as PNG…"),
                      QKeySequence(Qt::CTRL | Qt::Key_E));
    addWidgetShortcut(this, tr("Fit the image to the view"), QKeySequence(Qt::CTRL | Qt::Key_0),
                      [this] { canvas_->fit(); });
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(controls_);
    layout->addWidget(selector_);
    layout->addWidget(canvas_, 1);
    layout->addWidget(colorBar_);
    layout->addWidget(status_);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    colorBar_->hide();  // until an image of one channel is shown

    connect(controls_, &ImageControls::changed, this, &ImageView::runNext);
    connect(selector_, &SliceSelector::sliceChanged, this, &ImageView::sliceChosen);
    connect(controls_, &ImageControls::fitRequested, canvas_, &ImageCanvas::fit);
    connect(canvas_, &ImageCanvas::hovered, this, &ImageView::showHover);
    connect(canvas_, &ImageCanvas::viewChanged, this, &ImageView::runNext);
    connect(exportButton, &QPushButton::clicked, this, [this] {
        const QString path = file_dialogs::saveFile(
            this, file_dialogs::Kind::ExportPng, tr("Export image"),
            selector_->fileName(exportStem_, ".png"), tr("PNG images (*.png)"));
        if (!path.isEmpty())
            exportPng(path);
    });
}

ImageView::~ImageView() = default;

bool ImageView::canShow(const std::vector<std::int64_t>& shape, int* channelDim) {
    const int n = static_cast<int>(shape.size());
    int channel = -1;
    if (n >= 3 && (shape[n - 1] == 3 || shape[n - 1] == 4) && shape[n - 2] > 4)
        channel = n - 1;  // H,W,C
    else if (n >= 3 && (shape[n - 3] == 3 || shape[n - 3] == 4) && shape[n - 1] > 4)
        channel = n - 3;  // C,H,W
    if (channelDim)
        *channelDim = channel;
    return n >= 2;
}

void ImageView::setLeaf(tensordict::DType dtype, tensordict::LeafBytes bytes,
                        const std::vector<std::int64_t>& shape) {
    clear();
    dtype_ = dtype;
    bytes_ = std::move(bytes);
    const TensorSlice slice = imageSlice(shape, &channelDim_);
    controls_->setColourImage(channelDim_ >= 0, rawColour());
    readAheadDim_ = -1;
    selector_->setSlice(slice, channelDim_);  // renders once visible (sliceChosen)
    runNext();
}

void ImageView::clear() {
    cancelRunning();  // whatever is still on its way belongs to the old leaf
    bytes_ = {};
    result_ = {};
    detail_ = {};
    shown_.reset();
    frames_.clear();
    announce_ = needsScreen_ = false;
    canvas_->clearDetail();
    canvas_->setImage({});
    status_->clear();
}

void ImageView::setColormap(Colormap map) {
    controls_->setColormap(map);
}

void ImageView::setScale(ImageScale scale) {
    controls_->setScale(scale);
}

TensorSlice ImageView::imageSlice(const std::vector<std::int64_t>& shape, int* channelDim) {
    canShow(shape, channelDim);
    TensorSlice slice = TensorSlice::defaultFor(shape);
    const int n = static_cast<int>(shape.size());
    if (*channelDim == n - 1)
        slice.setDims(n - 3, n - 2);
    if (*channelDim >= 0 && *channelDim == n - 3)
        slice.setDims(n - 2, n - 1);
    return slice;
}

bool ImageView::isRendering() const {
    return needsScreen_ || announce_;
}

void ImageView::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    // Queued: a tab shown only for a moment (while another is chosen) costs nothing.
    QMetaObject::invokeMethod(this, &ImageView::runNext, Qt::QueuedConnection);
}

void ImageView::hideEvent(QHideEvent* event) {
    QWidget::hideEvent(event);
    cancelRunning();  // nothing for what is not shown; runNext() picks it up again
}

void ImageView::cancelRunning() {
    render_.cancel();
    running_.reset();
}

void ImageView::sliceChosen(const TensorSlice& slice) {
    // The dimension that moved is the one to read ahead along.
    if (shown_ && shown_->slice.shape == slice.shape)
        for (int d : slice.fixedDims())
            if (d != channelDim_ && slice.index[static_cast<std::size_t>(d)] !=
                                        shown_->slice.index[static_cast<std::size_t>(d)])
                readAheadDim_ = d;
    runNext();
}

ImageRequest ImageView::requestFor(const TensorSlice& slice) const {
    ImageRequest request;
    request.dtype = dtype_;
    request.bytes = bytes_;
    request.hooks = hooks_;
    request.slice = slice;
    request.channelDim = channelDim_;
    request.colormap = controls_->colormap();
    request.scale = controls_->scale();
    if (const Frame* f = exactFrame(slice)) {  // known: no sample, no refinement
        request.fixedRange = true;
        request.low = f->result.low, request.high = f->result.high;
    }
    return request;
}

const ImageView::Frame* ImageView::exactFrame(const TensorSlice& slice) const {
    const auto scale = controls_->scale();
    for (const Frame& f : frames_)
        if (f.exact && f.slice == slice && f.scale == scale)
            return &f;
    return nullptr;
}

bool ImageView::rawColour() const {
    return channelDim_ >= 0 && dtype_ == tensordict::DType::UInt8;
}

// The smallest strides at which the whole slice, as the canvas fits it,
// takes no more image pixels than device pixels: the first picture is never
// larger than the screen, and a slice that fills the view along an axis of
// few elements (a wide leaf's rows) keeps every one of them.
Strides ImageView::overviewStride() const {
    const TensorSlice slice = selector_->slice();
    const double dpr = canvas_->devicePixelRatioF();
    const QSizeF elements(double(std::max<std::int64_t>(1, slice.cols())),
                          double(std::max<std::int64_t>(1, slice.rows())));
    const ImageCanvas::Scale fit = ImageCanvas::fitScale(
        elements, QSizeF(std::max(1, canvas_->width()), std::max(1, canvas_->height())));
    const auto stride = [](double elementsPerPixel) {
        return static_cast<int>(std::max(1.0, std::ceil(elementsPerPixel - 1e-9)));
    };
    return {stride(1.0 / (fit.zoom * fit.aspect * dpr)), stride(1.0 / (fit.zoom * dpr))};
}

const ImageView::Frame* ImageView::cachedFrame(const TensorSlice& slice, Strides stride) const {
    const auto colormap = controls_->colormap();
    const auto scale = controls_->scale();
    for (const Frame& f : frames_)
        if (f.slice == slice && f.stride == stride && f.colormap == colormap && f.scale == scale)
            return &f;
    return nullptr;
}

void ImageView::keepFrame(const ImageRequest& request, const ImageResult& result, bool exact) {
    frames_.push_front(
        {request.slice, request.colormap, request.scale, result.stride, result, exact});
    // A few frames, bounded in bytes too: a stack of large slices keeps fewer.
    constexpr std::size_t maxFrames = 8;
    constexpr qsizetype maxBytes = 48 << 20;
    qsizetype bytes = 0;
    std::size_t keep = 0;
    while (keep < frames_.size() && keep < maxFrames &&
           (keep == 0 || bytes + frames_[keep].result.image.sizeInBytes() <= maxBytes))
        bytes += frames_[keep++].result.image.sizeInBytes();
    frames_.resize(keep);
}

std::optional<ImageView::Job> ImageView::visibleJob() {
    const TensorSlice slice = selector_->slice();
    const Strides stride = overviewStride();
    const auto colormap = controls_->colormap();
    const auto scale = controls_->scale();
    const bool shownIsCurrent = shown_ && shown_->slice == slice && shown_->stride == stride &&
                                shown_->colormap == colormap && shown_->scale == scale;
    if (!shownIsCurrent) {
        if (const Frame* f = cachedFrame(slice, stride)) {  // scrubbing back and forth
            const Frame frame = *f;
            showOverview(frame);
        } else {
            Job job{JobKind::Overview, requestFor(slice)};
            job.request.stride = stride;
            return job;
        }
    }
    // Zoomed in past the whole-slice picture: the region on screen, finer.
    const QSizeF perPixel = canvas_->elementsPerDevicePixel();
    const auto strideFor = [](double elementsPerPixel) {
        return static_cast<int>(std::max(1.0, std::ceil(elementsPerPixel - 1e-9)));
    };
    const Strides detailStride{strideFor(perPixel.height()), strideFor(perPixel.width())};
    const QRectF visible = canvas_->visibleElements();
    if ((detailStride.rows >= result_.stride.rows && detailStride.cols >= result_.stride.cols) ||
        visible.isEmpty()) {
        if (!detail_.image.isNull()) {
            detail_ = {};
            canvas_->clearDetail();
        }
        return std::nullopt;
    }
    const auto covers = [&](const ImageRequest& r) {
        return r.slice == slice && r.stride == detailStride && r.colormap == colormap &&
               r.scale == scale && r.low == result_.low && r.high == result_.high &&
               double(r.left) <= visible.left() && double(r.top) <= visible.top() &&
               double(r.left + r.width) >= visible.right() &&
               double(r.top + r.height) >= visible.bottom();
    };
    if (!detail_.image.isNull() && covers(detailRequest_))
        return std::nullopt;
    if (running_ && running_->kind == JobKind::Detail && covers(running_->request))
        return running_;
    if (!detail_.image.isNull() && !(detailRequest_.slice == slice)) {
        detail_ = {};  // another frame: its detail would mislead
        canvas_->clearDetail();
    }
    // The visible region with a margin of a quarter screen on each side, so
    // that a short pan needs nothing new; aligned to the stride.
    const QRectF region =
        visible
            .adjusted(-visible.width() / 4, -visible.height() / 4, visible.width() / 4,
                      visible.height() / 4)
            .intersected(QRectF(0, 0, double(slice.cols()), double(slice.rows())));
    Job job{JobKind::Detail, requestFor(slice)};
    ImageRequest& r = job.request;
    r.stride = detailStride;
    r.left = static_cast<std::int64_t>(std::floor(region.left() / detailStride.cols)) *
             detailStride.cols;
    r.top =
        static_cast<std::int64_t>(std::floor(region.top() / detailStride.rows)) * detailStride.rows;
    r.width = static_cast<std::int64_t>(std::ceil(region.right())) - r.left;
    r.height = static_cast<std::int64_t>(std::ceil(region.bottom())) - r.top;
    r.fixedRange = true;  // the whole slice's range: the detail matches the picture under it
    r.low = result_.low, r.high = result_.high;
    return job;
}

// Called when the screen has all it needs: the shown slice's exact range, unless known.
std::optional<ImageView::Job> ImageView::rangeJob() const {
    if (!shown_ || shown_->exact || rawColour())
        return std::nullopt;
    // A slice of a remote leaf, or a large one of a compressed leaf, keeps
    // its sample's range: the exact one would fetch or inflate all of it.
    const TensorSlice::Span all = shown_->slice.span(0, -1, channelDim_);
    if (bytes_.pages &&
        (bytes_.pages->fetches() ||
         std::uint64_t(all.end - all.first) * tensordict::itemSize(dtype_) > kExactRangeReadCap))
        return std::nullopt;
    Job job{JobKind::Range, requestFor(shown_->slice)};
    job.request.stride = shown_->stride;  // the overview to redraw if the sample missed
    job.request.fixedRange = false;
    return job;
}

std::optional<ImageView::Job> ImageView::readAheadJob() const {
    const TensorSlice slice = selector_->slice();
    int dim = readAheadDim_;
    if (dim < 0)
        for (int d : slice.fixedDims())
            if (d != channelDim_ && slice.shape[static_cast<std::size_t>(d)] > 1) {
                dim = d;
                break;
            }
    if (dim < 0)
        return std::nullopt;
    const auto u = static_cast<std::size_t>(dim);
    const Strides stride = overviewStride();
    for (int delta : {1, -1, 2, -2}) {  // the next frames first: scrubbing goes on
        TensorSlice next = slice;
        next.index[u] += delta;
        if (next.index[u] < 0 || next.index[u] >= slice.shape[u] || cachedFrame(next, stride))
            continue;
        Job job{JobKind::ReadAhead, requestFor(next)};
        job.request.stride = stride;
        return job;
    }
    return std::nullopt;
}

void ImageView::runNext() {
    if (!bytes_.data || !isVisible() || canvas_->width() <= 0)
        return;
    std::optional<Job> job = visibleJob();
    needsScreen_ = job.has_value();
    if (!job) {
        if (announce_) {
            announce_ = false;
            updateStatus();
            Q_EMIT rendered();
        }
        job = rangeJob();  // before reading ahead: it changes what is on screen
        if (!job)
            job = readAheadJob();
    }
    if (running_) {
        // The running job goes on if it draws what is needed; else it makes way.
        const ImageRequest &a = job ? job->request : ImageRequest{}, &b = running_->request;
        // A frame read ahead is the frame needed now when the slider got there first.
        const auto group = [](JobKind k) {
            return k == JobKind::ReadAhead ? JobKind::Overview : k;
        };
        const bool same = job && group(job->kind) == group(running_->kind) && a.slice == b.slice &&
                          a.stride == b.stride && a.colormap == b.colormap && a.scale == b.scale &&
                          a.left == b.left && a.top == b.top && a.width == b.width &&
                          a.height == b.height;
        if (same)
            return;
        cancelRunning();
    }
    if (job)
        start(*job);
}

void ImageView::start(Job job) {
    running_ = job;
    const auto finished = [this, job](const ImageResult& result) { jobFinished(job, result); };
    if (job.kind != JobKind::Range) {
        render_.start(
            [request = job.request](const tensordict::CancelToken& cancel) {
                return renderImage(request, &cancel);
            },
            finished);
        return;
    }
    // The exact range; the overview again with it only if the sample's differs.
    render_.start(
        [request = job.request,
         sampled = std::pair(result_.low, result_.high)](const tensordict::CancelToken& cancel) {
            const RangeResult range = sliceRange(request, &cancel);
            ImageResult out;
            out.low = range.low, out.high = range.high;
            out.sourceChanged = range.sourceChanged;
            out.cancelled = range.cancelled;
            if (out.sourceChanged || out.cancelled || std::pair(out.low, out.high) == sampled)
                return out;
            ImageRequest redraw = request;
            redraw.fixedRange = true;
            redraw.low = range.low, redraw.high = range.high;
            return renderImage(redraw, &cancel);
        },
        finished);
}

void ImageView::jobFinished(const Job& job, const ImageResult& result) {
    running_.reset();
    if (result.sourceChanged) {
        Q_EMIT sourceChanged();
        return;
    }
    // A whole slice drawn at stride 1 saw every element: its own range is exact.
    const bool exactAsDrawn = job.request.fixedRange || result.stride.isOne() || rawColour();
    switch (job.kind) {
        case JobKind::Overview:
            keepFrame(job.request, result, exactAsDrawn);
            if (job.request.slice == selector_->slice())
                showOverview(frames_.front());  // with the colours it was drawn in
            break;
        case JobKind::ReadAhead:
            keepFrame(job.request, result, exactAsDrawn);
            break;
        case JobKind::Range:
            rangeFinished(job, result);
            break;
        case JobKind::Detail:
            if (job.request.slice == selector_->slice()) {
                detail_ = result;
                detailRequest_ = job.request;
                canvas_->setDetail(result.image, result.top, result.left, result.stride);
                announce_ = true;
            }
            break;
    }
    runNext();
}

void ImageView::rangeFinished(const Job& job, const ImageResult& result) {
    const ImageRequest& r = job.request;
    // The cached frames of this slice now know its range: those drawn with
    // another (a sample's) would show different colours, so they go.
    const auto ofSlice = [&](const Frame& f) { return f.slice == r.slice && f.scale == r.scale; };
    const auto right = [&](const Frame& f) {
        return f.result.low == result.low && f.result.high == result.high;
    };
    frames_.erase(std::remove_if(frames_.begin(), frames_.end(),
                                 [&](const Frame& f) { return ofSlice(f) && !right(f); }),
                  frames_.end());
    for (Frame& f : frames_)
        if (ofSlice(f))
            f.exact = true;
    const bool shownIsJobs = shown_ && shown_->slice == r.slice && shown_->scale == r.scale &&
                             shown_->colormap == r.colormap && shown_->stride == r.stride;
    if (result.image.isNull()) {  // the sample had it right
        if (shownIsJobs && result_.low == result.low && result_.high == result.high) {
            shown_->exact = true;
            updateStatus();
        }
        return;
    }
    keepFrame(r, result, true);
    if (shownIsJobs)
        showOverview(frames_.front());
}

void ImageView::showOverview(const Frame& frame) {
    result_ = frame.result;
    shown_ = Frame{frame.slice, frame.colormap, frame.scale, frame.result.stride, {}, frame.exact};
    canvas_->setImage(result_.image, result_.stride);
    announce_ = true;
    updateStatus();
}

void ImageView::updateStatus() {
    // The key to the colours: one channel through the colormap (colour images show their own).
    colorBar_->setVisible(channelDim_ < 0 && !result_.image.isNull());
    colorBar_->setRange(controls_->colormap(), result_.low, result_.high);
    // NaN's colour only when the picture shows one.
    colorBar_->setNanShown(result_.hasNan || (!detail_.image.isNull() && detail_.hasNan));
    const TensorSlice slice = selector_->slice();
    const Strides stride = detail_.image.isNull() ? result_.stride : detail_.stride;
    status_->setText(
        tr("%1 × %2%3 · colour range %4 … %5 %6")
            .arg(slice.rows())
            .arg(slice.cols())
            .arg(stride.isOne()
                     ? QString()
                     : tr(" · a pixel per %1 × %2 elements").arg(stride.rows).arg(stride.cols))
            .arg(result_.low, 0, 'g', 6)
            .arg(result_.high, 0, 'g', 6)
            .arg(shown_ && shown_->exact ? tr("(exact)") : tr("(sampled)")));
}

void ImageView::exportPng(const QString& path) {
    if (!bytes_.data)
        return Q_EMIT exported(path, path + ": " + tr("there is no image to export"));
    ImageRequest request = requestFor(selector_->slice());
    request.fixedRange = shown_.has_value();  // as on screen
    request.low = result_.low, request.high = result_.high;
    pngExports_.start(
        [request, path](const tensordict::CancelToken&) {
            return slice_export::writePng(path, renderImage(request).image);
        },
        [this, path](const JobOutcome& outcome) { Q_EMIT exported(path, outcome.text()); });
}

void ImageView::showHover(qint64 col, qint64 row) {
    TensorSlice s = selector_->slice();
    if (col < 0 || !bytes_.data || !shown_ || row >= s.rows() || col >= s.cols()) {
        status_->setToolTip({});
        return;
    }
    QStringList values;
    const int channels =
        channelDim_ >= 0 ? static_cast<int>(s.shape[static_cast<std::size_t>(channelDim_)]) : 1;
    for (int c = 0; c < channels; ++c) {
        if (channelDim_ >= 0)
            s.index[static_cast<std::size_t>(channelDim_)] = c;
        std::byte element[16];
        const std::size_t item = tensordict::itemSize(dtype_);
        const std::int64_t flat = s.elementIndex(row, col);
        // Only while its page is held: a picture of every nth row of a leaf
        // read page by page never filled the rows in between.
        const auto held = holdIfFilled(bytes_, dtype_, TensorSlice::Span{flat, flat + 1});
        if (!held) {
            status_->setText(tr("[%1, %2]").arg(row).arg(col));
            return;
        }
        if (!tensordict::tryGuardedCopy(
                element, bytes_.data.get() + static_cast<std::size_t>(flat) * item, item)) {
            Q_EMIT sourceChanged();
            return;
        }
        values << QString::fromStdString(tensordict::formatElement(element, dtype_));
    }
    status_->setText(tr("[%1, %2] = %3").arg(row).arg(col).arg(values.join(", ")));
}

QString ImageView::hoverText() const {
    return status_->text();
}

QString ImageView::statusText() const {
    return status_->text();
}
