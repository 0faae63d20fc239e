#pragma once

#include <memory>

#include "tensordict/store.h"
#include "tensordict/tensordict.h"

namespace tensordict {

// The tree of an opened store, as load() builds it: the format's own tree
// (a checkpoint, safetensors, numpy), or its meta.json files read by the
// loader. For readers that wrap the store first (the integrity check
// records what the loader reads).
TensorDict loadStore(const std::shared_ptr<const Store>& store, const LoadOptions& options);

}  // namespace tensordict
