#pragma once

#include <QString>
#include <QStringList>

class QLineEdit;
class QModelIndex;
class QTreeView;
class SliceSelector;

// What the main window shows in its centre: the open tensordict alone
// (DocumentPage) or its comparison with another (CompareView). The window's
// menus act on the page on screen through this interface, never by asking
// which page it is; a new kind of page is one more implementation.
class Page {
public:
    virtual ~Page() = default;

    virtual QTreeView* treeView() const = 0;
    virtual QLineEdit* filterEdit() const = 0;
    // Whether a key is selected, and its path ({} for the root).
    virtual bool hasCurrentKey() const = 0;
    virtual QStringList currentKeyPath() const = 0;
    virtual bool selectKeyPath(const QStringList& path) = 0;
    // View > Table … Statistics: shows the registered leaf mode `mode`, or
    // says why it cannot ("" when it is shown).
    virtual QString showMode(int mode) = 0;
    // The slice slider of the view on screen; nullptr when it shows the whole leaf.
    virtual SliceSelector* currentSliceSelector() const = 0;
    // View > Go to Slice: focuses where a slice is typed (the current
    // slider's index box); false when there is none.
    virtual bool focusSliceEntry();
    // View > Next Difference (F3): moves to the next element that differs,
    // or says why it cannot ("" when it moves).
    virtual QString nextDifference();

protected:
    // Makes `row` the current row and the only one selected, shown on
    // screen. Whatever modifier keys are held: a shortcut's Ctrl (Ctrl+W)
    // would otherwise add the row to the selection.
    static void selectOnly(QTreeView* tree, const QModelIndex& row);
};
