#pragma once

#include <QWidget>
#include <memory>

#include "job_tracker.h"
#include "page.h"

class QLabel;
class QSplitter;
class QStackedWidget;
class DetailsPanel;
class KeyFilterModel;
class KeyIndex;
class KeyTreeModel;
class OverviewPanel;
class PreviewPanel;
namespace tensordict {
class Node;
class TensorDict;
}  // namespace tensordict

// The open tensordict alone: the key tree with its filter on the left; on
// the right the preview of the selected leaf, or the overview of the
// selected collection, above its compact details.
class DocumentPage : public QWidget, public Page {
    Q_OBJECT

public:
    explicit DocumentPage(QWidget* parent = nullptr);

    // Shows `td` (labelled `label` at the root of the tree) with the root selected.
    void showTensorDict(std::shared_ptr<const tensordict::TensorDict> td, const QString& label,
                        std::shared_ptr<const KeyIndex> keyIndex);
    // The tensordict as its file has it (whatever the tree groups for display).
    std::shared_ptr<const tensordict::TensorDict> tensorDict() const { return original_; }
    // View > Group Keys by Dots: a state_dict's "layer1.0.conv.weight" shown
    // nested by its dots (built on a worker; the selection stays).
    void setGroupKeysByDots(bool on);
    bool groupsKeysByDots() const { return groupByDots_; }
    // The grouped tree is being built; treeShown() follows.
    bool isGroupingKeys() const { return grouping_.isBusy(); }
    // The node of the current selection, if any.
    const tensordict::Node* selectedNode() const;
    // The nodes of every selected row (the subtrees File > Save As saves).
    std::vector<const tensordict::Node*> selectedNodes() const;

    // Page
    QTreeView* treeView() const override { return tree_; }
    QLineEdit* filterEdit() const override { return filterEdit_; }
    QLabel* filterStatus() const { return filterStatus_; }
    bool hasCurrentKey() const override { return selectedNode() != nullptr; }
    QStringList currentKeyPath() const override;
    bool selectKeyPath(const QStringList& path) override;
    QString showMode(int mode) override;
    SliceSelector* currentSliceSelector() const override;
    bool focusSliceEntry() override;  // or the table's Go to row

    KeyTreeModel* keyModel() const { return model_; }
    KeyFilterModel* filterModel() const { return filter_; }
    DetailsPanel* detailsPanel() const { return details_; }
    PreviewPanel* previewPanel() const { return preview_; }
    OverviewPanel* overviewPanel() const { return overview_; }
    // The right column shows the overview (a collection is selected), not the preview.
    bool showsOverview() const;
    QSplitter* treeSplitter() const { return treeSplitter_; }        // tree | right column
    QSplitter* detailsSplitter() const { return detailsSplitter_; }  // preview | details

    // The splitters and the details' fold, as the user left them (restored
    // when the page first shows, at its real size).
    void restoreLayout();
    void saveLayout() const;

Q_SIGNALS:
    // The preview found its files changed: the document should be opened again.
    void reloadRequested();
    void copyKeyPathRequested();
    // The preview wrote a slice to `path` (an export).
    void exported(const QString& path);
    // The tree shows what setGroupKeysByDots() asked for.
    void treeShown();

protected:
    void showEvent(QShowEvent* event) override;

private:
    void updateDetails();
    // "3 keys match", "No key matches …": under the filter while it is set.
    void updateFilterStatus();
    // From the filter to the tree, on the current match or the first one.
    void goToMatches();
    void showTree(std::shared_ptr<const tensordict::TensorDict> shown, const QStringList& keep);

    KeyTreeModel* model_;
    KeyFilterModel* filter_;
    QTreeView* tree_;
    QLineEdit* filterEdit_;
    QLabel* filterStatus_;
    DetailsPanel* details_;
    PreviewPanel* preview_;
    OverviewPanel* overview_;
    QStackedWidget* content_;  // the preview, or the overview of a collection
    QSplitter* treeSplitter_;
    QSplitter* detailsSplitter_;
    std::shared_ptr<const tensordict::TensorDict> original_;
    QString label_;
    std::shared_ptr<const KeyIndex> keyIndex_;  // of original_
    bool groupByDots_ = false;
    bool layoutRestored_ = false;
    JobTracker<std::shared_ptr<const tensordict::TensorDict>> grouping_{this};
};
