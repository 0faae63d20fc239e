#pragma once

#include <QMainWindow>
#include <QPointer>
#include <QStringList>
#include <memory>

#include "tensordict/save.h"

class QLabel;
class QLineEdit;
class QMenu;
class QTreeView;
class Document;
class DetailsPanel;
class KeyFilterModel;
class KeyTreeModel;
class PreviewPanel;
class SaveJob;
class SaveProgressDialog;
namespace tensordict {
class Node;
}

// tdstudio's main window: the key tree with its filter on the left, the
// details of the selected node on the right. Opening runs in the background.
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

Q_SIGNALS:
    void documentLoaded();
    void documentFailed(const QString& message);

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void createMenus();
    void showLoaded();
    void showFailure(const QString& message);
    void updateDetails();
    void applyFilter(const QString& text);
    void addRecentFile(const QString& path);
    void rebuildRecentMenu();
    void chooseFile();
    void chooseDirectory();

    Document* document_;
    KeyTreeModel* model_;
    KeyFilterModel* filter_;
    QTreeView* tree_;
    QLineEdit* filterEdit_;
    DetailsPanel* details_;
    PreviewPanel* preview_;
    QMenu* recentMenu_ = nullptr;
    QLabel* statusLabel_;
    QString lastError_;
    SaveJob* saveJob_ = nullptr;
    QPointer<SaveProgressDialog> progressDialog_;  // deletes itself when closed
    QAction* saveAction_ = nullptr;

    std::shared_ptr<const tensordict::TensorDict> saveScope(QString* description,
                                                            std::uint64_t* bytes) const;
};
