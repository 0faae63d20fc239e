#pragma once

#include "leaf_view.h"

class CompareImageView;
class ImageView;
class QStackedWidget;

// A slice as an image (2-D and more; colour channels of 3 or 4). One leaf:
// zoom, hover and live scrubbing (ImageView). Two leaves: A, B and A - B
// side by side (CompareImageView).
class ImageLeafMode : public LeafMode {
    Q_OBJECT

public:
    explicit ImageLeafMode(QWidget* parent);
    QWidget* widget() override;
    bool canShow(const std::vector<std::int64_t>& shape, std::int64_t numel,
                 bool pair) const override;
    // Above the table for colour images (3 or 4 channels, last or third from last).
    int priority(const std::vector<std::int64_t>& shape, bool pair) const override;
    void setLeaves(const ShownLeaves& leaves) override;
    void clear() override;
    bool isDrawing() const override;
    SliceSelector* sliceSelector() const override;
    void setSlicePosition(const SlicePosition& position) override;

    ImageView* imageView() const { return single_; }
    CompareImageView* compareView() const { return pair_; }

private:
    QStackedWidget* stack_;
    ImageView* single_;
    CompareImageView* pair_;
};
