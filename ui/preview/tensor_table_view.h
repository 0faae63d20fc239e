#pragma once

#include <QPointer>
#include <QProgressDialog>
#include <QWidget>
#include <cstdint>
#include <functional>
#include <optional>

#include "cell_selection.h"
#include "job_tracker.h"

class QScrollBar;
class QTableView;
class TensorTableModel;

// A table over a TensorTableModel with its own scroll bars that span the
// whole slice (ViTables' idea): the inner view only ever holds the visible
// window, so any row of billions is one drag, wheel or keypress away.
//
// The selection and the current cell are kept in slice coordinates
// (CellSelection), not in the window's: they stay on their data while the
// window scrolls, pages or jumps, and the window only mirrors the part of
// them on screen. Clicks, drags and keys are read here, as a spreadsheet
// reads them (Shift extends from the anchor, Ctrl adds a range).
class TensorTableView : public QWidget {
    Q_OBJECT

public:
    explicit TensorTableView(TensorTableModel* model, QWidget* parent = nullptr);
    ~TensorTableView() override;

    QTableView* table() const { return table_; }
    // Scrolls so that (row, col) of the slice is the top-left cell on screen.
    void scrollTo(std::int64_t row, std::int64_t col);
    void scrollToEnd();
    // Scrolls as little as needed to show (row, col) of the slice, and makes it the current cell.
    void showCell(std::int64_t row, std::int64_t col);
    // The current cell in slice coordinates, on screen or not; false when there is none.
    bool currentCell(std::int64_t* row, std::int64_t* col) const;

    const CellSelection& selection() const { return selection_; }
    void setSelection(const CellSelection& selection);
    void clearSelection();

    // Copies the selected cells as tab-separated text, each column in one
    // notation. A large selection is read on a worker with a progress
    // dialog and Cancel; beyond kAskCells the user is asked first, and
    // beyond kMaxCopyCells (more text than the clipboard should hold) the
    // copy is refused with a pointer to the CSV export. copyFinished() follows.
    void copySelection();
    // Every cell of the slice (Ctrl+A).
    void selectAllCells();
    static constexpr std::uint64_t kWorkerCells = 200'000;
    static constexpr std::uint64_t kAskCells = 1'000'000;
    static constexpr std::uint64_t kMaxCopyCells = 50'000'000;
    // Asks whether to copy `cells` cells; by default a message box. Tests answer it.
    void setCopyConfirmation(std::function<bool(std::uint64_t cells)> confirm) {
        confirmCopy_ = std::move(confirm);
    }
    bool isCopying() const { return copy_.isBusy(); }
    QProgressDialog* copyProgress() const { return copyProgress_; }

    // The widest a column grows to fit its values (longer ones are elided).
    static constexpr int kMaxColumnWidth = 360;
    // Re-reads the slice size (after the model's slice or leaf changed).
    void refresh();
    // Sizes the columns to the widest text of a sample of the slice.
    void fitColumns();

Q_SIGNALS:
    void currentCellChanged();
    // A copy ended: `cells` copied, or none (`why` says why: cancelled, refused, too large).
    void copyFinished(quint64 cells, const QString& why);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    using Cell = CellSelection::Cell;
    void updateWindow();
    void widenColumnsForWindow();
    void syncScrollBars();
    // Mirrors the selection and the current cell onto the window on screen.
    void syncSelection();
    // A selection change the inner view made itself (a test, Qt's own
    // shortcuts): taken over as the window's cells.
    void adoptViewSelection();
    std::int64_t maxFirstRow() const;
    std::int64_t maxFirstCol() const;
    // The slice cell under a point of the viewport, clamped into the slice.
    std::optional<Cell> cellAt(const QPoint& pos) const;
    // Clicks and drags in the cells and on the headers, as a spreadsheet reads them.
    bool mouseEvent(QObject* watched, QEvent* event);
    bool keyEvent(QKeyEvent* key);
    // Moves the current cell to `to` (clamped), scrolling to it; Shift extends.
    void moveCurrent(Cell to, bool extend);
    void setCurrent(std::optional<Cell> cell);
    void finishCopy(quint64 cells, const QString& text, const QString& why);

    TensorTableModel* model_;
    QTableView* table_;
    QScrollBar* vbar_;
    QScrollBar* hbar_;
    std::int64_t firstRow_ = 0, firstCol_ = 0;
    int visibleRows_ = 1, visibleCols_ = 1;

    CellSelection selection_;
    std::optional<Cell> current_;
    enum class Drag { None, Cells, Rows, Columns } drag_ = Drag::None;
    bool syncing_ = false;

    struct Copy {
        QString text;
        bool lost = false;
    };
    JobTracker<Copy> copy_{this};
    QPointer<QProgressDialog> copyProgress_;
    std::function<bool(std::uint64_t)> confirmCopy_;
};
