#pragma once

#include <memory>

#include "tensordict/store.h"

namespace tensordict {

// The formats registered from the start.
std::shared_ptr<const StoreFormat> directoryFormat();  // memmap directories
std::shared_ptr<const StoreFormat> archiveFormat();    // .tdz archives

// An archive read from any source (the fuzz targets and tests use it directly).
std::shared_ptr<const Store> openArchiveStore(std::shared_ptr<const ByteSource> source,
                                              std::uint64_t inflateCacheBytes);

}  // namespace tensordict
