#pragma once

#include <QString>
#include <QTextStream>

// tdstudio's command-line modes that need no display.
namespace cli {

// --info PATH [--json] [--sha256]: prints every node, leaf and non-tensor
// value of PATH. Returns the process exit code (0, or 1 when anything could
// not be read; the reasons go to `err`).
int printInfo(const QString& path, bool json, bool sha256, QTextStream& out, QTextStream& err);

}  // namespace cli
