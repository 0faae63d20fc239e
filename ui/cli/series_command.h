#pragma once

#include <QString>
#include <QStringList>
#include <QTextStream>

namespace cli {

// tdstudio --series F1 F2 … [--key K …] [--json] [--threads N]
struct SeriesRequest {
    QStringList
        paths;  // checkpoints of any format that opens; one folder: its members, in natural order
    QStringList keys;  // subtrees to follow: "a/b" or a JSON list; repeatable
    bool json = false;
    int threads = 0;  // 0: one per core
};

// Prints, for each tensor key and each step, its norm, mean, std, min and
// max, and against the step before its largest change, the fraction of
// elements changed and the cosine similarity ("-", or null in JSON, where
// the key is missing or for the first step). Returns 0, or 1 when a step
// cannot be read (the reason on `err`).
int series(const SeriesRequest& request, QTextStream& out, QTextStream& err);

}  // namespace cli
