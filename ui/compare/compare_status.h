#pragma once

#include <QColor>
#include <QIcon>
#include <QString>

#include "compare_tree.h"

class QPalette;

// How comparison results look, shared by the tree, the panel and the status bar.
namespace compare_status {

// "same", "changed", "only in A", "only in B", "unreadable", "comparing…", "not compared"
QString statusText(CompareTree::Status status);
// The status column's text: the status, plus the differences inside a collection.
QString itemStatusText(const CompareTree::Item& item);
// Red for only in A (removed), green for only in B (added), amber for changed.
QColor statusColor(CompareTree::Status status);
// A row's background: the status colour, faint over the palette's base.
QColor rowTint(CompareTree::Status status, const QPalette& palette);
// A coloured dot with a sign; a ring for a collection with differences inside.
QIcon statusIcon(CompareTree::Status status, bool differencesInside);

// One side of a key: "float32 [4, 3]", "TensorDict [4]", "non-tensor", or "—" when absent.
QString sideText(const tensordict::Node* node);
// What differs: "dtype, shape", "values: 3 of 12 differ, max |A − B| 0.5"; the error.
QString differenceText(const CompareTree::Item& item);
// "3 changed, 1 only in A, 2 only in B" ("no differences" when none).
QString countsText(const CompareTree::Counts& counts);

}  // namespace compare_status
