#pragma once

// The temporaries an interrupted save leaves beside a dataset: found by the
// check (Checker::checkTemporaries), deleted by repair once stale.

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

namespace tensordict::checking {

// Whether another process has a file under `path` open, or mapped (a memmap
// writer closes its descriptor and keeps the mapping). Links resolved, as
// /proc shows them. Processes whose /proc entries cannot be read count as
// holding it: nothing is deleted on a guess.
bool heldOpen(const std::string& location);

// How long ago `path` was last written; nullopt when that cannot be told.
std::optional<std::chrono::seconds> ageOf(const std::filesystem::path& path);

// "12 min old", "of unknown age".
std::string ageText(std::optional<std::chrono::seconds> age);

// A temporary younger than this may belong to a save that is still going on
// between two files: listed, never deleted.
inline constexpr std::chrono::hours kStaleAfter{1};

}  // namespace tensordict::checking
