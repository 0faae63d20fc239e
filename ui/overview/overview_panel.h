#pragma once

#include <QWidget>
#include <memory>

#include "collection_summary.h"
#include "job_tracker.h"
#include "tensordict/check.h"
#include "tensordict/tensordict.h"

class QGridLayout;
class QLabel;
class QListWidget;
class QTableWidget;
class QPushButton;
class QScrollArea;
class SizeBarChart;

// What takes the space under the selected collection: its largest keys and
// leaves, bytes by dtype and by storage, counts, and the problems found.
// The subtree is summarised on a worker thread from metadata only. The
// charts stand in two columns, or in one when the pane is too narrow for
// two to show their figures whole.
class OverviewPanel : public QWidget {
    Q_OBJECT

public:
    explicit OverviewPanel(QWidget* parent = nullptr);
    ~OverviewPanel() override;

    // `owner` keeps the node's tree alive while it is summarised and shown.
    void showNode(std::shared_ptr<const tensordict::TensorDict> owner,
                  const tensordict::Node* collection);
    void clear();
    // The summary of the node shown is on screen (summaryReady was emitted for it).
    bool isReady() const { return ready_; }
    // The summary shown (empty until summaryReady).
    const CollectionSummary& summary() const { return summary_; }
    const tensordict::Node* node() const { return node_; }

    SizeBarChart* childrenChart() const { return children_; }
    SizeBarChart* leavesChart() const { return leaves_; }
    SizeBarChart* dtypeChart() const { return dtypes_; }
    SizeBarChart* storageChart() const { return storage_; }
    SizeBarChart* fileChart() const { return files_; }
    QListWidget* problemList() const { return problems_; }
    // A replay buffer's or stack's facts, and a TED buffer's episodes.
    QLabel* datasetLabel() const { return dataset_; }
    QTableWidget* episodeTable() const { return episodes_; }
    QString headline() const;
    // The integrity check's report of the whole dataset (nullptr: none yet):
    // its problems join the Problems list of every collection they are under.
    void setCheckReport(std::shared_ptr<const tensordict::CheckReport> report);
    // Scrolls the Problems into view (after a check found some), now or once
    // the summary is ready.
    void revealProblems();
    // Whether the Problems list is in the visible part of the overview.
    bool problemsInView() const;
    QPushButton* checkButton() const { return checkButton_; }
    QPushButton* repairButton() const { return repair_; }
    // How many columns the charts stand in now (1 or 2).
    int columnCount() const { return columns_; }

Q_SIGNALS:
    void summaryReady();
    // The user clicked a key (a bar or a problem): select it in the tree.
    void keyActivated(const QStringList& keyPath);
    // The user picked an episode of a replay buffer: show its first row.
    void rowActivated(std::int64_t row);
    void checkRequested();
    void repairRequested();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    bool revealProblemsWhenReady_ = false;
    void summarized(CollectionSummary result);
    void showSummary();
    void showProblems();
    // Places the charts and their titles in `columns` columns.
    void arrange(int columns);
    // Two columns when the charts fit side by side with whole labels and figures.
    void fitColumns();

    std::shared_ptr<const tensordict::TensorDict> owner_;
    const tensordict::Node* node_ = nullptr;
    JobTracker<CollectionSummary> job_{this};
    CollectionSummary summary_;
    bool ready_ = false;
    QLabel* title_;
    QLabel* counts_;
    QLabel* dataset_;
    QLabel* episodesTitle_;
    QTableWidget* episodes_;
    QLabel* childrenTitle_;
    QLabel* leavesTitle_;
    QLabel* dtypesTitle_;
    QLabel* storageTitle_;
    QLabel* filesTitle_;
    SizeBarChart* children_;
    SizeBarChart* leaves_;
    SizeBarChart* dtypes_;
    SizeBarChart* storage_;
    SizeBarChart* files_;
    QLabel* problemsTitle_;
    QListWidget* problems_;
    QPushButton* checkButton_;
    QPushButton* repair_;
    QWidget* problemsHeader_ = nullptr;
    std::shared_ptr<const tensordict::CheckReport> check_;
    QScrollArea* scroll_;
    QGridLayout* grid_;
    int columns_ = 0;
};
