#pragma once

#include <cstdint>
#include <string>

#include "tensordict/node.h"

namespace tensordict {

// Maps the first `length` bytes of the open file `fd` privately (copy-on-write):
// tensors over it can be written in memory, the file never changes. The
// mapping is released when the last LeafBytes sharing it goes. `where` names
// the file in errors.
LeafBytes mapFilePrivate(int fd, std::uint64_t length, const std::string& where);

// Copies `size` bytes into a fresh buffer aligned for any dtype.
LeafBytes copyToOwnedBuffer(const std::byte* data, std::size_t size);
LeafBytes allocateOwnedBuffer(std::size_t size);

}  // namespace tensordict
