#include "widget_shortcut.h"

#include <QAbstractButton>
#include <QAction>
#include <QWidget>

QAction* addWidgetShortcut(QWidget* scope, const QString& name, const QKeySequence& keys,
                           std::function<void()> run) {
    auto* action = new QAction(name, scope);
    action->setShortcut(keys);
    action->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    QObject::connect(action, &QAction::triggered, scope, [run = std::move(run)] { run(); });
    scope->addAction(action);
    return action;
}

QAction* addButtonShortcut(QWidget* scope, QAbstractButton* button, const QString& name,
                           const QKeySequence& keys) {
    const QString shown = keys.toString(QKeySequence::NativeText);
    const QString tip = button->toolTip();
    button->setToolTip(tip.isEmpty() ? shown : tip + " (" + shown + ")");
    return addWidgetShortcut(scope, name, keys, [button] {
        if (button->isEnabled() && button->isVisible())
            button->click();
    });
}
