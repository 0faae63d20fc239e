#pragma once

#include <QDialog>
#include <QKeySequence>
#include <QString>
#include <vector>

class QAction;
class QTableWidget;

// Help > Keyboard Shortcuts: every action of a window that has a shortcut,
// read from the QActions themselves (menus first, in menu order, then the
// actions of single widgets), so the list stays true as actions change.
class ShortcutsDialog : public QDialog {
    Q_OBJECT

public:
    struct Row {
        QString where;  // "View", "File > Compare With", or the widget ("Key tree")
        QString action;
        QString shortcuts;  // as the menus show them: "Ctrl+1", or several joined by ", "
        QAction* source = nullptr;
    };

    explicit ShortcutsDialog(QWidget* window, QWidget* parent = nullptr);

    // The rows the dialog lists for `window`.
    static std::vector<Row> collect(QWidget* window);
    QTableWidget* table() const { return table_; }

private:
    QTableWidget* table_;
};
