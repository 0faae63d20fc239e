// libFuzzer target: an S3 server's XML answers as the S3 transport reads
// them (s3_transport.h): the input as a ListObjectsV2 page of the folder
// "p/" of bucket "b" (parseS3Listing), whose entries must lie in that
// folder and be named from it, and as an error body (throwS3Failure),
// which throws Error or returns. Anything else it does is a finding.

#include <cstdint>
#include <cstdlib>
#include <string>

#include "sources/s3_transport.h"
#include "tensordict/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string xml(reinterpret_cast<const char*>(data), size);
    try {
        const tensordict::S3ListingPage page =
            tensordict::parseS3Listing("s3://b/p/", "b", "p/", xml);
        for (const auto* part : {&page.folders, &page.objects})
            for (const tensordict::S3Entry& e : *part)
                if (e.name.empty() || e.location != "s3://b/p/" + e.name ||
                    e.isFolder != (part == &page.folders))
                    std::abort();
    } catch (const tensordict::Error&) {
    }
    try {
        tensordict::throwS3Failure("s3://b/p/k", 403, xml);
    } catch (const tensordict::Error&) {
    }
    return 0;
}
