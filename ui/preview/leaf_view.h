#pragma once

#include <QObject>
#include <QString>
#include <QWidget>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "slice_selector.h"
#include "tensor_slice.h"
#include "tensordict/compare.h"
#include "tensordict/tensordict.h"

class QLabel;
class QTabWidget;
class SliceSelector;

// One side of what a leaf view shows: a tensor leaf and its bytes, read
// (mapped or inflated) on a worker before any view touches them.
struct LeafSide {
    const tensordict::Node* node = nullptr;
    tensordict::LeafBytes bytes;
    tensordict::DType dtype() const { return node->leaf().dtype; }
    const std::vector<std::int64_t>& shape() const { return node->leaf().shape; }
    std::int64_t numel() const { return node->leaf().numel; }
};

// What a leaf view shows: one leaf, or two of the same shape (A, and B to
// compare it with). The owners keep the nodes' trees alive.
struct ShownLeaves {
    std::shared_ptr<const tensordict::TensorDict> ownerA, ownerB;
    LeafSide a;
    std::optional<LeafSide> b;
    tensordict::Tolerance tolerance;
    bool isPair() const { return b.has_value(); }
};

// One way to show a leaf: a tab of the leaf view. A mode is one class and
// one line in leaf_modes.cpp; the view, the window's View menu, --view and
// the screenshot's wait for a drawn view all take it from there.
class LeafMode : public QObject {
    Q_OBJECT

public:
    ~LeafMode() override;
    virtual QWidget* widget() = 0;
    // Whether this mode can show such leaves (`pair`: A and B of this shape).
    virtual bool canShow(const std::vector<std::int64_t>& shape, std::int64_t numel,
                         bool pair) const = 0;
    // How well this mode suits such leaves, for a kind of shape with no mode
    // chosen yet: the enabled mode of the highest priority opens (the first
    // in tab order on a tie). The table, which shows anything, says 1.
    virtual int priority(const std::vector<std::int64_t>& shape, bool pair) const {
        (void)shape, (void)pair;
        return 0;
    }
    // Takes the leaves; cheap. Work that needs the tab on screen waits for activate().
    virtual void setLeaves(const ShownLeaves& leaves) = 0;
    virtual void clear() = 0;
    // Its tab came on screen / went away: start what is stale / stop what runs.
    virtual void activate() {}
    virtual void deactivate() {}
    // Background drawing of the current leaves is under way; drawn() follows.
    virtual bool isDrawing() const { return false; }
    // The slice the window's Next/Previous Slice step (nullptr: the table's).
    virtual SliceSelector* sliceSelector() const { return nullptr; }
    // Several leaves of one length at once (only the plot can).
    virtual bool showSeries(const std::vector<LeafSide>&) { return false; }
    // Another mode's current slice (the table's, which the statistics follow).
    virtual void setCurrentSlice(const TensorSlice&) {}
    // The leaf's one slice position, as another mode moved it: this mode
    // takes the indices of the dimensions it has sliders for.
    virtual void setSlicePosition(const SlicePosition&) {}

Q_SIGNALS:
    // This mode's current slice changed (told to the other modes).
    void currentSliceChanged(const TensorSlice& slice);
    // This mode's sliders moved (told to the other modes: one position a leaf).
    void slicePositionChanged(const SlicePosition& position);
    // What the mode shows of the current leaves is drawn in full.
    void drawn();
    // The leaf's file lost data under its mapping while it was read.
    void sourceChanged();
};

// A registered mode: its name (settings, --view), its title (tab, View
// menu) and how to make one for a view.
struct LeafModeType {
    QString name;   // "table"
    QString title;  // "Table"
    std::function<std::unique_ptr<LeafMode>(QWidget* parent)> make;
};
// Every mode, in tab order: the built-in ones (leaf_modes.cpp), then those
// registered since.
const std::vector<LeafModeType>& leafModeTypes();
// Adds a mode after the others, for views made from now on (call it before
// the window opens; GUI thread only).
void registerLeafMode(LeafModeType type);
// The index of the mode called `name`, or -1.
int leafModeIndex(const QString& name);

// The built-in modes' indices (leaf_modes.cpp registers them first), for
// the leaf view and the panels that show one.
struct BuiltinLeafModes {
    using Mode = int;
    static constexpr Mode TableMode = 0;
    static constexpr Mode ImageMode = 1;
    static constexpr Mode PlotMode = 2;
    static constexpr Mode StatisticsMode = 3;
};

// The tabs of the registered modes over one leaf or a pair: the mode
// remembered per kind of shape (under `settingsPrefix`), tabs enabled by
// what each mode can show, work started only in the tab on screen, and one
// slice position that every mode's sliders follow.
class LeafView : public QWidget, public BuiltinLeafModes {
    Q_OBJECT

public:
    // `settingsPrefix`: "preview/mode/" or "compare/mode/".
    LeafView(QString settingsPrefix, QWidget* parent = nullptr);
    ~LeafView() override;

    void setLeaves(const ShownLeaves& leaves);
    // Only the modes that can show several leaves (the plot).
    bool showSeries(const ShownLeaves& owner, const std::vector<LeafSide>& leaves);
    void clear();
    const ShownLeaves& leaves() const { return leaves_; }
    bool hasLeaves() const { return leaves_.a.node != nullptr; }

    int mode() const;
    // While no leaf is shown yet (it is being read), a mode asked for is
    // kept and shown when the leaf arrives, if the leaf can show it.
    void setMode(int mode);
    bool canShow(int mode) const;
    // The enabled mode of the highest priority for such leaves.
    int preferredMode(const std::vector<std::int64_t>& shape, bool pair) const;
    LeafMode* currentMode() const;
    LeafMode* modeAt(int index) const;
    template <typename M>
    M* find() const {
        for (const auto& m : modes_)
            if (auto* found = qobject_cast<M*>(m.get()))
                return found;
        return nullptr;
    }
    // The slice the window steps: the current mode's, else the table's.
    SliceSelector* sliceSelector() const;
    // Where the sliders of every mode stand (one position a leaf).
    const SlicePosition& slicePosition() const { return position_; }

    // "0d", "1d", "2d", "hwc", "chw" or "nd": which modes suit a shape.
    static QString shapeKind(const std::vector<std::int64_t>& shape);

Q_SIGNALS:
    void sourceChanged();

private:
    // Forgets the shown leaves, keeping a mode asked for the one on its way.
    void clearLeaves();
    void modeChosen(int index);
    void startShown();
    void enableTabs(const std::function<bool(LeafMode&)>& can);

    QString settingsPrefix_;
    QTabWidget* tabs_;
    std::vector<std::unique_ptr<LeafMode>> modes_;
    ShownLeaves leaves_;
    bool series_ = false;
    bool restoringMode_ = false;
    bool startPending_ = false;
    std::optional<int> modeAsked_;  // by setMode() before the leaf arrived
    int active_ = -1;
    SlicePosition position_;  // where the modes' sliders stand, merged
};
