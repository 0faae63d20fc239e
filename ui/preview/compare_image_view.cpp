#include "compare_image_view.h"

#include <QGridLayout>
#include <QLabel>
#include <QVBoxLayout>

#include "color_bar.h"
#include "image_view.h"
#include "slice_selector.h"
#include "tensordict/element.h"
#include "tensordict/guarded_read.h"

CompareImageView::CompareImageView(QWidget* parent)
    : QWidget(parent),
      selector_(new SliceSelector(SliceSelector::Mode::Image)),
      controls_(new ImageControls(tr("A and B colormap:"))),
      sharedBar_(new ColorBar),
      differenceBar_(new ColorBar),
      status_(new QLabel) {
    controls_->setColormap(Colormap::Viridis);

    auto* grid = new QGridLayout;
    const QString names[3] = {tr("A"), tr("B"), tr("A − B")};
    for (int i = 0; i < 3; ++i) {
        captions_[i] = new QLabel(names[i]);
        captions_[i]->setAlignment(Qt::AlignCenter);
        canvases_[i] = new ImageCanvas;
        canvases_[i]->setMinimumSize(120, 100);  // three fit side by side
        grid->addWidget(captions_[i], 0, i);
        grid->addWidget(canvases_[i], 1, i);
        grid->setColumnStretch(i, 1);
        connect(controls_, &ImageControls::fitRequested, canvases_[i], &ImageCanvas::fit);
        connect(canvases_[i], &ImageCanvas::hovered, this, &CompareImageView::showHover);
    }
    grid->setRowStretch(1, 1);
    // The keys to the colours: A and B's under the two, A − B's under it.
    grid->addWidget(sharedBar_, 2, 0, 1, 2);
    grid->addWidget(differenceBar_, 2, 2);
    sharedBar_->hide();
    differenceBar_->hide();

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(controls_);
    layout->addWidget(selector_);
    layout->addLayout(grid, 1);
    layout->addWidget(status_);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    connect(controls_, &ImageControls::changed, this, &CompareImageView::render);
    connect(selector_, &SliceSelector::sliceChanged, this, &CompareImageView::render);
}

void CompareImageView::showImages(const ComparisonImages& result) {
    if (result.sourceChanged) {
        Q_EMIT sourceChanged();
        return;
    }
    result_ = result;
    canvases_[0]->setImage(result_.a.image, result_.a.stride);
    canvases_[1]->setImage(result_.b.image, result_.b.stride);
    canvases_[2]->setImage(result_.difference.image, result_.difference.stride);
    const bool oneChannel = channelDim_ < 0 && !result_.a.image.isNull();
    const auto category = [](tensordict::DType d) { return tensordict::dtypeInfo(d).category; };
    const bool floats = category(aType_) == tensordict::DTypeCategory::Float ||
                        category(bType_) == tensordict::DTypeCategory::Float ||
                        category(aType_) == tensordict::DTypeCategory::Complex ||
                        category(bType_) == tensordict::DTypeCategory::Complex;
    sharedBar_->setVisible(oneChannel);
    sharedBar_->setRange(controls_->colormap(), result_.a.low, result_.a.high);
    sharedBar_->setNanShown(floats);
    differenceBar_->setVisible(!result_.difference.image.isNull());
    differenceBar_->setRange(Colormap::BlueWhiteRed, -result_.maxAbsDiff, result_.maxAbsDiff);
    differenceBar_->setNanShown(floats);
    captions_[0]->setText(tr("A"));
    captions_[1]->setText(tr("B"));
    captions_[2]->setText(
        result_.maxAbsDiff > 0
            ? tr("A − B (blue: A < B, red: A > B) ±%1").arg(result_.maxAbsDiff, 0, 'g', 4)
            : tr("A − B: equal (white)"));
    status_->setText(tr("%1 × %2 px%3 · A and B colour range %4 … %5")
                         .arg(result_.a.image.width())
                         .arg(result_.a.image.height())
                         .arg(strideText(result_.a.stride))
                         .arg(result_.a.low, 0, 'g', 6)
                         .arg(result_.a.high, 0, 'g', 6));
    Q_EMIT rendered();
}

// Which rows and columns a sampled picture shows: " (every 2nd row, every
// 21st column)".
QString CompareImageView::strideText(Strides stride) {
    const auto every = [](int n, const QString& what) {
        if (n <= 1)
            return tr("every %1").arg(what);
        const int lastTwo = n % 100, last = n % 10;
        const char* suffix = lastTwo >= 11 && lastTwo <= 13 ? "th"
                             : last == 1                    ? "st"
                             : last == 2                    ? "nd"
                             : last == 3                    ? "rd"
                                                            : "th";
        return tr("every %1%2 %3").arg(n).arg(suffix).arg(what);
    };
    if (stride.isOne())
        return {};
    return " (" + every(stride.rows, tr("row")) + ", " + every(stride.cols, tr("column")) + ")";
}

void CompareImageView::setLeaves(tensordict::DType aType, tensordict::LeafBytes a,
                                 tensordict::DType bType, tensordict::LeafBytes b,
                                 const std::vector<std::int64_t>& shape) {
    aType_ = aType, bType_ = bType;
    a_ = std::move(a), b_ = std::move(b);
    // The default slice and channels of ImageView, for both leaves.
    const TensorSlice slice = ImageView::imageSlice(shape, &channelDim_);
    controls_->setColourImage(channelDim_ >= 0, false);  // A and B share one scaled range
    selector_->setSlice(slice, channelDim_);
    render();
}

void CompareImageView::clear() {
    render_.cancel();
    a_ = {}, b_ = {};
    result_ = {};
    for (ImageCanvas* c : canvases_)
        c->setImage({});
    sharedBar_->hide();
    differenceBar_->hide();
    status_->clear();
}

void CompareImageView::render() {
    if (!a_.data || !b_.data)
        return;
    ImageRequest a, b;
    a.dtype = aType_, a.bytes = a_;
    a.slice = selector_->slice();
    a.channelDim = channelDim_;
    a.colormap = controls_->colormap();
    a.scale = controls_->scale();
    // Each image at most as large as its canvas on screen (the view's level of detail).
    const ImageCanvas* canvas = canvases_[0];
    a.maxSide = static_cast<int>(std::clamp(
        std::max(canvas->width(), canvas->height()) * canvas->devicePixelRatioF(), 64.0, 2048.0));
    b.dtype = bType_, b.bytes = b_;
    renderedSlice_ = a.slice;
    render_.start(
        [a, b](const tensordict::CancelToken& cancel) { return renderComparison(a, b, &cancel); },
        [this](const ComparisonImages& result) { showImages(result); });
}

void CompareImageView::showHover(qint64 col, qint64 row) {
    if (col < 0 || !a_.data || !b_.data)
        return;
    TensorSlice s = renderedSlice_;
    if (row >= s.rows() || col >= s.cols())
        return;
    const int channels =
        channelDim_ >= 0 ? static_cast<int>(s.shape[static_cast<std::size_t>(channelDim_)]) : 1;
    QStringList as, bs;
    for (int c = 0; c < channels; ++c) {
        if (channelDim_ >= 0)
            s.index[static_cast<std::size_t>(channelDim_)] = c;
        const auto flat = static_cast<std::size_t>(s.elementIndex(row, col));
        std::byte ea[16], eb[16];
        // Through the guarded path: a file may have shrunk under its mapping.
        if (!tensordict::tryGuardedCopy(ea, a_.data.get() + flat * tensordict::itemSize(aType_),
                                        tensordict::itemSize(aType_)) ||
            !tensordict::tryGuardedCopy(eb, b_.data.get() + flat * tensordict::itemSize(bType_),
                                        tensordict::itemSize(bType_))) {
            Q_EMIT sourceChanged();
            return;
        }
        as << QString::fromStdString(tensordict::formatElement(ea, aType_));
        bs << QString::fromStdString(tensordict::formatElement(eb, bType_));
    }
    status_->setText(
        tr("[%1, %2]  A = %3  ·  B = %4").arg(row).arg(col).arg(as.join(", "), bs.join(", ")));
}

QString CompareImageView::hoverText() const {
    return status_->text();
}
