#pragma once

// A DCP directory's `.metadata` (core/FORMAT.md 17), read as data: each
// entry of state_dict_metadata with its keys in the tree (planner_data), a
// tensor's chunks with where each chunk's stream is (storage_data), and a
// byte item's stream. The pickle is decoded by the safe unpickler, its
// classes rebuilt as data and nothing called; a class DCP does not write
// refuses the file.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "formats/chunk_boxes.h"
#include "formats/dcp.h"
#include "tensordict/dtype.h"
#include "tensordict/error.h"

namespace tensordict {

// What a transformed (compressed) stream may decode to: a chunk's bytes and
// the torch.save records around them; a byte item at most this.
constexpr std::uint64_t kDcpStreamRecordsBytes = 1ull << 20;
constexpr std::uint64_t kDcpMaxByteItemBytes = 256ull << 20;

// A chunk: its box of the tensor, and where its stream is.
struct DcpChunk : ChunkBox {
    std::size_t file = 0;  // index into the metadata's files
    std::uint64_t offset = 0, length = 0;
    std::vector<std::string> transforms;  // DCP stream transforms to undo (dcp_transforms.h)
    // In its file's safetensors data, not a torch.save stream of its own
    // (FileSystemWriter's serialization_format=SAFETENSORS).
    bool inSafetensors = false;
};

struct DcpTensor {
    std::string fqn;
    DType dtype = DType::Float32;
    std::vector<std::int64_t> shape;
    std::int64_t numel = 1;
    std::vector<DcpChunk> chunks;

    BoxedShape whole() const { return {shape, numel, itemSize(dtype)}; }
    std::vector<const ChunkBox*> boxes() const {
        std::vector<const ChunkBox*> out;
        for (const DcpChunk& c : chunks)
            out.push_back(&c);
        return out;
    }
};

// A byte item's stream.
struct DcpStream {
    std::size_t file = 0;  // index into the metadata's files
    std::uint64_t offset = 0, length = 0;
    std::vector<std::string> transforms;  // to undo, in this order
};

// An entry of state_dict_metadata: a tensor, a byte item, or why it cannot
// be read (the rest of the metadata is read on past it).
struct DcpEntry {
    std::string fqn;
    std::vector<std::string> path;  // its keys in the tree, as the planner nested them
    std::variant<DcpTensor, DcpStream, Failure> content;
};

struct DcpMetadata {
    std::vector<DcpEntry> entries;  // in the metadata's order
    DcpFacts facts;                 // the files it names, its entries and every stream
};

// Reads `.metadata`'s bytes, named `where` in errors; `location` (the
// checkpoint's) names an entry that cannot be read. Throws Error when the
// file is not DCP's metadata or its structure is broken.
DcpMetadata readDcpMetadata(std::string_view bytes, const std::string& where,
                            const std::string& location);

}  // namespace tensordict
