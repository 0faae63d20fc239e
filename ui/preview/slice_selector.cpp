#include "slice_selector.h"

#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>

SliceSelector::SliceSelector(Mode mode, QWidget* parent)
    : QWidget(parent),
      mode_(mode),
      grid_(new QGridLayout(this)),
      first_(new QComboBox(this)),
      second_(new QComboBox(this)) {
    // Owned from the start: a mode that never lays one out must not leak it.
    first_->hide();
    second_->hide();
    grid_->setContentsMargins(0, 0, 0, 0);
    connect(first_, &QComboBox::currentIndexChanged, this, &SliceSelector::axesChosen);
    connect(second_, &QComboBox::currentIndexChanged, this, &SliceSelector::axesChosen);
}

void SliceSelector::setSlice(const TensorSlice& slice, int reservedDim) {
    slice_ = slice;
    reservedDim_ = reservedDim;
    rebuild();
}

SlicePosition SliceSelector::position() const {
    SlicePosition position;
    for (const int d : slice_.fixedDims())
        if (d != reservedDim_)
            position[d] = slice_.index[static_cast<std::size_t>(d)];
    return position;
}

QString SliceSelector::fileName(const QString& stem, const QString& suffix) const {
    const SlicePosition fixed = position();
    QStringList indices;
    for (int d = 0; d < static_cast<int>(slice_.shape.size()); ++d)
        indices << (fixed.count(d) ? QString::number(fixed.at(d)) : QStringLiteral(":"));
    while (!indices.isEmpty() && indices.back() == ":")
        indices.removeLast();  // numpy's trailing ":" go without saying
    return indices.isEmpty() ? stem + suffix : stem + "[" + indices.join(",") + "]" + suffix;
}

void SliceSelector::setPosition(const SlicePosition& position) {
    bool moved = false;
    {
        const QSignalBlocker quiet(this);  // one sliceChanged for all of them
        for (const auto& [dim, index] : position)
            if (dim != reservedDim_ && dim != slice_.rowDim && dim != slice_.colDim) {
                const TensorSlice before = slice_;
                setIndex(dim, index);
                moved = moved || !(slice_ == before);
            }
    }
    if (moved)
        Q_EMIT sliceChanged(slice_);
}

void SliceSelector::setIndex(int dim, std::int64_t index) {
    if (dim < 0 || dim >= static_cast<int>(slice_.shape.size()))
        return;
    index = std::clamp<std::int64_t>(
        index, 0, std::max<std::int64_t>(0, slice_.shape[static_cast<std::size_t>(dim)] - 1));
    if (slice_.index[static_cast<std::size_t>(dim)] == index)
        return;
    slice_.index[static_cast<std::size_t>(dim)] = index;
    for (QWidget* w : fixedControls_) {
        if (w->property("dim").toInt() != dim)
            continue;
        const QSignalBlocker block(w);
        if (auto* s = qobject_cast<QSlider*>(w))
            s->setValue(static_cast<int>(index));
        if (auto* s = qobject_cast<QSpinBox*>(w))
            s->setValue(static_cast<int>(index));
    }
    Q_EMIT sliceChanged(slice_);
}

int SliceSelector::steppedDim() const {
    int first = -1;
    for (QWidget* w : fixedControls_) {
        if (qobject_cast<QLabel*>(w))
            continue;
        if (w->hasFocus())
            return w->property("dim").toInt();
        if (first < 0)
            first = w->property("dim").toInt();
    }
    return first;
}

bool SliceSelector::step(int delta) {
    const int dim = steppedDim();
    if (dim < 0)
        return false;
    setIndex(dim, slice_.index[static_cast<std::size_t>(dim)] + delta);
    return true;
}

bool SliceSelector::focusIndexBox() {
    const int dim = steppedDim();
    for (QWidget* w : fixedControls_)
        if (auto* box = qobject_cast<QSpinBox*>(w); box && w->property("dim").toInt() == dim) {
            box->setFocus(Qt::ShortcutFocusReason);
            box->selectAll();
            return true;
        }
    return false;
}

void SliceSelector::axesChosen() {
    if (updating_)
        return;
    const int a = first_->currentData().toInt();
    const int b = mode_ == Mode::Plot ? -1 : second_->currentData().toInt();
    if (a >= 0 && a == b) {  // the same dimension twice: swap the other one away
        const int other = a == slice_.rowDim ? slice_.colDim : slice_.rowDim;
        slice_.setDims(a, other == a ? -1 : other);
    } else {
        slice_.setDims(a, b);
    }
    rebuild();
    Q_EMIT sliceChanged(slice_);
}

void SliceSelector::rebuild() {
    updating_ = true;
    qDeleteAll(fixedControls_);
    fixedControls_.clear();
    while (QLayoutItem* item = grid_->takeAt(0)) {
        if (item->widget() && item->widget() != first_ && item->widget() != second_)
            item->widget()->deleteLater();
        delete item;
    }
    const int n = static_cast<int>(slice_.shape.size());
    auto fill = [&](QComboBox* box, int current, bool allowNone) {
        box->clear();
        if (allowNone)
            box->addItem(tr("—"), -1);
        for (int d = 0; d < n; ++d)
            if (d != reservedDim_)
                box->addItem(
                    tr("dim %1 (%2)").arg(d).arg(slice_.shape[static_cast<std::size_t>(d)]), d);
        box->setCurrentIndex(std::max(0, box->findData(current)));
    };
    const bool table = mode_ == Mode::Table;
    fill(first_, slice_.rowDim, table);
    fill(second_, slice_.colDim, table);
    int row = 0;
    if (n >= 1) {
        const QString firstLabel = mode_ == Mode::Table   ? tr("Rows:")
                                   : mode_ == Mode::Image ? tr("Height:")
                                                          : tr("x axis:");
        // Labels shown now, as the combos are (a layout shows new children
        // only at its next pass: a picture taken before had none).
        auto* rowsLabel = new QLabel(firstLabel);
        grid_->addWidget(rowsLabel, row, 0);
        grid_->addWidget(first_, row, 1);
        rowsLabel->show();
        first_->show();
        if (mode_ != Mode::Plot && n >= 2) {
            auto* colsLabel = new QLabel(mode_ == Mode::Table ? tr("Columns:") : tr("Width:"));
            grid_->addWidget(colsLabel, row, 2);
            grid_->addWidget(second_, row, 3);
            colsLabel->show();
            second_->show();
        } else {
            second_->hide();
        }
        ++row;
    } else {
        first_->hide();
        second_->hide();
    }
    for (int d : slice_.fixedDims()) {
        if (d == reservedDim_)
            continue;
        const std::int64_t size = slice_.shape[static_cast<std::size_t>(d)];
        auto* label = new QLabel(tr("dim %1:").arg(d));
        auto* slider = new QSlider(Qt::Horizontal);
        auto* spin = new QSpinBox;
        const int maxIndex = static_cast<int>(std::clamp<std::int64_t>(size - 1, 0, INT32_MAX));
        slider->setRange(0, maxIndex);
        spin->setRange(0, maxIndex);
        spin->setSuffix(tr(" / %1").arg(size - 1));
        slider->setValue(static_cast<int>(slice_.index[static_cast<std::size_t>(d)]));
        spin->setValue(static_cast<int>(slice_.index[static_cast<std::size_t>(d)]));
        for (QWidget* w : {static_cast<QWidget*>(label), static_cast<QWidget*>(slider),
                           static_cast<QWidget*>(spin)}) {
            w->setProperty("dim", d);
            fixedControls_ << w;
        }
        connect(slider, &QSlider::valueChanged, this, [this, d](int v) { setIndex(d, v); });
        connect(spin, &QSpinBox::valueChanged, this, [this, d](int v) { setIndex(d, v); });
        grid_->addWidget(label, row, 0);
        grid_->addWidget(slider, row, 1, 1, 2);
        grid_->addWidget(spin, row, 3);
        // Shown now, not at the layout's next pass: Go to Slice can focus
        // the index box of a leaf selected a moment ago.
        for (QWidget* w : {static_cast<QWidget*>(label), static_cast<QWidget*>(slider),
                           static_cast<QWidget*>(spin)})
            w->setVisible(true);
        ++row;
    }
    grid_->setColumnStretch(1, 1);
    updating_ = false;
}
