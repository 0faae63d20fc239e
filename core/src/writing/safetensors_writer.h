#pragma once

// Saving any tree as safetensors (core/FORMAT.md 14.1): one file, or a
// Hugging Face sharded folder with its index, as the safetensors library
// and transformers' save_pretrained write them.

#include <filesystem>
#include <string>

#include "tensordict/save.h"

namespace tensordict {

class ProgressTracker;

// What safetensors cannot hold of `data` (a dtype it has no name for, a
// nested tensor, two keys of one dotted name, a part that could not be
// read, a link out of the dataset unless allowed), found from metadata
// alone; throws Error naming the key.
void checkSafetensorsSource(const TensorDict& data, const SaveOptions& options);

// One safetensors file at `target`, written beside it and renamed into
// place. Keys are the dotted key paths; values that are not tensors are
// left out, each told to options.skipped.
void saveSafetensorsFile(const TensorDict& data, const std::filesystem::path& target,
                         const SaveOptions& options);

// A sharded folder at `target`: model-0000K-of-0000N.safetensors split at
// options.maxShardSize and model.safetensors.index.json (one shard: a lone
// model.safetensors). Each file is written beside its name and renamed into
// place, the index last; other files of the folder are left alone, but for
// the shards of an earlier save that the new index does not name.
void saveHuggingFaceFolder(const TensorDict& data, const std::filesystem::path& target,
                           const SaveOptions& options);

}  // namespace tensordict
