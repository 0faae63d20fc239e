#pragma once

#include <QObject>
#include <QSet>
#include <QTimer>

class QTreeView;

// Sizes a key tree's columns so that keys stay readable at any width. The
// other columns are as wide as their contents (Qt measures the rows on
// screen), the key column takes the rest, but never less than its keys
// need, up to half the view: past that the view scrolls sideways rather
// than squeezing the keys to icons. Keys too long even then are elided in
// the middle (the model's tooltip has the whole key path). A column the
// user has dragged keeps its width until the next tree.
class KeyColumns : public QObject {
    Q_OBJECT

public:
    KeyColumns(QTreeView* tree, int keyColumn);

    // Sizes the columns now (it also happens by itself, once per event-loop
    // pass, when the view is resized, rows come or go, or a row opens).
    void fit();
    // The width the key column needs for the keys on screen.
    int keyWidthNeeded() const;

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void scheduleFit() { fitTimer_.start(); }

    QTreeView* tree_;
    // The tree's viewport, compared by address only: its events arrive
    // while the tree is being destroyed, when asking the tree is undefined.
    QObject* viewport_;
    int keyColumn_;
    QSet<int> draggedByUser_;
    bool fitting_ = false;
    QTimer fitTimer_;
};
