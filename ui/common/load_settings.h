#pragma once

#include "tensordict/tensordict.h"

// How tdstudio loads a tensordict, window and command line alike: the memory
// for inflated compressed entries is the setting "archive/inflateCacheMiB"
// (default 512; larger entries are inflated into a temporary file).
// `tolerant`: unreadable parts become error nodes and the rest still loads
// (browsing, --info); otherwise the first problem throws (--save, --diff).
tensordict::LoadOptions loadOptionsFromSettings(bool tolerant);

// Which rows of a replay buffer dump every load of this process shows:
// its valid rows oldest first unless asked for all of them (--all-rows)
// or for storage order (--storage-order).
struct ReplayRows {
    bool all = false;
    bool storageOrder = false;
};
void setReplayRows(ReplayRows rows);
ReplayRows currentReplayRows();
