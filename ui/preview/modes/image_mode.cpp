#include "image_mode.h"

#include <QStackedWidget>

#include "compare_image_view.h"
#include "image_view.h"
#include "node_text.h"
#include "slice_selector.h"

ImageLeafMode::ImageLeafMode(QWidget* parent)
    : stack_(new QStackedWidget(parent)), single_(new ImageView), pair_(new CompareImageView) {
    stack_->addWidget(single_);
    stack_->addWidget(pair_);
    connect(single_, &ImageView::rendered, this, &LeafMode::drawn);
    connect(pair_, &CompareImageView::rendered, this, &LeafMode::drawn);
    connect(single_, &ImageView::sourceChanged, this, &LeafMode::sourceChanged);
    connect(pair_, &CompareImageView::sourceChanged, this, &LeafMode::sourceChanged);
    for (SliceSelector* selector : {single_->sliceSelector(), pair_->sliceSelector()})
        connect(selector, &SliceSelector::sliceChanged, this,
                [this, selector] { Q_EMIT slicePositionChanged(selector->position()); });
}

void ImageLeafMode::setSlicePosition(const SlicePosition& position) {
    sliceSelector()->setPosition(position);
}

QWidget* ImageLeafMode::widget() {
    return stack_;
}

bool ImageLeafMode::canShow(const std::vector<std::int64_t>& shape, std::int64_t numel,
                            bool) const {
    return shape.size() >= 2 && numel > 0;
}

int ImageLeafMode::priority(const std::vector<std::int64_t>& shape, bool) const {
    int channel = -1;
    ImageView::canShow(shape, &channel);
    return channel >= 0 ? 2 : 0;
}

void ImageLeafMode::setLeaves(const ShownLeaves& leaves) {
    if (leaves.isPair()) {
        stack_->setCurrentWidget(pair_);
        pair_->setLeaves(leaves.a.dtype(), leaves.a.bytes, leaves.b->dtype(), leaves.b->bytes,
                         leaves.a.shape());
    } else {
        stack_->setCurrentWidget(single_);
        single_->setExportStem(nodetext::exportStem(leaves.a.node));
        single_->setLeaf(leaves.a.dtype(), leaves.a.bytes, leaves.a.shape());
    }
}

void ImageLeafMode::clear() {
    single_->clear();
    pair_->clear();
}

bool ImageLeafMode::isDrawing() const {
    // The single view draws once it is on screen; the pair starts at once.
    if (stack_->currentWidget() == pair_)
        return pair_->isRendering();
    return single_->image().isNull() || single_->isRendering();
}

SliceSelector* ImageLeafMode::sliceSelector() const {
    return stack_->currentWidget() == pair_ ? pair_->sliceSelector() : single_->sliceSelector();
}
