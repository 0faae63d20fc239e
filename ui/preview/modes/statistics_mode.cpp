#include "statistics_mode.h"

#include <QLabel>
#include <QVBoxLayout>

#include "statistics_view.h"

StatisticsLeafMode::StatisticsLeafMode(QWidget* parent)
    : page_(new QWidget(parent)),
      pairCaption_(new QLabel(tr("Statistics of the difference A − B:"))),
      view_(new StatisticsView) {
    auto* layout = new QVBoxLayout(page_);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(pairCaption_);
    layout->addWidget(view_, 1);
    pairCaption_->setVisible(false);
    connect(view_, &StatisticsView::finished, this, &LeafMode::drawn);
    connect(view_, &StatisticsView::sourceChanged, this, &LeafMode::sourceChanged);
}

void StatisticsLeafMode::setLeaves(const ShownLeaves& leaves) {
    view_->setLeaf(leaves.a.dtype(), leaves.a.bytes, leaves.a.numel());
    view_->setCurrentSlice(TensorSlice::defaultFor(leaves.a.shape()));  // the table's first
    if (leaves.isPair())
        view_->setOther(leaves.b->dtype(), leaves.b->bytes);
    pairCaption_->setVisible(leaves.isPair());
    stale_ = true;
}

void StatisticsLeafMode::clear() {
    stale_ = false;
    view_->clear();
}

void StatisticsLeafMode::activate() {
    if (!stale_)
        return;
    stale_ = false;
    view_->compute();
}

void StatisticsLeafMode::deactivate() {
    if (view_->isRunning()) {
        view_->cancel();  // nothing for a hidden tab; computed again when shown
        stale_ = true;
    }
}

bool StatisticsLeafMode::isDrawing() const {
    return stale_ || view_->isRunning();
}

void StatisticsLeafMode::setCurrentSlice(const TensorSlice& slice) {
    view_->setCurrentSlice(slice);
}
