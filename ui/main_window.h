#pragma once

#include <QMainWindow>
#include <QPointer>
#include <QStringList>
#include <memory>

#include "tensordict/save.h"

class QLabel;
class QLineEdit;
class QMenu;
class QSplitter;
class QStackedWidget;
class QTreeView;
class CompareView;
class Document;
class DetailsPanel;
class KeyFilterModel;
class KeyTreeModel;
class OverviewPanel;
class PreviewPanel;
class ShortcutsDialog;
class SliceSelector;
class SaveJob;
class SaveProgressDialog;
namespace tensordict {
class Node;
}

// tdstudio's main window: the key tree with its filter on the left; on the
// right the preview of the selected leaf, or the overview of the selected
// collection, above its compact details. Opening runs in the background.
class MainWindow : public QMainWindow {
    Q_OBJECT

public:
    explicit MainWindow(QWidget* parent = nullptr);

    void openPath(const QString& path);
    QString currentPath() const;
    // Opens the current document again and selects the same key: after its
    // files changed under the preview.
    void reload();
    // The last whole-file load error ("path: reason"), empty after a success.
    const QString& lastError() const { return lastError_; }
    QStringList recentFiles() const;

    QTreeView* treeView() const { return tree_; }
    QLineEdit* filterEdit() const { return filterEdit_; }
    DetailsPanel* detailsPanel() const { return details_; }
    PreviewPanel* previewPanel() const { return preview_; }
    OverviewPanel* overviewPanel() const { return overview_; }
    // The right column shows the overview (a collection is selected), not the preview.
    bool showsOverview() const;
    QSplitter* treeSplitter() const { return treeSplitter_; }        // tree | right column
    QSplitter* detailsSplitter() const { return detailsSplitter_; }  // preview | details
    // Help > Keyboard Shortcuts, once opened.
    ShortcutsDialog* shortcutsDialog() const;
    KeyTreeModel* keyModel() const { return model_; }
    KeyFilterModel* filterModel() const { return filter_; }
    // The node of the current selection, if any.
    const tensordict::Node* selectedNode() const;
    bool selectKeyPath(const QStringList& path);
    void copySelectedKeyPath();
    // File > Save As / Export: the whole tensordict, or the subtrees selected in the tree.
    void saveAs();
    // Starts a save of the current scope with `options` (the dialog's path; tests call it
    // directly).
    SaveJob* startSave(const QString& prefix, const tensordict::SaveOptions& options);
    SaveJob* currentSave() const { return saveJob_; }
    SaveProgressDialog* saveProgressDialog() const;

    // File > Compare With: compares the open tensordict (A) with the one at
    // `path` (B) side by side, keeping the selected key. Called while A is
    // still opening, it waits for A.
    void compareWith(const QString& path);
    // File > Close Comparison: back to A alone.
    void closeComparison();
    // A comparison is shown (or its B is opening).
    bool isComparing() const;
    CompareView* compareView() const { return compare_; }

Q_SIGNALS:
    void documentLoaded();
    void documentFailed(const QString& message);
    // B is open and the comparison runs (the tree fills in from now).
    void comparisonStarted();
    // The comparison is complete, cancelled or failed.
    void comparisonFinished();
    // B could not be opened.
    void comparisonFailed(const QString& message);

protected:
    void closeEvent(QCloseEvent* event) override;
    void showEvent(QShowEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void createMenus();
    void createViewMenu();
    // The preview's mode (or the comparison's), from View > Table... Statistics.
    void showMode(int mode);
    // The slider of the view on screen: the table's, the image's or the plot's.
    SliceSelector* currentSliceSelector() const;
    void stepSlice(int delta);
    void goToSlice();
    void showShortcuts();
    void restoreLayout();
    void saveLayout() const;
    void showLoaded();
    void showFailure(const QString& message);
    void updateDetails();
    void applyFilter(const QString& text);
    void addRecentFile(const QString& path);
    void rebuildRecentMenu();
    void chooseFile();
    void chooseDirectory();
    void chooseComparison(bool directory);
    void showComparison(bool on);

    Document* document_;
    KeyTreeModel* model_;
    KeyFilterModel* filter_;
    QTreeView* tree_;
    QLineEdit* filterEdit_;
    DetailsPanel* details_;
    PreviewPanel* preview_;
    OverviewPanel* overview_;
    QStackedWidget* content_;  // the preview, or the overview of a collection
    QSplitter* treeSplitter_ = nullptr;
    QSplitter* detailsSplitter_ = nullptr;
    QPointer<ShortcutsDialog> shortcutsDialog_;
    bool layoutRestored_ = false;
    QMenu* recentMenu_ = nullptr;
    QMenu* compareMenu_ = nullptr;
    QLabel* statusLabel_;
    QString lastError_;
    SaveJob* saveJob_ = nullptr;
    bool closeAfterSave_ = false;                  // closing waits for the cancelled save to end
    QPointer<SaveProgressDialog> progressDialog_;  // deletes itself when closed
    QAction* saveAction_ = nullptr;
    QStackedWidget* pages_;  // the document alone, or the comparison
    CompareView* compare_;
    QAction* closeCompareAction_ = nullptr;

    std::shared_ptr<const tensordict::TensorDict> saveScope(QString* description,
                                                            std::uint64_t* bytes) const;
};
