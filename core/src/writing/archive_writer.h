#pragma once

#include <string>

#include "writing/progress.h"
#include "writing/write_plan.h"

namespace tensordict {

// Writes `plan` (in archive order) as a .tdz zip at `path` (created or
// truncated), laid out as zip_layout.h describes: no directory entries,
// meta.json and sidecars stored, .memmap entries stored with 64-byte aligned
// payloads or compressed with `method` (deflate, bzip2, or LZMA as method 14,
// as Python's zipfile writes it) at `level`.
//
// Stored archives have every offset known from the plan: `threads` threads
// copy payloads straight from the source mappings to their offsets with
// pwrite and compute the CRC-32 of each chunk on the way. Compressed
// archives compress on `threads` threads ahead of one writer that appends
// in order; deflate splits large entries into chunks joined into one
// stream (codec.h); with `accessPoints`, one chunk every few MiB starts
// unprimed and the entry's central record lists where (access_index.h).
// Throws Error naming the path or entry; the caller removes a partly
// written file.
void writeArchive(const std::string& path, const WritePlan& plan, int method, int level,
                  bool accessPoints, int threads, ProgressTracker& progress);

}  // namespace tensordict
