#include "load_settings.h"

#include <QSettings>

namespace {
ReplayRows replayRows;  // set once, before any load starts
}  // namespace

void setReplayRows(ReplayRows rows) {
    replayRows = rows;
}

ReplayRows currentReplayRows() {
    return replayRows;
}

tensordict::LoadOptions loadOptionsFromSettings(bool tolerant) {
    tensordict::LoadOptions options;
    options.replayAllRows = replayRows.all;
    options.replayStorageOrder = replayRows.storageOrder;
    options.throwOnError = !tolerant;
    const qint64 cacheMiB = QSettings().value("archive/inflateCacheMiB", 512).toLongLong();
    if (cacheMiB > 0)
        options.inflateCacheBytes = static_cast<std::uint64_t>(cacheMiB) << 20;
    return options;
}
