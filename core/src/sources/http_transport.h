#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tensordict/http.h"
#include "tensordict/source.h"

namespace tensordict {

// Files on HTTP(S) servers, read with range requests (libcurl), for the
// scheme "http" or "https". A file is opened with one request for its
// first block, which gives its size and validator (ETag, else
// Last-Modified); every later request carries If-Range with it, so a file
// changed on the server is an error ("changed on the server"), never bytes
// of two versions. Blocks are kept in a cache with a memory cap; sequential
// reads fetch ahead, growing to 8 MiB, scattered ones stay at one 64 KiB
// block. A directory is a URL whose "meta.json" exists: no listing needed.
std::shared_ptr<const Transport> httpTransport(const std::string& scheme);

// How a kind of server other than a plain web server is spoken to over the
// same reader (blocks, read-ahead, retries, limits): S3's, for one.
struct HttpDialect {
    using Headers = std::vector<std::pair<std::string, std::string>>;
    // The URL a location is fetched from ("s3://b/k" -> "https://b.s3.…/k").
    std::function<std::string(const std::string& location)> urlOf;
    // Adds what authorizes a GET of `url` that sends `headers` (which a
    // signature covers: Range and If-Match are in them).
    std::function<void(const std::string& url, Headers& headers)> authorize;
    // Throws the error a failed answer means, when the server names it (S3:
    // the Code of its XML body); returns to let the status decide.
    std::function<void(const std::string& location, long status, const std::string& body)> failure;
    // The version goes in If-Match (a changed object answers 412), not If-Range.
    bool ifMatch = false;
    // Relative names go into locations as they are (S3 keys), not percent-encoded.
    bool rawNames = false;
    // A location that is not a file may be a folder whose meta.json is there
    // even when the server refuses it as denied (S3 without list rights).
    bool deniedMayBeFolder = false;
};
std::shared_ptr<const Transport> httpTransport(const std::string& scheme, HttpDialect dialect);

// The whole body (at most 1 MiB) of one GET of `url`, spoken to as
// `dialect` says, with its retries; errors name `location`. For small
// documents (an S3 listing), never a file's bytes.
std::string httpGetDocument(const std::string& location, const std::string& url,
                            const HttpDialect& dialect, const TransportOptions& options);

}  // namespace tensordict
