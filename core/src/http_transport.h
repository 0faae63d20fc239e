#pragma once

#include <memory>
#include <string>

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

}  // namespace tensordict
