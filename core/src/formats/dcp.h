#pragma once

// What a torch.distributed.checkpoint directory's tree does not show, for
// --check (check/dcp_check.cpp): the files its metadata names, and where each chunk
// of each tensor or byte item is.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tensordict/store.h"

namespace tensordict {

// A tensor or byte item of the metadata.
struct DcpItemFacts {
    std::string fqn;                   // "model.layers.0.weight"
    std::vector<std::string> keyPath;  // its key in the tree
};

struct DcpChunkFacts {
    std::size_t item = 0;                  // index into DcpFacts::items
    std::size_t file = 0;                  // index into DcpFacts::files
    std::uint64_t offset = 0, length = 0;  // its torch.save stream in the file
    // The stream transforms it was written through (dcp_transforms.h), and
    // the most its stream may decode to.
    std::vector<std::string> transforms;
    std::uint64_t decodedLimit = 0;
    // A chunk in its file's safetensors data (serialization_format=SAFETENSORS):
    // no stream of its own and no CRCs; `offset` is where the data starts.
    bool inSafetensors = false;
};

struct DcpFacts {
    std::vector<std::string> files;      // every file the metadata names, in order
    std::vector<DcpItemFacts> items;     // in metadata order
    std::vector<DcpChunkFacts> streams;  // every chunk and byte item, in metadata order
};

// The facts of a DCP directory's store once its tree was built; nullopt for
// any other store.
std::optional<DcpFacts> dcpFacts(const Store& store);

}  // namespace tensordict
