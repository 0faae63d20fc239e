#pragma once

// Verifying a tensordict against everything its format promises, as
// `zip -T`, `git fsck` or SQLite's integrity_check do for theirs: every byte
// read once (each archive entry's CRC-32, each leaf file's size), the zip
// structure (local headers against the central directory, overlaps, names,
// data descriptors, alignment), every meta.json against the files it names
// (missing, short or long files, files nothing names; files are looked
// for under the names Python looks for), what would not load elsewhere
// (__main__ classes, pickle sidecars, links out of the dataset, keys Python
// drops) and temporaries an interrupted save left beside it. The problems are listed, never fixed;
// repair() fixes what can be fixed without guessing.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tensordict/cancel.h"
#include "tensordict/transport_options.h"

namespace tensordict {

enum class Severity { Error, Warning };

// One thing wrong, named so that a person knows where to look and what to do.
struct Problem {
    Severity severity = Severity::Error;
    // What is wrong, for scripts: "crc_mismatch", "short_file", "orphan", ...
    // (check.cpp lists every kind with what it means).
    std::string kind;
    std::string file;              // the file or archive entry: "a/b.memmap", "x.tdz:a.memmap"
    std::vector<std::string> key;  // the key it belongs to; empty when none does
    std::string message;           // what is wrong and what to do about it
    bool repairable = false;       // repair() fixes it
};

struct CheckProgress {
    std::uint64_t bytesDone = 0, bytesTotal = 0;
    std::string current;  // the file or entry being read
};

struct CheckOptions {
    int threads = 0;  // 0: one per core
    // Called from the checking threads now and then.
    std::function<void(const CheckProgress&)> progress;
    CancelToken cancel;
    // How remote locations are reached (certificates, credentials).
    TransportOptions transport{};
};

struct CheckReport {
    std::string path;    // as given
    std::string format;  // "archive", "directory", or the registry's name of another format
    // What was read: files on disk (a directory's, or the archive itself),
    // archive entries, and bytes (each payload once).
    std::uint64_t files = 0, entries = 0, bytes = 0;
    bool zipArchive = false;        // the input is a zip archive (`entries` counts its entries)
    std::vector<Problem> problems;  // errors first, then warnings, each in file order
    bool cancelled = false;

    bool sound() const { return problems.empty() && !cancelled; }
    std::size_t errorCount() const;
    std::size_t warningCount() const;
};

// Checks the tensordict at `path` (a memmap directory, a .tdz archive, or
// any file the registry opens). Throws Error when `path` cannot be checked at
// all (it does not exist, or it is neither a directory nor a file that a
// registered format reads); everything else wrong is a Problem in the report.
CheckReport check(const std::string& path, const CheckOptions& options = {});

struct RepairOptions {
    bool dryRun = false;  // say what would be done, change nothing
    CancelToken cancel;   // stops before the archive is replaced (it stays as it was)
};

struct RepairReport {
    std::vector<std::string> done;  // "re-stamped the CRC-32 of a.memmap", ...
    std::vector<Problem> left;      // what repair cannot fix, with what would
};

// Fixes the repairable problems of `report` (a check of `report.path`):
// re-stamps stale CRC-32s in an archive's local headers, data descriptors
// and central directory, exactly the bytes tensordict's
// refresh_archive_checksums() rewrites, into a copy beside the archive that
// is then renamed over it (a failure leaves the archive as it was); removes
// stale temporaries that a tdstudio or tensordict save left (no process
// holds them, and they are over an hour old). Never changes a tensor's bytes
// or a meta.json. Throws Error naming the file on failure; the archive is
// then as it was, unless the error says the rename was done.
RepairReport repair(const CheckReport& report, const RepairOptions& options = {});

}  // namespace tensordict
