#include "load_settings.h"

#include <QSettings>

tensordict::LoadOptions loadOptionsFromSettings(bool tolerant) {
    tensordict::LoadOptions options;
    options.throwOnError = !tolerant;
    const qint64 cacheMiB = QSettings().value("archive/inflateCacheMiB", 512).toLongLong();
    if (cacheMiB > 0)
        options.inflateCacheBytes = static_cast<std::uint64_t>(cacheMiB) << 20;
    return options;
}
