#pragma once

// tensordict's consolidated layout (core/FORMAT.md 15): every leaf's bytes
// in one storage, described by a nested metadata dict. It is found in two
// forms: a file of its own (TensorDict.consolidate(filename=...)), and a
// torch.save of a consolidated TensorDict, whose pickle rebuilds it with
// tensordict._reductions._rebuild_tensordict_files_consolidated(metadata,
// storage). Both are read by one builder.

#include <memory>
#include <string>

#include "tensordict/node.h"
#include "tensordict/store.h"
#include "tensordict/value.h"

namespace tensordict {

// The tree `metadata` describes, at `key`. Its leaves lie in `storage` (the
// file or entry, from `storage.offset`), which holds `storageBytes` bytes;
// every leaf is checked to lie inside them. Throws Error naming `where`.
std::unique_ptr<Node> buildConsolidatedTree(const Value& metadata, const std::string& key,
                                            const StorageInfo& storage, std::uint64_t storageBytes,
                                            const std::shared_ptr<const Store>& store,
                                            const std::string& where);

// The format of consolidate(filename=...)'s files: told by their trailer.
std::shared_ptr<const StoreFormat> consolidatedFormat();

}  // namespace tensordict
