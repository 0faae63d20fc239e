#pragma once

#include <QPointer>
#include <QStringList>
#include <QWidget>
#include <memory>

#include "page.h"
#include "tensordict/compare.h"

class QCheckBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QToolButton;
class QTreeView;
class CompareFilterModel;
class CompareJob;
class ComparePanel;
class KeyColumns;
class CompareTreeModel;
class Document;

// A side-by-side comparison of the open tensordict (A) with another (B):
// the union of their key trees with each key's status on the left (filter,
// "Differences only"), the selected key of both on the right. B loads on a
// worker as documents do; the comparison runs on a worker and the tree
// fills in as results arrive. The main window shows this page instead of
// its own while comparing, and puts statusWidget() in its status bar.
class CompareView : public QWidget, public Page {
    Q_OBJECT

public:
    explicit CompareView(QWidget* parent = nullptr);
    ~CompareView() override;

    // Opens `pathB` and compares `a` with it; then selects `select` (a key path), if any.
    void start(std::shared_ptr<const tensordict::TensorDict> a, const QString& pathB,
               const QStringList& select = {});
    // Stops and forgets both sides.
    void close();
    bool isActive() const { return active_; }
    bool isLoading() const;    // B is being opened
    bool isComparing() const;  // the comparison runs
    void cancel();
    QString pathB() const;
    // "3 changed, 1 only in A, 2 only in B", as in the status bar.
    QString countsText() const;

    // Page
    QTreeView* treeView() const override { return tree_; }
    QLineEdit* filterEdit() const override { return filterEdit_; }
    bool hasCurrentKey() const override;
    QStringList currentKeyPath() const override;
    bool selectKeyPath(const QStringList& path) override;
    QString showMode(int mode) override;
    SliceSelector* currentSliceSelector() const override;
    QString nextDifference() override;

    CompareTreeModel* treeModel() const { return model_; }
    CompareFilterModel* filterModel() const { return filter_; }
    QCheckBox* differencesOnlyBox() const { return differencesOnly_; }
    ComparePanel* panel() const { return panel_; }
    // The counts, progress and Cancel, for the main window's status bar (which takes it).
    QWidget* statusWidget() const { return statusWidget_; }
    QLabel* countsLabel() const { return counts_; }

Q_SIGNALS:
    void loadFailed(const QString& message);  // B could not be opened
    void comparing();                         // B is open; the tree fills in from now
    void finished();                          // done, cancelled or failed (see message)
    void message(const QString& text, int timeoutMs);

private:
    void loadedB();
    void treeReady();
    void keysCompared(const std::vector<tensordict::KeyComparison>& batch);
    void progressed(const tensordict::CompareProgress& progress);
    void jobFinished();
    void currentChanged();
    void applyFilter();
    void updateCounts();
    void expandDifferences();

    bool active_ = false;
    std::shared_ptr<const tensordict::TensorDict> a_;
    QStringList select_;
    tensordict::Tolerance tolerance_;  // exact, NaN equal to NaN (set in the constructor)
    Document* documentB_;
    CompareJob* job_ = nullptr;
    CompareTreeModel* model_;
    CompareFilterModel* filter_;
    QLineEdit* filterEdit_;
    QCheckBox* differencesOnly_;
    QTreeView* tree_;
    KeyColumns* keyColumns_;
    ComparePanel* panel_;
    QPointer<QWidget> statusWidget_;
    QLabel* counts_;
    QProgressBar* progress_;
    QToolButton* cancel_;
};
