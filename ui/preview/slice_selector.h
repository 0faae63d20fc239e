#pragma once

#include <QWidget>
#include <map>

#include "tensor_slice.h"

// Where a view stands in a leaf: the index of each dimension it fixes
// (those with a slider), by dimension. One leaf has one position, shared by
// every view (LeafView).
using SlicePosition = std::map<int, std::int64_t>;

class QComboBox;
class QGridLayout;
class QSlider;
class QSpinBox;

// Maps a tensor's dimensions to the axes of a view: which dimension runs
// down the rows (or the image's height, or the plot's x axis), which across,
// and a slider with a spin box for every other dimension.
class SliceSelector : public QWidget {
    Q_OBJECT

public:
    enum class Mode { Table, Image, Plot };
    explicit SliceSelector(Mode mode, QWidget* parent = nullptr);

    // Starts over for `shape` with `slice`; `reservedDim` (image channels) gets no control.
    void setSlice(const TensorSlice& slice, int reservedDim = -1);
    const TensorSlice& slice() const { return slice_; }
    // Sets the index of a fixed dimension (as the slider would).
    void setIndex(int dim, std::int64_t index);
    // The indices of the dimensions this selector has sliders for.
    SlicePosition position() const;
    // Takes another view's position for the dimensions this one has sliders
    // for (the others are its axes); sliceChanged() once if one moved.
    void setPosition(const SlicePosition& position);
    // A file name for what is shown: `stem` with the fixed indices as numpy
    // writes them ("images[27].png" for images[27, :, :, :]), then `suffix`.
    QString fileName(const QString& stem, const QString& suffix) const;
    // The dimension that next/previous slice step: the one whose slider or
    // index box has focus, else the first with a slider; -1 when none has one.
    int steppedDim() const;
    // Moves the stepped dimension's index by `delta` (clamped); false when there is none.
    bool step(int delta);
    // Focuses the stepped dimension's index box with its text selected, to type an index.
    bool focusIndexBox();

Q_SIGNALS:
    void sliceChanged(const TensorSlice& slice);

private:
    void rebuild();
    void axesChosen();

    Mode mode_;
    TensorSlice slice_;
    int reservedDim_ = -1;
    QGridLayout* grid_;
    QComboBox* first_;   // rows / height / x
    QComboBox* second_;  // columns / width (not in plot mode)
    QList<QWidget*> fixedControls_;
    bool updating_ = false;
};
