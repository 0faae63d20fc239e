#include "leaf_view.h"

#include <QSettings>
#include <QTabWidget>
#include <QVBoxLayout>

#include "image_view.h"

LeafMode::~LeafMode() = default;

int leafModeIndex(const QString& name) {
    const auto& types = leafModeTypes();
    for (std::size_t i = 0; i < types.size(); ++i)
        if (types[i].name == name)
            return static_cast<int>(i);
    return -1;
}

LeafView::LeafView(QString settingsPrefix, QWidget* parent)
    : QWidget(parent), settingsPrefix_(std::move(settingsPrefix)), tabs_(new QTabWidget) {
    for (const LeafModeType& type : leafModeTypes()) {
        modes_.push_back(type.make(this));
        LeafMode* mode = modes_.back().get();
        tabs_->addTab(mode->widget(), type.title);
        connect(mode, &LeafMode::sourceChanged, this, &LeafView::sourceChanged);
        connect(mode, &LeafMode::currentSliceChanged, this, [this, mode](const TensorSlice& s) {
            for (const auto& other : modes_)
                if (other.get() != mode)
                    other->setCurrentSlice(s);
        });
        // One leaf, one slice position: a slider moved in one tab moves the others'.
        connect(mode, &LeafMode::slicePositionChanged, this,
                [this, mode](const SlicePosition& moved) {
                    for (const auto& [dim, index] : moved)
                        position_[dim] = index;
                    for (const auto& other : modes_)
                        if (other.get() != mode)
                            other->setSlicePosition(position_);
                });
    }
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(tabs_);
    connect(tabs_, &QTabWidget::currentChanged, this, &LeafView::modeChosen);
}

// The modes go first; their widgets belong to the tabs.
LeafView::~LeafView() = default;

QString LeafView::shapeKind(const std::vector<std::int64_t>& shape) {
    const std::size_t n = shape.size();
    if (n == 0)
        return "0d";
    if (n == 1)
        return "1d";
    int channel = -1;
    ImageView::canShow(shape, &channel);
    if (channel >= 0)
        return channel == static_cast<int>(n) - 1 ? "hwc" : "chw";
    if (n == 2)
        return "2d";
    return "nd";
}

void LeafView::clear() {
    modeAsked_.reset();  // asked for the leaf before
    clearLeaves();
}

void LeafView::clearLeaves() {
    if (active_ >= 0)
        modes_[static_cast<std::size_t>(active_)]->deactivate();
    active_ = -1;
    leaves_ = {};
    series_ = false;
    position_.clear();
    for (auto& mode : modes_)
        mode->clear();
}

void LeafView::enableTabs(const std::function<bool(LeafMode&)>& can) {
    for (std::size_t i = 0; i < modes_.size(); ++i)
        tabs_->setTabEnabled(static_cast<int>(i), can(*modes_[i]));
}

void LeafView::setLeaves(const ShownLeaves& leaves) {
    clearLeaves();
    leaves_ = leaves;
    const auto& shape = leaves.a.shape();
    const std::int64_t numel = leaves.a.numel();
    enableTabs([&](LeafMode& m) { return m.canShow(shape, numel, leaves.isPair()); });
    for (std::size_t i = 0; i < modes_.size(); ++i)
        if (tabs_->isTabEnabled(static_cast<int>(i)))
            modes_[i]->setLeaves(leaves);

    // The mode last chosen for this kind of shape (a name, or an index as
    // earlier versions kept it), else the one that suits it best.
    const QVariant kept = QSettings().value(settingsPrefix_ + shapeKind(shape));
    int wanted = preferredMode(shape, leaves.isPair());
    if (kept.isValid()) {
        bool isIndex = false;
        const int index = kept.toInt(&isIndex);
        wanted = isIndex ? index : leafModeIndex(kept.toString());
    }
    if (const auto asked = std::exchange(modeAsked_, std::nullopt); asked && canShow(*asked))
        wanted = *asked;
    if (wanted < 0 || wanted >= tabs_->count() || !tabs_->isTabEnabled(wanted))
        wanted = TableMode;
    restoringMode_ = true;
    tabs_->setCurrentIndex(wanted);
    restoringMode_ = false;
    modeChosen(wanted);
}

bool LeafView::showSeries(const ShownLeaves& owner, const std::vector<LeafSide>& leaves) {
    clear();
    leaves_ = owner;
    leaves_.a = leaves.front();
    series_ = true;
    int shown = -1;
    for (std::size_t i = 0; i < modes_.size(); ++i) {
        const bool can = modes_[i]->showSeries(leaves);
        tabs_->setTabEnabled(static_cast<int>(i), can);
        if (can && shown < 0)
            shown = static_cast<int>(i);
    }
    if (shown < 0)
        return false;
    restoringMode_ = true;
    tabs_->setCurrentIndex(shown);
    restoringMode_ = false;
    modeChosen(shown);
    return true;
}

int LeafView::mode() const {
    return tabs_->currentIndex();
}

void LeafView::setMode(int mode) {
    if (!hasLeaves()) {
        modeAsked_ = mode;
        return;
    }
    tabs_->setCurrentIndex(mode);
}

int LeafView::preferredMode(const std::vector<std::int64_t>& shape, bool pair) const {
    int best = TableMode, bestPriority = -1;
    for (std::size_t i = 0; i < modes_.size(); ++i) {
        if (!tabs_->isTabEnabled(static_cast<int>(i)))
            continue;
        const int p = modes_[i]->priority(shape, pair);
        if (p > bestPriority)
            best = static_cast<int>(i), bestPriority = p;
    }
    return best;
}

bool LeafView::canShow(int mode) const {
    if (mode < 0 || mode >= tabs_->count())
        return false;
    return !hasLeaves() || tabs_->isTabEnabled(mode);
}

LeafMode* LeafView::modeAt(int index) const {
    return index >= 0 && index < static_cast<int>(modes_.size())
               ? modes_[static_cast<std::size_t>(index)].get()
               : nullptr;
}

LeafMode* LeafView::currentMode() const {
    return modeAt(mode());
}

SliceSelector* LeafView::sliceSelector() const {
    if (LeafMode* m = currentMode(); m && m->sliceSelector())
        return m->sliceSelector();
    return modes_.front()->sliceSelector();
}

void LeafView::modeChosen(int index) {
    if (!hasLeaves())
        return;
    if (!restoringMode_ && !series_)  // remember the choice for this kind of shape
        QSettings().setValue(settingsPrefix_ + shapeKind(leaves_.a.shape()),
                             leafModeTypes()[static_cast<std::size_t>(index)].name);
    if (active_ >= 0 && active_ != index)
        modes_[static_cast<std::size_t>(active_)]->deactivate();
    active_ = index;
    // Queued: when a mode is restored and then overridden at once (--view),
    // only the tab finally shown starts its work, once.
    if (!startPending_) {
        startPending_ = true;
        QMetaObject::invokeMethod(this, &LeafView::startShown, Qt::QueuedConnection);
    }
}

void LeafView::startShown() {
    startPending_ = false;
    if (!hasLeaves() || active_ != mode())
        return;
    if (LeafMode* m = currentMode())
        m->activate();
}
