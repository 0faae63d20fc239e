#pragma once

#include <string>
#include <utility>
#include <vector>

namespace tensordict {

// libtensordict's own version.
std::string version();

// The libraries libtensordict runs on, with their versions at run time
// where they report one: {"libtorch", "1.13.1"}, {"Qt", "6.4.2"}, ...
std::vector<std::pair<std::string, std::string>> libraryVersions();

}  // namespace tensordict
