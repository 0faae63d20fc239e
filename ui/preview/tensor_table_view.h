#pragma once

#include <QWidget>
#include <cstdint>

class QScrollBar;
class QTableView;
class TensorTableModel;

// A table over a TensorTableModel with its own scroll bars that span the
// whole slice (ViTables' idea): the inner view only ever holds the visible
// window, so any row of billions is one drag, wheel or keypress away.
class TensorTableView : public QWidget {
    Q_OBJECT

public:
    explicit TensorTableView(TensorTableModel* model, QWidget* parent = nullptr);

    QTableView* table() const { return table_; }
    // Scrolls so that (row, col) of the slice is the top-left cell on screen.
    void scrollTo(std::int64_t row, std::int64_t col);
    void scrollToEnd();
    // Scrolls as little as needed to show (row, col) of the slice, and makes it the current cell.
    void showCell(std::int64_t row, std::int64_t col);
    // The current cell in slice coordinates; false when there is none.
    bool currentCell(std::int64_t* row, std::int64_t* col) const;
    // Copies the selected cells as tab-separated text.
    void copySelection() const;
    // Re-reads the slice size (after the model's slice or leaf changed).
    void refresh();
    // Sizes the columns to the widest text of a sample of the slice.
    void fitColumns();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void updateWindow();
    void syncScrollBars();
    std::int64_t maxFirstRow() const;
    std::int64_t maxFirstCol() const;

    TensorTableModel* model_;
    QTableView* table_;
    QScrollBar* vbar_;
    QScrollBar* hbar_;
    std::int64_t firstRow_ = 0, firstCol_ = 0;
    int visibleRows_ = 1, visibleCols_ = 1;
};
