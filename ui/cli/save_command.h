#pragma once

#include <QString>
#include <QStringList>
#include <QTextStream>
#include <optional>

#include "tensordict/save.h"

namespace cli {

// tdstudio --save SRC DEST [--archive] [--compression M] [--level N] ...
struct SaveRequest {
    QString source, destination;
    bool archive = false;            // force an archive whatever the name
    std::optional<int> compression;  // zip method (tensordict::kZip*); none: stored
    int level = -1;                  // -1: the method's default
    int threads = 0;
    bool atomic = false;
    bool robustKey = true;
    bool allowOutsideLinks = false;  // copy files linked from outside the source
    QString keyName;                 // a file of one tensor is saved under this key ("": refused)
    bool skipObjects = false;        // leave out a checkpoint's Python objects, naming them
    QStringList keys;                // subtrees to export: "a/b" or a JSON list ["a/b", "c"]
    // What to write (--format); none: by DEST's name.
    std::optional<tensordict::SaveFormat> format;
    std::uint64_t maxShardSize = 5'000'000'000;  // --max-shard-size, for --format hf
    bool validRows = false;  // --valid-rows: the source must be a replay buffer dump
};

// How progress is shown: one line rewritten in place (a terminal), or
// plain lines for logs and pipes.
enum class ProgressStyle { Terminal, Lines };

// The style that suits standard error: Terminal when it is a terminal.
ProgressStyle progressStyleForStderr();

// Converts or exports the request's source to its destination, progress on
// `err`. Returns 0, or 1 with the reason on `err`.
int save(const SaveRequest& request, QTextStream& err, ProgressStyle style);

}  // namespace cli
