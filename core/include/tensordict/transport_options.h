#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tensordict {

// How remote transports reach their servers (StoreOptions::transport). The
// library reads no environment variable for these: a program passes them
// in (tdstudio reads its TDSTUDIO_HTTP_* variables and --insecure), so two
// loads in one program may differ. Local files ignore them.
struct TransportOptions {
    // Whether HTTPS certificates are checked (false: test servers only).
    bool verifyCertificates = true;
    // A file of certificates to trust besides the system's ("": none).
    std::string caFile;
    // Sent to plain web servers as "Authorization: Bearer <token>" ("": none).
    std::string bearerToken;
    // Headers sent to plain web servers, in order. A name that is no HTTP
    // token, or a control character anywhere, fails the load (Error,
    // invalid) before any request is sent.
    std::vector<std::pair<std::string, std::string>> headers;
    // Memory for the block cache of the files a transport reads (0: none).
    std::uint64_t cacheBytes = 64ull << 20;
    // A transfer with no byte for this long is dropped and tried again (at least 1).
    int stallSeconds = 30;

    bool operator==(const TransportOptions& o) const {
        return verifyCertificates == o.verifyCertificates && caFile == o.caFile &&
               bearerToken == o.bearerToken && headers == o.headers && cacheBytes == o.cacheBytes &&
               stallSeconds == o.stallSeconds;
    }
    bool operator!=(const TransportOptions& o) const { return !(*this == o); }
};

// The "Name: value" lines of `text` (blank lines skipped, spaces around
// names and values trimmed) as headers. Throws Error (invalid) naming
// `origin` and the line for a line that is no header or holds a control
// character: a header sent mangled would fail far from its cause.
std::vector<std::pair<std::string, std::string>> parseHeaderLines(std::string_view text,
                                                                  const std::string& origin);

}  // namespace tensordict
