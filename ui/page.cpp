#include "page.h"

#include "slice_selector.h"

bool Page::focusSliceEntry() {
    SliceSelector* selector = currentSliceSelector();
    return selector && selector->focusIndexBox();
}
