#include "plot_mode.h"

#include "node_text.h"
#include "plot_view.h"
#include "slice_selector.h"

PlotLeafMode::PlotLeafMode(QWidget* parent) : view_(new PlotView(parent)) {
    connect(view_, &PlotView::plotted, this, [this] {
        drawing_ = false;
        Q_EMIT drawn();
    });
    connect(view_, &PlotView::sourceChanged, this, &LeafMode::sourceChanged);
    connect(view_->sliceSelector(), &SliceSelector::sliceChanged, this,
            [this] { Q_EMIT slicePositionChanged(view_->sliceSelector()->position()); });
}

void PlotLeafMode::setSlicePosition(const SlicePosition& position) {
    // Before the tab first shows, the plot has no slice yet: kept for then.
    position_ = position;
    if (!stale_)
        view_->sliceSelector()->setPosition(position);
}

QWidget* PlotLeafMode::widget() {
    return view_;
}

bool PlotLeafMode::canShow(const std::vector<std::int64_t>& shape, std::int64_t numel, bool) const {
    return !shape.empty() && numel > 0;
}

void PlotLeafMode::setLeaves(const ShownLeaves& leaves) {
    leaves_ = leaves;
    position_.clear();
    stale_ = true;
}

void PlotLeafMode::activate() {
    if (!stale_ || !leaves_.a.node)
        return;
    stale_ = false;
    drawing_ = true;
    if (leaves_.isPair())
        view_->setOther(leaves_.b->dtype(), leaves_.b->bytes, tr("A"), tr("B"));
    view_->setLeaf(leaves_.a.dtype(), leaves_.a.bytes, leaves_.a.shape());
    view_->sliceSelector()->setPosition(position_);
}

void PlotLeafMode::clear() {
    leaves_ = {};
    position_.clear();
    stale_ = drawing_ = false;
    view_->clear();
}

SliceSelector* PlotLeafMode::sliceSelector() const {
    return view_->sliceSelector();
}

bool PlotLeafMode::showSeries(const std::vector<LeafSide>& leaves) {
    std::vector<PlotView::Series> series;
    for (const LeafSide& leaf : leaves) {
        // The legend names the path plainly: next/reward rather than ("next", "reward").
        QStringList parts;
        for (const std::string& key : leaf.node->keyPath())
            parts << nodetext::displayKey(key);
        series.push_back({parts.join('/'), leaf.dtype(), leaf.bytes});
    }
    drawing_ = true;
    view_->setSeries(std::move(series), leaves.front().numel());
    return true;
}
