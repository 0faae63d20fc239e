#include "shortcuts_dialog.h"

#include <QAction>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QScreen>
#include <QSet>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>

namespace {

QString plain(QString text) {
    text.remove(QChar('&'));
    text.remove(QChar(0x2026));  // the ellipsis of "Open…"
    return text.trimmed();
}

QString shortcutText(const QAction* action) {
    QStringList keys;
    for (const QKeySequence& k : action->shortcuts())
        keys << k.toString(QKeySequence::NativeText);
    return keys.join(", ");
}

// Where an action outside the menus applies: the nearest widget with an accessible name.
QString scopeOf(const QAction* action) {
    for (const QObject* o = action->parent(); o; o = o->parent())
        if (const auto* w = qobject_cast<const QWidget*>(o); w && !w->accessibleName().isEmpty())
            return w->accessibleName();
    return QObject::tr("Window");
}

// The key of a menu text's accelerator ("&Open File…": O), or none.
QString mnemonic(const QString& text) {
    const int at = text.indexOf('&');
    return at >= 0 && at + 1 < text.size() && text[at + 1] != '&' ? text.mid(at + 1, 1).toUpper()
                                                                  : QString();
}

// Every action of `menu` (and its submenus), named clearly ("Compare With
// File", not "File"): by its shortcut, or by its accelerators when it has
// none ("Alt+F, C, F"). `keys` are the accelerators of the menus above.
void collectMenu(const QMenu* menu, const QString& where, const QString& name, const QString& keys,
                 std::vector<ShortcutsDialog::Row>& rows, QSet<const QAction*>& seen) {
    for (QAction* action : menu->actions()) {
        seen.insert(action);
        if (action->isSeparator() || !action->isVisible())
            continue;
        const QString letter = mnemonic(action->text());
        const QString path = keys.isEmpty() || letter.isEmpty() ? QString() : keys + ", " + letter;
        if (action->menu()) {
            if (action->menu()->objectName() == "dynamic")  // recent files: not commands
                continue;
            collectMenu(action->menu(), where + " > " + plain(action->text()),
                        plain(action->text()), path, rows, seen);
            continue;
        }
        const QString text =
            name.isEmpty() ? plain(action->text()) : name + " " + plain(action->text());
        const QString shortcut = action->shortcuts().isEmpty() ? path : shortcutText(action);
        if (!shortcut.isEmpty())
            rows.push_back({where, text, shortcut, action});
    }
}

}  // namespace

std::vector<ShortcutsDialog::Row> ShortcutsDialog::collect(QWidget* window) {
    std::vector<Row> rows;
    QSet<const QAction*> seen;
    if (auto* main = qobject_cast<QMainWindow*>(window))
        for (QAction* top : main->menuBar()->actions())
            if (top->menu()) {
                const QString letter = mnemonic(top->text());
                collectMenu(top->menu(), plain(top->text()), {},
                            letter.isEmpty() ? QString() : "Alt+" + letter, rows, seen);
            }
    // Views that exist twice (the statistics of a leaf and of a comparison)
    // have the same shortcuts: listed once.
    QSet<QString> listed;
    for (QAction* action : window->findChildren<QAction*>()) {
        if (seen.contains(action) || action->shortcuts().isEmpty())
            continue;
        const Row row{scopeOf(action), plain(action->text()), shortcutText(action), action};
        if (!listed.contains(row.where + '\n' + row.action + '\n' + row.shortcuts)) {
            listed.insert(row.where + '\n' + row.action + '\n' + row.shortcuts);
            rows.push_back(row);
        }
    }
    return rows;
}

ShortcutsDialog::ShortcutsDialog(QWidget* window, QWidget* parent)
    : QDialog(parent), table_(new QTableWidget) {
    setWindowTitle(tr("Keyboard Shortcuts"));
    const std::vector<Row> rows = collect(window);
    table_->setColumnCount(3);
    table_->setHorizontalHeaderLabels({tr("Action"), tr("Shortcut"), tr("Where")});
    table_->setRowCount(static_cast<int>(rows.size()));
    for (int r = 0; r < static_cast<int>(rows.size()); ++r) {
        const Row& row = rows[static_cast<std::size_t>(r)];
        const QStringList cells{row.action, row.shortcuts, row.where};
        for (int c = 0; c < cells.size(); ++c) {
            auto* item = new QTableWidgetItem(cells[c]);
            item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
            table_->setItem(r, c, item);
        }
    }
    table_->verticalHeader()->hide();
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setAlternatingRowColors(true);
    table_->resizeColumnsToContents();
    table_->horizontalHeader()->setStretchLastSection(true);

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(table_);
    layout->addWidget(buttons);
    // As tall as the list, within the screen (at 1024x700 its Close button
    // was below the screen's edge).
    const QRect screen = window->screen() ? window->screen()->availableGeometry() : QRect();
    int height = table_->horizontalHeader()->height() + 4 +
                 table_->verticalHeader()->defaultSectionSize() * table_->rowCount() +
                 buttons->sizeHint().height() + layout->contentsMargins().top() +
                 layout->contentsMargins().bottom() + layout->spacing();
    int width = std::max(560, table_->horizontalHeader()->length() + 40);
    if (!screen.isEmpty()) {
        height = std::min(height, screen.height() * 9 / 10);
        width = std::min(width, screen.width() * 9 / 10);
    }
    resize(width, height);
}
