#pragma once

#include "tensordict/tensordict.h"
#include "tensordict/value.h"

namespace tensordict {

struct DescribeOptions {
    bool sha256 = false;  // hash each leaf's raw bytes (reads all data)
    int firstValues = 0;  // include up to this many leading values per leaf
};

// Describes every node, leaf and non-tensor value of `td` with the field
// names and key-path conventions of the fixtures' .expected.json files:
// {"root_class", "batch_size", "nodes", "leaves", "non_tensor", "errors"}.
Value describe(const TensorDict& td, const DescribeOptions& options = {});

// One leaf's leading values as plain data (complex as [re, im]).
Value firstValues(const Node& leaf, int count);

// Lowercase hex sha256 of a leaf's raw bytes.
std::string leafSha256(const Node& leaf);

}  // namespace tensordict
