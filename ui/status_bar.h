#pragma once

#include <QList>
#include <QPointer>
#include <QStatusBar>

// The window's status bar. A message longer than the room left of the
// permanent widgets is elided at its end, with the whole message as the
// bar's tooltip; QStatusBar cut it off against the first widget.
class StatusBar : public QStatusBar {
    Q_OBJECT

public:
    explicit StatusBar(QWidget* parent = nullptr);

    // QStatusBar::addPermanentWidget, remembered to keep messages clear of it.
    void addRightWidget(QWidget* widget);
    // The message as drawn: the whole of it, or its elided start.
    QString shownMessage() const;

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    QRect messageRect() const;
    void updateToolTip();

    QList<QPointer<QWidget>> right_;
};
