#pragma once

#include <QPointer>
#include <QProgressDialog>
#include <QWidget>
#include <memory>
#include <optional>
#include <vector>

#include "job_tracker.h"
#include "leaf_view.h"
#include "slice_export.h"

#include "tensordict/tensordict.h"

class QLabel;
class QPlainTextEdit;
class QPushButton;
class QLineEdit;
class QStackedWidget;
class ImageView;
class PlotView;
class SliceSelector;
class StatisticsView;
class TableLeafMode;
class TensorTableModel;
class TensorTableView;

// Shows the contents of the selected node: a tensor leaf as a table, image,
// plot or statistics; a non-tensor value as JSON. A leaf's bytes are mapped
// (or inflated) on a worker thread before any view touches them.
class PreviewPanel : public QWidget, public BuiltinLeafModes {
    Q_OBJECT

public:
    explicit PreviewPanel(QWidget* parent = nullptr);
    ~PreviewPanel() override;

    // `owner` keeps the node's tree alive while it is shown.
    void showNode(std::shared_ptr<const tensordict::TensorDict> owner,
                  const tensordict::Node* node);
    const tensordict::Node* node() const { return node_; }
    // Several leaves of one length, each with one dimension of more than one
    // element (1-D, or [N, 1]), plotted together with a legend. Returns false,
    // changing nothing, when `nodes` are not such leaves.
    bool showSeries(std::shared_ptr<const tensordict::TensorDict> owner,
                    const std::vector<const tensordict::Node*>& nodes);
    // Whether `nodes` can be plotted together by showSeries().
    static bool areSeries(const std::vector<const tensordict::Node*>& nodes);
    // The leaves shown by showSeries() (empty when one node is shown).
    const std::vector<const tensordict::Node*>& seriesNodes() const { return seriesNodes_; }
    bool isLoading() const { return read_.isBusy(); }
    // Stops the shown leaf's reads under way (its bytes, the table's
    // window, the image): a slow server's requests end; the preview says
    // how to read it again.
    void cancelReads();

    Mode mode() const;
    void setMode(Mode mode);
    // Shows row `row` of `leaf` in the table, now or once the leaf is shown.
    void showRow(const tensordict::Node* leaf, std::int64_t row);
    // Whether `mode` suits the shown leaf (its tab is enabled).
    bool canShow(Mode mode) const;
    // "0d", "1d", "2d", "hwc", "chw" or "nd": which views suit a shape.
    static QString shapeKind(const std::vector<std::int64_t>& shape) {
        return LeafView::shapeKind(shape);
    }
    LeafView* leafView() const { return leafView_; }

    // The built-in modes' views.
    TensorTableModel* tableModel() const;
    TensorTableView* tableView() const;
    SliceSelector* tableSlice() const;
    QLineEdit* goToRowField() const;
    ImageView* imageView() const;
    PlotView* plotView() const;
    StatisticsView* statisticsView() const;
    QString message() const;
    // Whether the message page offers Reload (the leaf's file changed).
    bool offersReload() const;
    QString valueText() const;
    QString titleText() const;  // "<b>key</b> · torch.float32 · [3, 4] · 48 B"

    // Exports the table's slice on a worker, with a progress dialog and
    // Cancel; nullptr when no leaf is shown or an export is running. Its end
    // is also reported by exportFinished (an error also in a message box).
    SliceExportJob* exportSlice(SliceExportJob::Format format, const QString& path);
    QProgressDialog* exportProgress() const { return exportProgress_; }
    // For tests: given to every export job (SliceExportJob::setWorkerHook).
    void setExportWorkerHook(std::function<void(std::int64_t, std::int64_t)> hook) {
        exportHook_ = std::move(hook);
    }

Q_SIGNALS:
    void leafReady();
    // The shown leaf's bytes could not be read; the preview says why.
    void leafFailed(const QString& message);
    // The user asked to open the document again (its files changed).
    void reloadRequested();
    void exportFinished(const QString& error, bool cancelled);
    // A slice was written to `path` (CSV, .npy or the image's PNG).
    void exported(const QString& path);

private:
    using Bytes = std::vector<tensordict::LeafBytes>;
    struct Read {
        Bytes bytes;
        std::optional<tensordict::Failure> failure;
        bool cancelled = false;
    };
    void showMessage(const QString& text, bool offerReload = false);
    // `headline` with the failure's text for %1; Reload offered for a file that changed.
    void showFailure(const QString& headline, const tensordict::Failure& failure);
    // A view found that the leaf's file lost data under its mapping.
    void sourceChanged();
    void leafLoaded(Read read);
    void seriesLoaded(Read read);
    void reset();
    // On a worker; `owner` keeps the nodes' tree alive for paged leaves.
    static Read readLeaves(const std::vector<const tensordict::Node*>& nodes,
                           const std::shared_ptr<const void>& owner);

    std::shared_ptr<const tensordict::TensorDict> owner_;
    const tensordict::Node* node_ = nullptr;
    tensordict::LeafBytes bytes_;
    QStackedWidget* pages_;
    QWidget* messagePage_;
    QLabel* message_;
    QPushButton* reload_;
    QPlainTextEdit* value_;
    QWidget* tensorPage_;
    QLabel* title_;
    LeafView* leafView_;
    TableLeafMode* table_;
    std::vector<const tensordict::Node*> seriesNodes_;
    JobTracker<Read> read_{this};  // the shown leaf's bytes, or the series'

    QPointer<SliceExportJob> exportJob_;
    QPointer<QProgressDialog> exportProgress_;
    std::function<void(std::int64_t, std::int64_t)> exportHook_;
};
