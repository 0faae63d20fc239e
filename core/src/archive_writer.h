#pragma once

#include <string>

#include "progress.h"
#include "write_plan.h"

namespace tensordict {

// Writes `plan` (in archive order) as a .tdz zip at `path` with libzip:
// no directory entries, meta.json and sidecars stored, .memmap entries
// stored with 64-byte aligned payloads (padding extra field 0x6474 in the
// local and central headers) or compressed with `method` (deflate, bzip2, or
// LZMA as method 14, as Python's zipfile writes it), compressed on `threads`
// threads ahead of the writer. Throws Error naming the path or entry.
void writeArchive(const std::string& path, const WritePlan& plan, int method, int level,
                  int threads, ProgressTracker& progress);

}  // namespace tensordict
