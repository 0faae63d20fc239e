#pragma once

#include <QWidget>
#include <memory>
#include <utility>

#include "compare_tree.h"
#include "job_tracker.h"
#include "leaf_view.h"

class QLabel;
class QStackedWidget;
class QTextBrowser;
class CompareImageView;
class PlotView;
class SliceSelector;
class StatisticsView;
class TableLeafMode;
class TensorTableModel;
class TensorTableView;

// The right side of a comparison: the selected key of both tensordicts.
// Two tensor leaves of the same shape show in the preview's views, taking
// the other leaf too: a table highlighting the differing cells (A, B or
// A - B, and Next difference), A, B and A - B as images, both series in one
// plot, and the statistics of A - B. Anything else (keys on one side, other
// shapes or dtypes, non-tensors, collections) is described side by side.
// Leaf bytes are mapped (or inflated) on a worker thread first.
class ComparePanel : public QWidget, public BuiltinLeafModes {
    Q_OBJECT

public:
    explicit ComparePanel(QWidget* parent = nullptr);
    ~ComparePanel() override;

    // Shows `item` (nullptr: nothing). `a` and `b` keep its nodes alive;
    // the item must outlive its showing (until clear() or the next item).
    void showItem(std::shared_ptr<const tensordict::TensorDict> a,
                  std::shared_ptr<const tensordict::TensorDict> b, const CompareTree::Item* item,
                  const tensordict::Tolerance& tolerance);
    // The shown item's comparison arrived or changed: says so, keeps the views.
    void updateItem();
    void clear() { showItem(nullptr, nullptr, nullptr, {}); }
    const CompareTree::Item* item() const { return item_; }
    bool isLoading() const { return read_.isBusy(); }
    // Both leaves are in the views (else a description or a message shows).
    bool showsValues() const;
    Mode mode() const;
    void setMode(Mode mode);
    QString message() const;
    QString description() const;  // the side-by-side description, as plain text
    QString summary() const;      // the line above the views, as plain text
    QTextBrowser* descriptionView() const { return description_; }

    // Moves the table to the next element that differs after the current
    // cell (from the first without one), wrapping at the end. The search
    // runs on a worker; differenceShown() or noDifference() follows.
    void nextDifference();
    bool isSearching() const;

    LeafView* leafView() const { return leafView_; }
    // The built-in modes' views.
    TensorTableModel* tableModel() const;
    TensorTableView* tableView() const;
    SliceSelector* tableSlice() const;
    CompareImageView* imageView() const;
    PlotView* plotView() const;
    StatisticsView* statisticsView() const;

Q_SIGNALS:
    void leafReady();
    // Next difference moved the table to element `flatIndex` (wrapped: past the end).
    void differenceShown(qint64 flatIndex, bool wrapped);
    void noDifference();

private:
    struct Read {
        tensordict::LeafBytes a, b;
        QString error;
    };
    void showMessage(const QString& text);
    void showDescription();
    void leavesLoaded(Read read);
    void sourceChanged();
    QString summaryHtml() const;
    QString descriptionHtml() const;

    std::shared_ptr<const tensordict::TensorDict> a_, b_;
    const CompareTree::Item* item_ = nullptr;
    tensordict::Tolerance tolerance_;
    QLabel* summary_;
    QStackedWidget* pages_;
    QLabel* message_;
    QTextBrowser* description_;
    LeafView* leafView_;
    TableLeafMode* table_;
    JobTracker<Read> read_{this};
};
