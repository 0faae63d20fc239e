#pragma once

#include <set>
#include <string>

#include "writing/progress.h"
#include "writing/write_plan.h"

namespace tensordict {

// Writes `plan` under the directory `root` (created if needed) with
// `threads` writer threads. Files listed in `keep` (relative paths) already
// hold the right bytes and are not rewritten. Refuses to write through
// symlinks. Throws Error naming the path and the system's reason.
void writeDirectory(const std::string& root, const WritePlan& plan, int threads,
                    ProgressTracker& progress, const std::set<std::string>& keep = {});

// Flushes every file and directory under `root` to stable storage.
void syncTree(const std::string& root);

}  // namespace tensordict
