#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sources/s3_signing.h"
#include "tensordict/s3.h"
#include "tensordict/source.h"

namespace tensordict {

// The transport of "s3://bucket/key" locations (see s3_config.h for where
// it finds its endpoint, region and credentials).
std::shared_ptr<const Transport> s3Transport();

// Adds the signature headers of a GET of `url` that sends `headers`, with
// the credentials found now (none: the request goes unsigned).
void signS3Request(const std::string& url, s3::Headers& headers);

// Throws the error an S3 error body names (NoSuchKey: not found;
// AccessDenied, SignatureDoesNotMatch, an expired token: denied; others:
// network), naming the location and S3's code; returns when the body is
// not S3's.
void throwS3Failure(const std::string& location, long status, const std::string& body);

// One page of a ListObjectsV2 answer (`xml`) for the folder `prefix`
// ("runs/", "" for the bucket) of `bucket`: its subfolders and objects
// (the folder's own marker left out), and the token of the next page ("":
// the last). Throws Error naming `location` when it is not a listing.
struct S3ListingPage {
    std::vector<S3Entry> folders, objects;
    std::string nextToken;
};
S3ListingPage parseS3Listing(const std::string& location, const std::string& bucket,
                             const std::string& prefix, const std::string& xml);

}  // namespace tensordict
