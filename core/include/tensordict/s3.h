#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensordict/transport_options.h"

namespace tensordict {

// s3:// locations ("s3://bucket/key") open like paths, every format and
// the folders of the multi-file ones included: requests are signed with AWS
// Signature V4 (core/src/sources/s3_signing.h) with credentials found where the AWS
// tools look (core/src/sources/s3_config.h: AWS_ACCESS_KEY_ID, AWS_PROFILE,
// AWS_REGION, AWS_ENDPOINT_URL, ~/.aws/credentials and ~/.aws/config), or
// go unsigned when there are none. Buckets are only listed where a person
// browses (listS3); opening never lists.

// One entry of a listing: an object, or a common prefix (a folder).
struct S3Entry {
    std::string location;  // "s3://bucket/runs/step-100/" (folders end in '/')
    std::string name;      // "step-100/", "model.safetensors": relative to the listed prefix
    bool isFolder = false;
    std::uint64_t size = 0;    // objects only
    std::string lastModified;  // objects only, as S3 gives it (ISO 8601)
};

// The entries directly under `location` ("s3://bucket/" or
// "s3://bucket/prefix/"), folders first, each part in key order: every page
// of ListObjectsV2 with delimiter '/'. Throws Error (NoSuchBucket: not
// found; AccessDenied: denied) naming the location. Cancellable by CancelScope.
// `options`: certificates and the stall time (S3 signs; no bearer token
// or extra headers are sent).
std::vector<S3Entry> listS3(const std::string& location, const TransportOptions& options = {});

}  // namespace tensordict
