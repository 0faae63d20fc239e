#pragma once

#include <string>
#include <utility>
#include <vector>

namespace tensordict {

// libtensordict's own version.
std::string version();

// The libraries the core runs on, with their versions at run time where
// they report one: {"Qt", "6.4.2"}, {"liblzma", "5.4.1"}, then zlib, ISA-L
// and bzip2. libtorch is not among them: the core never loads it, and nor
// does tdstudio, whose --version prints this list. A program that links the
// torch part gets its libtorch from tensordict::torch::libtorchVersion().
std::vector<std::pair<std::string, std::string>> libraryVersions();

}  // namespace tensordict
