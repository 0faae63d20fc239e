#pragma once

#include "leaf_view.h"

class QLabel;
class StatisticsView;

// Count, min, max, mean, std and a histogram of the leaf or of the table's
// slice, computed on a worker when the tab shows; of A - B for two leaves.
class StatisticsLeafMode : public LeafMode {
    Q_OBJECT

public:
    explicit StatisticsLeafMode(QWidget* parent);
    QWidget* widget() override { return page_; }
    bool canShow(const std::vector<std::int64_t>&, std::int64_t, bool) const override {
        return true;
    }
    void setLeaves(const ShownLeaves& leaves) override;
    void clear() override;
    void activate() override;
    void deactivate() override;
    bool isDrawing() const override;
    void setCurrentSlice(const TensorSlice& slice) override;

    StatisticsView* view() const { return view_; }

private:
    QWidget* page_;
    QLabel* pairCaption_;
    StatisticsView* view_;
    bool stale_ = false;
};
