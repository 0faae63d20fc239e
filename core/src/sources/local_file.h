#pragma once

#include <memory>

#include "tensordict/source.h"

namespace tensordict {

// Files on the local file system: paths, or "file://" URLs.
std::shared_ptr<const Transport> localTransport();

}  // namespace tensordict
