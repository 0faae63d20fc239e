#include "load_settings.h"

#include <QSettings>
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>

namespace {
// Set on the GUI thread (View menu), read by loads on workers.
std::atomic<bool> allRows{false}, storageOrder{false};

// Set at start, read by loads on workers.
std::mutex transportMutex;
tensordict::TransportOptions transport;

std::string environment(const char* name) {
    const char* value = std::getenv(name);
    return value ? value : "";
}

// A positive whole number, else `fallback`.
long positive(const std::string& text, long fallback) {
    const long n = std::strtol(text.c_str(), nullptr, 10);
    return n > 0 ? n : fallback;
}

}  // namespace

tensordict::TransportOptions transportOptionsFromEnvironment(bool insecure) {
    tensordict::TransportOptions options;
    options.verifyCertificates = !insecure;
    options.caFile = environment("TDSTUDIO_HTTP_CA_FILE");
    options.bearerToken = environment("TDSTUDIO_HTTP_BEARER");
    options.headers =
        tensordict::parseHeaderLines(environment("TDSTUDIO_HTTP_HEADERS"), "TDSTUDIO_HTTP_HEADERS");
    const std::string cacheMiB = environment("TDSTUDIO_HTTP_CACHE_MIB");
    options.cacheBytes =
        cacheMiB.empty() ? options.cacheBytes : std::strtoull(cacheMiB.c_str(), nullptr, 10) << 20;
    options.stallSeconds =
        int(std::min(positive(environment("TDSTUDIO_HTTP_STALL_SECONDS"), 30), 24L * 3600));
    return options;
}

void applyLoadSettings(const ReplayRows& rows, const tensordict::TransportOptions& options) {
    setReplayRows(rows);
    std::lock_guard<std::mutex> lock(transportMutex);
    transport = options;
}

tensordict::TransportOptions currentTransportOptions() {
    std::lock_guard<std::mutex> lock(transportMutex);
    return transport;
}

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
    options.store.transport = currentTransportOptions();
    const qint64 cacheMiB = QSettings().value("archive/inflateCacheMiB", 512).toLongLong();
    if (cacheMiB > 0)
        options.store.inflateCacheBytes = static_cast<std::uint64_t>(cacheMiB) << 20;
    return options;
}
