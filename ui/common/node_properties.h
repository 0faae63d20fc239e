#pragma once

#include <QString>
#include <string>
#include <vector>

#include "tensordict/node.h"

// A node's properties (tensordict::nodeProperties()) as people read them:
// one label and one text per property, the same in the details panel, the
// comparison and the command line's listing.
namespace nodetext {

struct PropertyRow {
    std::string name;  // as nodeProperties() names it: "dtype", "file", ...
    QString label;     // "DType", "File"
    QString text;      // "torch.float32", "a.memmap"
    // A value of several lines (a non-tensor's value, tensorclass fields, an
    // error): shown in a text box, not in a row.
    bool isLong = false;
    // Where the data lives rather than what it is (file, offset, storage):
    // two sides that differ only here are still the same.
    bool isLocation = false;
};

std::vector<PropertyRow> propertyRows(const tensordict::Node& node, bool readPayloadOffset = true);

}  // namespace nodetext
