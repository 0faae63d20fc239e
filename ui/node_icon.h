#pragma once

#include <QIcon>

#include "tensordict/node.h"

// The icon of a node's kind in the key trees (folder, file, value, warning).
// Made once and shared: a style's standard icon is a new QIcon that decodes
// its PNGs again, which made painting a screenful of rows cost milliseconds.
// GUI thread only.
QIcon nodeKindIcon(tensordict::NodeKind kind);
// A key an integrity check found broken: a red mark.
QIcon flaggedIcon();
