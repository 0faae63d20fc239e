#pragma once

// DCP's stream transforms (torch/distributed/checkpoint/_extension.py): a
// chunk or byte item may be written through extensions, each recorded in
// its _StorageInfo as a descriptor "name[@domain]/version". A reader undoes
// them in the order listed, the first on the bytes in the file
// (_StorageReaderTransforms.transform_load_stream). Known: "stream.zstd/1"
// (zstd frames, as the zstandard module writes them) and "stream.rot13/1"
// (the module's example, which swaps the case of ASCII letters).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tensordict/source.h"

namespace tensordict {

// Throws Error (unsupported) naming the first descriptor no reader here
// knows (an unknown extension, or a major version other than 1).
void checkStreamTransforms(const std::vector<std::string>& descriptors, const std::string& where);

// The stream's bytes with every transform undone, held in memory: at most
// `limit` bytes, else Error (corrupt) before more is allocated. Throws
// Error naming `stream` for a frame that is damaged or cut short.
std::shared_ptr<const ByteSource> untransformedStream(std::shared_ptr<const ByteSource> stream,
                                                      const std::vector<std::string>& descriptors,
                                                      std::uint64_t limit);

}  // namespace tensordict
