#pragma once

#include <QKeySequence>
#include <QString>
#include <functional>

class QAbstractButton;
class QAction;
class QWidget;

// A command of one part of the window (a button of the table, the image,
// a view's own key) as a QAction with a shortcut that works while that
// part has the focus. The Keyboard Shortcuts dialog lists it under the
// nearest accessible name (`scope`'s, or an ancestor's), by `name`.
QAction* addWidgetShortcut(QWidget* scope, const QString& name, const QKeySequence& keys,
                           std::function<void()> run);

// The same for a button: the shortcut clicks it (when it is enabled), and
// its tooltip says the keys.
QAction* addButtonShortcut(QWidget* scope, QAbstractButton* button, const QString& name,
                           const QKeySequence& keys);
