#pragma once

#include <QFutureWatcher>
#include <QWidget>
#include <memory>
#include <utility>

#include "compare_tree.h"

class QComboBox;
class QLabel;
class QStackedWidget;
class QTabWidget;
class QTextBrowser;
class QToolButton;
class CompareImageView;
class PlotView;
class SliceSelector;
class StatisticsView;
class TensorTableModel;
class TensorTableView;

// The right side of a comparison: the selected key of both tensordicts.
// Two tensor leaves of the same shape show in the preview's views, taking
// the other leaf too: a table highlighting the differing cells (A, B or
// A - B, and Next difference), A, B and A - B as images, both series in one
// plot, and the statistics of A - B. Anything else (keys on one side, other
// shapes or dtypes, non-tensors, collections) is described side by side.
// Leaf bytes are mapped (or inflated) on a worker thread first.
class ComparePanel : public QWidget {
    Q_OBJECT

public:
    enum Mode { TableMode, ImageMode, PlotMode, StatisticsMode };
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
    bool isLoading() const { return watcher_.isRunning(); }
    // Both leaves are in the views (else a description or a message shows).
    bool showsValues() const;
    Mode mode() const;
    void setMode(Mode mode);
    QString message() const;
    QString description() const;  // the side-by-side description, as plain text
    QString summary() const;      // the line above the views, as plain text

    // Moves the table to the next element that differs after the current
    // cell (from the first without one), wrapping at the end. The search
    // runs on a worker; differenceShown() or noDifference() follows.
    void nextDifference();
    bool isSearching() const { return searchWatcher_.isRunning(); }

    TensorTableModel* tableModel() const { return tableModel_; }
    TensorTableView* tableView() const { return tableView_; }
    SliceSelector* tableSlice() const { return tableSlice_; }
    CompareImageView* imageView() const { return imageView_; }
    PlotView* plotView() const { return plotView_; }
    StatisticsView* statisticsView() const { return statisticsView_; }

Q_SIGNALS:
    void leafReady();
    // Next difference moved the table to element `flatIndex` (wrapped: past the end).
    void differenceShown(qint64 flatIndex, bool wrapped);
    void noDifference();

private:
    struct Search {
        const CompareTree::Item* item = nullptr;  // the key searched
        std::int64_t flat = -1;
        bool wrapped = false;
        QString error;
    };
    void showMessage(const QString& text);
    void showDescription();
    void leavesLoaded();
    void searchDone();
    void showElement(std::int64_t flat);
    void showCurrentCell();
    void modeChosen(int index);
    void sourceChanged();
    QString summaryHtml() const;
    QString descriptionHtml() const;
    QWidget* makeTablePage();

    std::shared_ptr<const tensordict::TensorDict> a_, b_;
    const CompareTree::Item* item_ = nullptr;
    tensordict::Tolerance tolerance_;
    tensordict::LeafBytes aBytes_, bBytes_;
    QLabel* summary_;
    QStackedWidget* pages_;
    QLabel* message_;
    QTextBrowser* description_;
    QTabWidget* tabs_;
    TensorTableModel* tableModel_;
    TensorTableView* tableView_;
    SliceSelector* tableSlice_;
    QComboBox* shown_;
    QToolButton* next_;
    QLabel* cell_;
    CompareImageView* imageView_;
    PlotView* plotView_;
    StatisticsView* statisticsView_;
    QFutureWatcher<std::pair<tensordict::LeafBytes, tensordict::LeafBytes>> watcher_;
    QFutureWatcher<Search> searchWatcher_;
    bool restoringMode_ = false;
    bool statisticsStale_ = true;
};
