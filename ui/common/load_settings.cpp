#include "load_settings.h"

#include <QSettings>
#include <atomic>

namespace {
// Set on the GUI thread (View menu), read by loads on workers.
std::atomic<bool> allRows{false}, storageOrder{false};
}  // namespace

void setReplayRows(ReplayRows rows) {
    allRows = rows.all;
    storageOrder = rows.storageOrder;
}

ReplayRows currentReplayRows() {
    return {allRows, storageOrder};
}

tensordict::LoadOptions loadOptionsFromSettings(bool tolerant) {
    tensordict::LoadOptions options;
    options.store.replayAllRows = allRows;
    options.store.replayStorageOrder = storageOrder;
    options.throwOnError = !tolerant;
    const qint64 cacheMiB = QSettings().value("archive/inflateCacheMiB", 512).toLongLong();
    if (cacheMiB > 0)
        options.store.inflateCacheBytes = static_cast<std::uint64_t>(cacheMiB) << 20;
    return options;
}
