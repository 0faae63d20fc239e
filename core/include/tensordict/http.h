#pragma once

#include <cstdint>

namespace tensordict {

// Files on HTTP(S) servers are read with range requests ("http://" and
// "https://" locations open like paths; core/src/sources/http_transport.h),
// set up by TransportOptions (transport_options.h): certificates, a bearer
// token, extra headers, the block cache, the stall time. A read in a
// CancelScope (cancel.h) ends with Cancelled soon after its token is
// cancelled, mid-transfer too.

// What the HTTP transport did since the process started.
struct HttpCounters {
    std::uint64_t requests = 0;
    std::uint64_t bytes = 0;     // of response bodies
    std::uint64_t inFlight = 0;  // requests under way now
};
HttpCounters httpCounters();

}  // namespace tensordict
