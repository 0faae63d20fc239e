#pragma once

#include "tensordict/tensordict.h"

// How tdstudio loads a tensordict, window and command line alike: the memory
// for inflated compressed entries is the setting "archive/inflateCacheMiB"
// (default 512; larger entries are inflated into a temporary file).
// `tolerant`: unreadable parts become error nodes and the rest still loads
// (browsing, --info); otherwise the first problem throws (--save, --diff).
tensordict::LoadOptions loadOptionsFromSettings(bool tolerant);

// How every load, check and listing of this process reaches remote
// locations: set once at start from the environment (never the command
// line, which `ps` shows): TDSTUDIO_HTTP_BEARER (a bearer token),
// TDSTUDIO_HTTP_HEADERS (extra "Name: value" lines), TDSTUDIO_HTTP_CA_FILE
// (certificates to trust besides the system's), TDSTUDIO_HTTP_CACHE_MIB
// (the block cache, 64), TDSTUDIO_HTTP_STALL_SECONDS (30); and --insecure.
// Throws Error (invalid) naming the variable and line for headers that
// cannot be sent.
tensordict::TransportOptions transportOptionsFromEnvironment(bool insecure);
tensordict::TransportOptions currentTransportOptions();

// Which rows of a replay buffer dump every load of this process shows:
// its valid rows oldest first unless asked for all of them (--all-rows)
// or for storage order (--storage-order).
struct ReplayRows {
    bool all = false;
    bool storageOrder = false;
};
void setReplayRows(ReplayRows rows);
ReplayRows currentReplayRows();

// Sets both at start. Each module that loads sets its own copy (the
// executable, and the window module, which links these settings again).
void applyLoadSettings(const ReplayRows& rows, const tensordict::TransportOptions& transport);
