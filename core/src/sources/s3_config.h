#pragma once

#include <string>

#include "sources/s3_signing.h"

// Where s3:// locations are read from and as whom, found where the AWS
// tools look: the environment, then the profile's ~/.aws/credentials and
// ~/.aws/config.
namespace tensordict::s3 {

struct Config {
    Credentials credentials;  // empty: requests go unsigned (public buckets)
    std::string region = "us-east-1";
    std::string endpoint;    // "http://127.0.0.1:4568"; empty: AWS's own for the region
    bool pathStyle = false;  // https://host/bucket/key rather than https://bucket.host/key
};

// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN; AWS_PROFILE
// (else "default") in AWS_SHARED_CREDENTIALS_FILE (~/.aws/credentials) and
// AWS_CONFIG_FILE (~/.aws/config); AWS_REGION, AWS_DEFAULT_REGION or the
// profile's region; AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL or the profile's
// endpoint_url; the profile's s3 addressing_style, else path style for an
// endpoint of one's own (MinIO, Ceph, s3rver) and virtual-hosted for AWS.
Config loadConfig();

// A location's bucket and key: "s3://bucket/a/b.tdz" -> {"bucket", "a/b.tdz"}.
struct Object {
    std::string bucket, key;
};
// Throws Error (invalid) naming the location when it has no bucket.
Object parseLocation(const std::string& location);

// The URL an object is requested at, and its Host and path as signed.
struct Address {
    std::string url, host, path;
};
Address addressOf(const Config& config, const Object& object);
// The address of a bucket's listing (ListObjectsV2) with `query`.
Address listingAddressOf(const Config& config, const std::string& bucket, const Headers& query);

}  // namespace tensordict::s3
