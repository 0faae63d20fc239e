#pragma once

#include <QString>
#include <QStringList>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "check_command.h"
#include "diff_command.h"
#include "info_command.h"
#include "load_settings.h"
#include "save_command.h"
#include "series_command.h"

// tdstudio's command line, parsed and checked in full before any
// application object exists: a mistake is reported at once, with the
// option and what it accepts, and never needs a display.
namespace cli {

enum class Mode { Gui, Info, Save, Diff, Check, Series, Help, Version };

// tdstudio [PATH] [--select K] [--view MODE] [--compare B] [--screenshot FILE]
//          [--window-size WxH]
struct WindowRequest {
    QString path;                 // empty: an empty window
    QStringList select;           // the key path to select once PATH is open; empty: none
    QString selectText;           // --select as given, for messages
    std::optional<QString> view;  // a name of viewNames (parseArguments)
    QString compare;              // open beside PATH to compare them
    QString screenshot;           // save the window as a PNG once it shows what was asked, and exit
    int width = 0, height = 0;    // --window-size; 0: the window's own size
};

struct Options {
    Mode mode = Mode::Gui;
    WindowRequest window;   // Mode::Gui
    InfoRequest info;       // Mode::Info
    SaveRequest save;       // Mode::Save
    DiffRequest diff;       // Mode::Diff
    CheckRequest check;     // Mode::Check
    SeriesRequest series;   // Mode::Series
    bool insecure = false;  // --insecure: HTTPS certificates not checked (test servers only)
    ReplayRows replayRows;  // --all-rows, --storage-order
    // From TDSTUDIO_HTTP_* and --insecure, filled in by app/main.cpp once
    // the command line is valid (never by parsing, which reads no environment).
    tensordict::TransportOptions transport;
};

struct ParseResult {
    Options options;
    QString error;  // why the command line is refused, naming the option; empty when valid
};

// Parses tdstudio's arguments (arguments[0] is the program). Needs no
// QCoreApplication. Qt's own GUI arguments (-platform, -style, ...) are
// left to QApplication.
// `viewNames`: what --view accepts, the window's leaf modes by name
// ("table", "image", ...: leafModeTypes() in the window's code), asked
// only when --view is given (the window's code is loaded on demand).
ParseResult parseArguments(const QStringList& arguments,
                           const std::function<QStringList()>& viewNames);
ParseResult parseArguments(const QStringList& arguments, const QStringList& viewNames);

// A key as --key and --select take it: "a/b", or a JSON list of strings
// such as ["a/b", "c"] for keys that contain '/'. nullopt, with the reason
// in `error`, when it is neither.
std::optional<QStringList> parseKeyPath(const QString& key, QString* error);
// Every key of --key, as the library takes key paths. Throws tensordict::Error.
std::vector<std::vector<std::string>> keyPaths(const QStringList& keys);

// The usage lines of every mode, printed before a command-line error.
QString usageText();
// What --help prints.
QString helpText();

}  // namespace cli
