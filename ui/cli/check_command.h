#pragma once

#include <QString>
#include <QTextStream>

namespace cli {

// tdstudio --check PATH [--json] [--threads N] [--repair [--dry-run]]
struct CheckRequest {
    QString path;
    bool json = false;    // {sound, checked, problems} as one JSON document
    int threads = 0;      // 0: one per core
    bool repair = false;  // fix what can be fixed without guessing, then check again
    bool dryRun = false;  // with repair: say what it would do, change nothing
    bool strict = false;  // warnings fail too
};

// Checks the request's path and prints one line per problem and a summary
// (or the JSON document). Returns the exit code: 0 when there is nothing
// worse than warnings (strict: nothing at all), 1 when errors were found
// (after a repair: are left), 2 when the path cannot be checked at all.
int check(const CheckRequest& request, QTextStream& out, QTextStream& err);

}  // namespace cli
