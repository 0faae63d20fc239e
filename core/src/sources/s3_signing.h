#pragma once

#include <ctime>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// AWS Signature Version 4 for S3 requests without a body, as botocore's
// S3SigV4Auth signs them (botocore/auth.py): every header sent is signed,
// the path is signed as it is sent (S3 paths are not normalized), and the
// payload hash is that of the empty body.
namespace tensordict::s3 {

struct Credentials {
    std::string accessKey, secretKey, sessionToken;
    bool empty() const { return accessKey.empty(); }
};

using Headers = std::vector<std::pair<std::string, std::string>>;

struct Request {
    std::string method = "GET";
    std::string host;  // as the Host header carries it: "bucket.s3.eu-west-1.amazonaws.com",
                       // "127.0.0.1:4568"
    std::string path;  // percent-encoded as sent: "/bucket/a%20b.txt"
    Headers query;     // names and values not yet encoded
    Headers headers;   // besides host and the x-amz-* ones signing adds: "Range", "If-Match"
};

// "a=1&b=x%2Fy": the query, encoded and sorted as it is signed and sent.
std::string canonicalQuery(const Headers& query);

// The headers to add to `request` so that S3 accepts it: X-Amz-Date,
// X-Amz-Content-SHA256, X-Amz-Security-Token (with a session token) and
// Authorization, for `region` at time `now` (UTC).
Headers signV4(const Request& request, const Credentials& credentials, const std::string& region,
               std::time_t now);

// Lowercase hex sha256 and HMAC-SHA256, as signing uses them.
std::string sha256Hex(std::string_view data);
std::string hmacSha256(std::string_view key, std::string_view data);

}  // namespace tensordict::s3
