#pragma once

// Replacing files and directories atomically: a temporary sibling on the
// same file system, flushed, then renamed into place. Its names are ours
// alone, so that a temporary an interrupted save left is recognised later
// (the integrity check lists them; its repair deletes them).

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

namespace tensordict {

// ".name.tdstudio-XXXXXXXX" (8 random hex digits) next to `path`.
std::string temporarySibling(const std::filesystem::path& path);
// Whether `entry` is a name temporarySibling() makes for `name`.
bool isTemporaryOf(const std::string& entry, const std::string& name);
// Whether `entry` is the name of the staging directory tensordict's archive
// save makes for `name` (".name." and tempfile's 8 characters, [a-z0-9_]).
bool isTensordictStagingOf(const std::string& entry, const std::string& name);

// Makes the rename of `path` durable: its directory's entries flushed.
void syncDirectoryOf(const std::filesystem::path& path);
// Flushes a file's data to disk.
void syncFile(const std::string& path);

}  // namespace tensordict
