#pragma once

#include <QString>

#include "tensordict/error.h"

// Why a location could not be opened, as a user reads it: first what is
// wrong, in words that say what to do, then the library's exact reason.
struct OpenFailure {
    QString headline;  // "This file is not a tensordict archive."
    QString detail;    // "data.tdz: not a zip archive: too short (5 bytes) …"
};

// Looks at `path` on disk to say which it is: missing, unreadable, a folder
// without meta.json, a file of a kind tdstudio does not read. Touches the
// disk: call it off the GUI thread.
OpenFailure describeOpenFailure(const QString& path, const tensordict::Failure& failure);
// A failure as the command line prints it: its text with control
// characters escaped (a hostile entry name cannot write to the terminal),
// and for a refused or untrusted server the setting that changes the answer
// (the library knows no environment variable of tdstudio's).
QString commandLineFailure(const std::exception& e);
// The one sentence that says what tdstudio opens (the welcome page, the
// status bar, File > Open File…, a file it does not read).
QString openableSentence();
// Whether `location` is an http(s):// URL (a web server, whose refusals
// tdstudio's TDSTUDIO_HTTP_* settings answer).
bool isWebUrl(const QString& location);
// Whether `location` is remote: an http(s):// or s3:// URL rather than a path.
bool isRemote(const QString& location);
// A path's or URL's file name, and where it is (its folder, or the URL up to it).
QString locationName(const QString& location);
QString locationFolder(const QString& location);
