#pragma once

#include <cstdint>

namespace tensordict {

// Files on HTTP(S) servers are read with range requests ("http://" and
// "https://" locations open like paths; core/src/sources/http_transport.h). Its
// settings come from the environment, never the command line (which `ps`
// shows): TDSTUDIO_HTTP_BEARER (a bearer token), TDSTUDIO_HTTP_HEADERS
// (extra "Name: value" lines), TDSTUDIO_HTTP_CA_FILE (certificates to trust
// besides the system's), TDSTUDIO_HTTP_CACHE_MIB (the block cache, 64),
// TDSTUDIO_HTTP_STALL_SECONDS (a transfer with no byte for this long is
// dropped and retried, 30). A read in a CancelScope (cancel.h) ends with
// Cancelled soon after its token is cancelled, mid-transfer too.

// Turns certificate checks off (--insecure: for self-signed test servers only).
void setHttpInsecure(bool insecure);

// What the HTTP transport did since the process started.
struct HttpCounters {
    std::uint64_t requests = 0;
    std::uint64_t bytes = 0;     // of response bodies
    std::uint64_t inFlight = 0;  // requests under way now
};
HttpCounters httpCounters();

}  // namespace tensordict
