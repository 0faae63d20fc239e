#pragma once

#include "tensordict/tensordict.h"

// How tdstudio loads a tensordict, window and command line alike: the memory
// for inflated compressed entries is the setting "archive/inflateCacheMiB"
// (default 512; larger entries are inflated into a temporary file).
// `tolerant`: unreadable parts become error nodes and the rest still loads
// (browsing, --info); otherwise the first problem throws (--save, --diff).
tensordict::LoadOptions loadOptionsFromSettings(bool tolerant);
