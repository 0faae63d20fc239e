#pragma once

#include <QMainWindow>
#include <QPointer>
#include <QStringList>
#include <functional>
#include <memory>

#include "save_controller.h"
#include "tensordict/save.h"

namespace tensordict {
struct CheckReport;
}
class QAbstractButton;
class QLabel;
class StatusBar;
class QToolButton;
class QLineEdit;
class QMenu;
class QSplitter;
class QStackedWidget;
class QTreeView;
class CompareView;
class SeriesPage;
class Document;
class DocumentPage;
class Page;
class DetailsPanel;
class KeyFilterModel;
class KeyTreeModel;
class OverviewPanel;
class PreviewPanel;
class ShortcutsDialog;
class SliceSelector;
class RecentFiles;
class SaveController;
class SaveJob;
class SaveProgressDialog;
class CheckController;
class WelcomePage;
namespace tensordict {
class Node;
}

// Makes a tree's own Ctrl+C copy the key path (see MainWindow::createMenus).
class KeyPathCopy : public QObject {
public:
    KeyPathCopy(QObject* parent, std::function<void()> copy);
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    std::function<void()> copy_;
};

// tdstudio's main window: a page in its centre (the document alone, or a
// comparison), and the menus, status bar, recent files and saves around
// it. Opening runs in the background.
class MainWindow : public QMainWindow {
    Q_OBJECT

public:
    // The size the window is laid out for; a first window is at most the
    // screen's (a screenshot is taken at this size unless told another).
    static QSize designedSize();
    explicit MainWindow(QWidget* parent = nullptr);

    void openPath(const QString& path);
    QString currentPath() const;
    // Opens the current document again and selects the same key: after its
    // files changed under the preview.
    void reload();
    // The last whole-file load error ("path: reason"), empty after a success.
    const QString& lastError() const { return lastError_; }
    QStringList recentFiles() const;

    // File > Check Integrity: the open dataset checked on a worker.
    void checkIntegrity();
    CheckController* checks() const { return checks_; }
    // What the window shows while no tensordict is open (and after an open failed).
    WelcomePage* welcomePage() const { return welcome_; }
    // The document alone; the comparison is compareView(). page() is the one on screen.
    DocumentPage* documentPage() const { return documentPage_; }
    Page* page() const;
    // Help > Keyboard Shortcuts, once opened.
    ShortcutsDialog* shortcutsDialog() const;
    bool selectKeyPath(const QStringList& path);
    void copySelectedKeyPath();
    // File > Save As / Export: the whole tensordict, or the subtrees selected in the tree.
    void saveAs();
    // Starts a save of the current scope with `options` (the dialog's path; tests call it
    // directly).
    SaveJob* startSave(const QString& prefix, const tensordict::SaveOptions& options);
    SaveJob* currentSave() const;
    SaveProgressDialog* saveProgressDialog() const;
    // View > Group Keys by Dots (checkable).
    QAction* groupKeysAction() const { return groupKeysAction_; }
    // Says in the status bar that `path` was written, with Show in Folder beside it.
    void noteWritten(const QString& text, const QString& path);
    // The status bar's Show in Folder, shown with a note of a file written.
    QAbstractButton* showInFolderButton() const;

    // File > Compare With: compares the open tensordict (A) with the one at
    // `path` (B) side by side, keeping the selected key. Called while A is
    // still opening, it waits for A.
    void compareWith(const QString& path);
    // File > Close Comparison: back to A alone.
    void closeComparison();
    // A comparison is shown (or its B is opening).
    bool isComparing() const;
    CompareView* compareView() const { return compare_; }
    // File > Compare Along Steps: the checkpoints at `locations` compared
    // along training steps, on a page of their own (closed by Close
    // Comparison), whatever is open.
    void compareAlongSteps(const QStringList& locations);
    SeriesPage* seriesPage() const { return series_; }

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
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    // The window's parts, built and connected once by the constructor.
    void setUpPages();
    void setUpStatusBar();
    void connectDocumentAndComparison();
    void createMenus();
    void connectSavesAndChecks();
    // A check's report of the file open now: its problems under the
    // overview, the broken keys marked in the tree.
    void showCheckReport(std::shared_ptr<const tensordict::CheckReport> report);
    void createViewMenu();
    // View > Table... Statistics, on the page on screen.
    void showMode(int mode);
    void stepSlice(int delta);
    void goToSlice();
    void showShortcuts();
    void showLoaded();
    void showFailure(const QString& message);
    static QString openableFiles();
    void chooseFile();
    void chooseDirectory();
    // File > Open URL: an http(s):// address, the last one offered again.
    void chooseUrl();
    // The status bar's count of what the web transport fetched.
    void showFetched();
    // Stops what is being read: the load under way and the preview's reads.
    void cancelReads();
    void chooseComparison(bool directory);
    void showComparison(bool on);
    // What File > Save As can save: the subtrees selected in the tree (when
    // any are), then the whole tensordict.
    std::vector<SaveController::Scope> saveScopes() const;

    Document* document_;
    DocumentPage* documentPage_;
    StatusBar* statusBar_;
    QPointer<ShortcutsDialog> shortcutsDialog_;
    RecentFiles* recent_ = nullptr;
    QMenu* compareMenu_ = nullptr;
    QLabel* statusLabel_;
    QLabel* fetchedLabel_;       // "12 requests · 3.1 MiB fetched" once anything was
    QToolButton* cancelReads_;   // while a load or a server's answer is under way
    QToolButton* showInFolder_;  // with a note of a file written
    QString writtenNote_, writtenPath_;
    QString lastError_;
    SaveController* saves_;
    CheckController* checks_;
    QAction* checkAction_ = nullptr;
    QAction* groupKeysAction_ = nullptr;  // View > Group Keys by Dots
    QAction* saveAction_ = nullptr;
    QStackedWidget* pages_;  // welcome_, documentPage_ or compare_
    WelcomePage* welcome_;
    CompareView* compare_;
    SeriesPage* series_;
    QAction* closeCompareAction_ = nullptr;
};
