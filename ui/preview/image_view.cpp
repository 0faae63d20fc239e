#include "image_view.h"

#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPushButton>
#include <QVBoxLayout>
#include <QWheelEvent>
#include <QtConcurrent/QtConcurrentRun>

#include "slice_selector.h"
#include "tensordict/element.h"
#include "tensordict/guarded_read.h"

ImageCanvas::ImageCanvas(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setMinimumSize(200, 150);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void ImageCanvas::setImage(const QImage& image) {
    const bool sameSize = image.size() == image_.size();
    image_ = image;
    if (!sameSize || fitted_)
        fit();
    update();
}

void ImageCanvas::fit() {
    fitted_ = true;
    if (image_.isNull())
        return;
    zoom_ = std::min(double(width()) / image_.width(), double(height()) / image_.height());
    if (zoom_ > 1)
        zoom_ = std::floor(zoom_);  // crisp pixels when enlarging
    offset_ =
        QPointF((width() - image_.width() * zoom_) / 2, (height() - image_.height() * zoom_) / 2);
    update();
}

void ImageCanvas::resizeEvent(QResizeEvent*) {
    if (fitted_)
        fit();
}

void ImageCanvas::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.fillRect(rect(), palette().color(QPalette::Mid));
    if (image_.isNull())
        return;
    p.setRenderHint(QPainter::SmoothPixmapTransform, zoom_ < 1);
    p.drawImage(QRectF(offset_, QSizeF(image_.width() * zoom_, image_.height() * zoom_)), image_);
}

void ImageCanvas::wheelEvent(QWheelEvent* event) {
    if (image_.isNull())
        return;
    const double factor = std::pow(1.25, event->angleDelta().y() / 120.0);
    const QPointF at = event->position();
    const QPointF imagePoint = (at - offset_) / zoom_;
    zoom_ = std::clamp(zoom_ * factor, 0.01, 256.0);
    offset_ = at - imagePoint * zoom_;
    fitted_ = false;
    update();
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
    }
    const QPointF p = (event->position() - offset_) / zoom_;
    const int x = static_cast<int>(std::floor(p.x())), y = static_cast<int>(std::floor(p.y()));
    if (x >= 0 && y >= 0 && x < image_.width() && y < image_.height())
        Q_EMIT hovered(x, y);
    else
        Q_EMIT hovered(-1, -1);
}

ImageView::ImageView(QWidget* parent)
    : QWidget(parent),
      selector_(new SliceSelector(SliceSelector::Mode::Image)),
      colormap_(new QComboBox),
      scale_(new QComboBox),
      canvas_(new ImageCanvas),
      status_(new QLabel) {
    colormap_->addItems(colormapNames());
    scale_->addItem(tr("min–max"));
    scale_->addItem(tr("1–99 percentile"));
    auto* fit = new QPushButton(tr("Fit"));
    auto* exportButton = new QPushButton(tr("Export PNG…"));
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Colormap:")));
    bar->addWidget(colormap_);
    bar->addWidget(new QLabel(tr("Scale:")));
    bar->addWidget(scale_);
    bar->addWidget(fit);
    bar->addStretch();
    bar->addWidget(exportButton);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(selector_);
    layout->addWidget(canvas_, 1);
    layout->addWidget(status_);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    connect(colormap_, &QComboBox::currentIndexChanged, this, &ImageView::render);
    connect(scale_, &QComboBox::currentIndexChanged, this, &ImageView::render);
    connect(selector_, &SliceSelector::sliceChanged, this, &ImageView::render);
    connect(fit, &QPushButton::clicked, canvas_, &ImageCanvas::fit);
    connect(canvas_, &ImageCanvas::hovered, this, &ImageView::showHover);
    connect(exportButton, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Export image"), "slice.png",
                                                          tr("PNG images (*.png)"));
        if (!path.isEmpty())
            exportPng(path);
    });
    connect(&watcher_, &QFutureWatcherBase::finished, this, [this] {
        if (watcher_.isCanceled())
            return;
        if (watcher_.result().sourceChanged) {
            Q_EMIT sourceChanged();
            return;
        }
        result_ = watcher_.result();
        canvas_->setImage(result_.image);
        status_->setText(tr("%1 × %2 px%3 · colour range %4 … %5")
                             .arg(result_.image.width())
                             .arg(result_.image.height())
                             .arg(result_.stride > 1
                                      ? tr(" (every %1th row and column)").arg(result_.stride)
                                      : QString())
                             .arg(result_.low, 0, 'g', 6)
                             .arg(result_.high, 0, 'g', 6));
        Q_EMIT rendered();
        if (pending_)
            render();
    });
}

ImageView::~ImageView() {
    if (cancel_)
        *cancel_ = true;
    watcher_.waitForFinished();
}

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
    dtype_ = dtype;
    bytes_ = std::move(bytes);
    canShow(shape, &channelDim_);
    TensorSlice slice = TensorSlice::defaultFor(shape);
    const int n = static_cast<int>(shape.size());
    if (channelDim_ == n - 1)
        slice.setDims(n - 3, n - 2);
    if (channelDim_ >= 0 && channelDim_ == n - 3)
        slice.setDims(n - 2, n - 1);
    selector_->setSlice(slice, channelDim_);
    render();
}

void ImageView::clear() {
    bytes_ = {};
    result_ = {};
    canvas_->setImage({});
    status_->clear();
}

void ImageView::setColormap(Colormap map) {
    colormap_->setCurrentIndex(static_cast<int>(map));
}

void ImageView::render() {
    if (!bytes_.data)
        return;
    if (watcher_.isRunning()) {  // one render at a time; the newest request wins
        pending_ = true;
        if (cancel_)
            *cancel_ = true;
        return;
    }
    pending_ = false;
    ImageRequest request;
    request.dtype = dtype_;
    request.bytes = bytes_;
    request.slice = selector_->slice();
    request.channelDim = channelDim_;
    request.colormap = static_cast<Colormap>(colormap_->currentIndex());
    request.scale = static_cast<ImageScale>(scale_->currentIndex());
    renderedSlice_ = request.slice;
    cancel_ = std::make_shared<std::atomic<bool>>(false);
    watcher_.setFuture(QtConcurrent::run(
        [request, cancel = cancel_] { return renderImage(request, cancel.get()); }));
}

void ImageView::showHover(int x, int y) {
    if (x < 0 || !bytes_.data) {
        status_->setToolTip({});
        return;
    }
    TensorSlice s = renderedSlice_;
    const std::int64_t row = std::int64_t(y) * result_.stride,
                       col = std::int64_t(x) * result_.stride;
    QStringList values;
    const int channels =
        channelDim_ >= 0 ? static_cast<int>(s.shape[static_cast<std::size_t>(channelDim_)]) : 1;
    for (int c = 0; c < channels; ++c) {
        if (channelDim_ >= 0)
            s.index[static_cast<std::size_t>(channelDim_)] = c;
        std::byte element[16];
        const std::size_t item = tensordict::itemSize(dtype_);
        if (!tensordict::tryGuardedCopy(
                element,
                bytes_.data.get() + static_cast<std::size_t>(s.elementIndex(row, col)) * item,
                item)) {
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
