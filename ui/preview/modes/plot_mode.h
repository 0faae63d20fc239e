#pragma once

#include "leaf_view.h"

class PlotView;

// A slice as lines (1-D and more): one leaf, A and B overlaid, or several
// leaves of one length together with a legend.
class PlotLeafMode : public LeafMode {
    Q_OBJECT

public:
    explicit PlotLeafMode(QWidget* parent);
    QWidget* widget() override;
    bool canShow(const std::vector<std::int64_t>& shape, std::int64_t numel,
                 bool pair) const override;
    void setLeaves(const ShownLeaves& leaves) override;
    void clear() override;
    void activate() override;
    bool isDrawing() const override { return stale_ || drawing_; }
    SliceSelector* sliceSelector() const override;
    void setSlicePosition(const SlicePosition& position) override;
    bool showSeries(const std::vector<LeafSide>& leaves) override;

    PlotView* view() const { return view_; }

private:
    PlotView* view_;
    ShownLeaves leaves_;
    bool stale_ = false;      // the leaf is read when the tab shows
    SlicePosition position_;  // the leaf's, for when it is
    bool drawing_ = false;
};
