#pragma once

#include <cstdint>
#include <string>

#include "tensordict/bytes.h"

namespace tensordict {

// Maps the first `length` bytes of the open file `fd` privately (copy-on-write):
// tensors over it can be written in memory, the file never changes. The
// mapping is released when the last LeafBytes sharing it goes. `where` names
// the file in errors.
LeafBytes mapFilePrivate(int fd, std::uint64_t length, const std::string& where);

// A fresh buffer of `size` bytes, aligned for any dtype.
LeafBytes allocateOwnedBuffer(std::size_t size);

}  // namespace tensordict
