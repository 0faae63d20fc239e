#pragma once

#include <functional>
#include <memory>
#include <string>

#include "tensordict/store.h"
#include "tensordict/tensordict.h"

namespace tensordict {

// Told each file of a container the loader reads or finds (a meta.json, a
// leaf's file, a sidecar), by its path in the container.
using FileObserver = std::function<void(const std::string& rel)>;

// The tree of an opened store, as load() builds it: the format's own tree
// (a checkpoint, safetensors, numpy), or its meta.json files read by the
// loader, each told to `onFile` (the integrity check lists the files that
// no meta.json names).
TensorDict loadStore(const std::shared_ptr<const Store>& store, const LoadOptions& options,
                     const FileObserver& onFile = {});

}  // namespace tensordict
