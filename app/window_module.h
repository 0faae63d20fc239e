#pragma once

// The window module's entry points: what `tdstudio` (main.cpp) looks up in
// tdstudio-window.so once it has to open the window, or to know the
// names --view accepts. Both are built from one tree, so C++ types cross.

#include <QStringList>

#include "options.h"

#define TDSTUDIO_WINDOW_EXPORT __attribute__((visibility("default")))

extern "C" {
// The window's leaf modes by name ("table", "image", ...), appended.
TDSTUDIO_WINDOW_EXPORT void tdstudio_window_view_names(QStringList* names);
// Opens the window as `options` ask (Mode::Gui) and runs it to the end.
TDSTUDIO_WINDOW_EXPORT int tdstudio_window_run(int argc, char** argv, const cli::Options* options);
}
