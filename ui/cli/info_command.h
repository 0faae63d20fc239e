#pragma once

#include <QString>
#include <QTextStream>

namespace cli {

// tdstudio --info PATH [--json] [--sha256] [--stats]
struct InfoRequest {
    QString path;
    bool json = false;    // one JSON document (the fixtures' .expected.json conventions)
    bool sha256 = false;  // the sha256 of each leaf's raw C-order bytes
    bool stats = false;   // min, max, mean, std, NaN and Inf counts of each leaf's values
    // The process ends after the listing (tdstudio --info): the tree is kept
    // until then, for the kernel to take back at once, rather than freed
    // node by node (72,000 nodes took a tenth of the listing's time).
    bool processEndsAfter = false;
};

// Prints every node, leaf and non-tensor value of the request's path.
// Returns the process exit code (0, or 1 when anything could not be read;
// the reasons go to `err`).
int printInfo(const InfoRequest& request, QTextStream& out, QTextStream& err);

}  // namespace cli
