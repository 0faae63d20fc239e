#pragma once

#include <QString>
#include <QStringList>
#include <QTextStream>

namespace cli {

// tdstudio --diff A B [--rtol R] [--atol T] [--equal-nan] [--key K ...] [--json]
struct DiffRequest {
    QString a, b;     // directories or .tdz archives, in any mix
    double rtol = 0;  // as torch.testing.assert_close: |a - b| <= atol + rtol * |b|
    double atol = 0;
    bool equalNan = false;
    QStringList keys;  // subtrees to compare: "a/b" or a JSON list; repeatable
    bool json = false;
    int threads = 0;  // 0: one per core
};

// Compares and prints the differences to `out`. Returns diff(1)'s exit
// codes: 0 equal, 1 different, 2 on an error (the reason on `err`).
int diff(const DiffRequest& request, QTextStream& out, QTextStream& err);

}  // namespace cli
