#pragma once

#include "job_tracker.h"
#include "leaf_view.h"
#include "slice_export.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QSpinBox;
class QToolButton;
class QWidget;
class TensorTableModel;
class TensorTableView;

// The leaf's values as a table over one slice, with the float format and
// Go to row. One leaf: Copy and export. Two leaves: the differing cells
// highlighted, the cells showing A, B or A - B, and Next difference (F3).
class TableLeafMode : public LeafMode {
    Q_OBJECT

public:
    explicit TableLeafMode(QWidget* parent);
    ~TableLeafMode() override;

    QWidget* widget() override { return page_; }
    bool canShow(const std::vector<std::int64_t>&, std::int64_t, bool) const override {
        return true;
    }
    int priority(const std::vector<std::int64_t>&, bool) const override { return 1; }
    void setLeaves(const ShownLeaves& leaves) override;
    // Makes a row of `leaf` the current cell's: now if it is shown, else once it is.
    void showRow(const tensordict::Node* leaf, std::int64_t row);
    void clear() override;
    SliceSelector* sliceSelector() const override { return slice_; }
    bool isDrawing() const override;
    void setSlicePosition(const SlicePosition& position) override;

    TensorTableModel* model() const { return model_; }
    TensorTableView* view() const { return view_; }
    QLineEdit* goToRowField() const { return goTo_; }
    QComboBox* floatFormatBox() const { return format_; }
    // Two leaves: the current cell's index, A, B and A − B.
    QLabel* currentCellLabel() const { return cell_; }
    // Two leaves: moves to the next element that differs after the current
    // cell (from the first without one), wrapping at the end, on a worker;
    // differenceShown() or noDifference() follows.
    void nextDifference();
    bool isSearching() const { return search_.isBusy(); }
    // Two leaves: how many elements differ, once the comparison knows.
    void setDifferingCount(std::optional<std::uint64_t> differing);

Q_SIGNALS:
    void exportRequested(SliceExportJob::Format format);
    void differenceShown(qint64 flatIndex, bool wrapped);
    void noDifference();

private:
    struct Search {
        std::int64_t flat = -1;
        bool wrapped = false;
        QString error;
    };
    void applyFormat();
    void showCurrentCell();
    void showElement(std::int64_t flat);
    void searchDone(const Search& s);

    QWidget* page_;
    TensorTableModel* model_;
    TensorTableView* view_;
    SliceSelector* slice_;
    QWidget* leafBar_;
    QComboBox* format_;
    QSpinBox* precision_;
    QLineEdit* goTo_;
    // A row asked for by showRow() before its leaf arrived.
    const tensordict::Node* rowLeaf_ = nullptr;
    std::int64_t pendingRow_ = -1;
    QWidget* pairBar_;
    QWidget* exports_;
    QComboBox* shown_;
    QToolButton* next_;
    QLabel* cell_;
    ShownLeaves leaves_;
    std::optional<std::uint64_t> differing_;
    JobTracker<Search> search_{this};
};
