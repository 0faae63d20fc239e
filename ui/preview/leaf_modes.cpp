// The leaf view's modes, in tab order: a new way to show a leaf is one
// LeafMode class and one line here. The first four keep the indices of
// LeafView::Mode.

#include "leaf_view.h"
#include "modes/image_mode.h"
#include "modes/plot_mode.h"
#include "modes/statistics_mode.h"
#include "modes/table_mode.h"

namespace {

template <typename M>
LeafModeType mode(const char* name, const char* title) {
    return {QString::fromLatin1(name), LeafView::tr(title),
            [](QWidget* parent) { return std::make_unique<M>(parent); }};
}

std::vector<LeafModeType>& registry() {
    static std::vector<LeafModeType> types = {
        mode<TableLeafMode>("table", QT_TRANSLATE_NOOP("LeafView", "Table")),
        mode<ImageLeafMode>("image", QT_TRANSLATE_NOOP("LeafView", "Image")),
        mode<PlotLeafMode>("plot", QT_TRANSLATE_NOOP("LeafView", "Plot")),
        mode<StatisticsLeafMode>("statistics", QT_TRANSLATE_NOOP("LeafView", "Statistics")),
    };
    return types;
}

}  // namespace

const std::vector<LeafModeType>& leafModeTypes() {
    return registry();
}

void registerLeafMode(LeafModeType type) {
    registry().push_back(std::move(type));
}
