#pragma once

#include <QString>
#include <QStringList>
#include <QTextStream>

// tdstudio's command-line modes that need no display.
namespace cli {

// --info PATH [--json] [--sha256]: prints every node, leaf and non-tensor
// value of PATH. Returns the process exit code (0, or 1 when anything could
// not be read; the reasons go to `err`).
int printInfo(const QString& path, bool json, bool sha256, QTextStream& out, QTextStream& err);

struct SaveRequest {
    QString source, destination;
    bool archive = false;  // force an archive whatever the name
    QString compression;   // "", stored, deflate, bzip2, lzma or a method number
    int level = -1;
    int threads = 0;
    bool atomic = false;
    bool robustKey = true;
    bool allowOutsideLinks = false;  // copy files linked from outside the source
    QStringList keys;                // subtrees to export: "a/b" or a JSON list ["a/b", "c"]
};

// --save SRC DEST: converts or exports SRC to DEST, progress on `err`.
// Returns 0, or 1 with the reason on `err`.
int save(const SaveRequest& request, QTextStream& err);

}  // namespace cli
