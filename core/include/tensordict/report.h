#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tensordict/tensordict.h"
#include "tensordict/value.h"

namespace tensordict {

// One property of a node, named as describe() names it in its JSON.
struct NodeProperty {
    std::string_view name;  // a literal: "dtype", "shape", "file", "batch_size", ...
    Value value;
};

// What a node is, property by property, in the order people read them:
// describe()'s fields, and the window's details and comparison, and the
// command line's listing, all come from this one list.
//   collections  class, is_tensorclass, batch_size, device | stack_dim, keys,
//                directory, non_tensor_fields | attributes
//   tensors      dtype, shape, is_nested, nested_shapes, numel, nbytes, device,
//                storage, file, file_size, location, zip_method, stored_size,
//                payload_offset, outside_target
//   non-tensors  class, batch_size, data, pickle, pickle_opaque
//   errors       error, directory
// Optional ones appear only when they apply.
enum class PropertyDetail {
    // Every property. An archive entry's payload offset costs one small
    // read of its local header, once per entry.
    All,
    // Every property but the payload offset: nothing is read.
    WithoutReads,
    // What a line of a listing shows of a tensor: dtype, shape, nbytes,
    // storage and file (the rest, an allocation or two each, is left out
    // of a listing of thousands); other nodes as WithoutReads.
    Listing,
};
std::vector<NodeProperty> nodeProperties(const Node& node,
                                         PropertyDetail detail = PropertyDetail::All);

// A tensor leaf's listing properties (PropertyDetail::Listing: dtype,
// shape, nbytes, storage, file) as they stand in the node, with no Value
// made: what a listing of many thousands of leaves prints, and what
// nodeProperties() makes those properties from.
struct LeafBrief {
    DType dtype;
    const std::vector<std::int64_t>* shape;
    std::uint64_t nbytes;  // what the leaf takes in its file (TensorLeaf::dataBytes())
    StorageKind storage;
    // "file": absent for a leaf gathered from parts (they say where its
    // bytes are); null (nullptr) for a leaf in memory or of no bytes.
    bool hasFile;
    const std::string* file;
};
LeafBrief leafBrief(const Node& leaf);

struct DescribeOptions {
    bool sha256 = false;  // hash each leaf's raw bytes (reads all data)
    int firstValues = 0;  // include up to this many leading values per leaf
    // Each leaf's {min, max, mean, std (population), nan, inf} over its
    // decoded values (reads all data, on every core); min to std are null
    // when no value is finite.
    bool stats = false;
};

// Describes every node, leaf and non-tensor value of `td` with the field
// names and key-path conventions of the fixtures' .expected.json files:
// {"root_class", "batch_size", "nodes", "leaves", "non_tensor", "errors"}.
Value describe(const TensorDict& td, const DescribeOptions& options = {});

// One leaf's leading values as plain data (complex as [re, im]).
Value firstValues(const Node& leaf, int count);

// A leaf's statistics (leafStatistics()) as the "stats" object above.
Value statisticsValue(const Node& leaf);

// Lowercase hex sha256 of a leaf's raw bytes.
std::string leafSha256(const Node& leaf);

}  // namespace tensordict
