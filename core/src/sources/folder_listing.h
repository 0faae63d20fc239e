#pragma once

// A local folder's entries in the order people number them, for what is
// made of a folder's members (a series of checkpoints, a stack of chunks).

#include <string>
#include <vector>

namespace tensordict {

// Natural order: runs of digits compare as numbers ("step-9" < "step-10").
bool naturalLess(const std::string& a, const std::string& b);

// The names in a local folder in natural order, hidden ones (".x") left
// out. Throws Error naming the folder when it cannot be listed.
std::vector<std::string> namesInNaturalOrder(const std::string& folder);

}  // namespace tensordict
