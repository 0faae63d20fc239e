#include "tensordict/version.h"

#include <bzlib.h>
#include <lzma.h>
#include <torch/version.h>
#include <zlib.h>

#include <QtGlobal>

#include "raw_zip_entry.h"

namespace tensordict {

std::string version() {
    return TENSORDICT_VERSION;
}

std::vector<std::pair<std::string, std::string>> libraryVersions() {
    return {
        {"libtorch", TORCH_VERSION},           {"Qt", qVersion()},
        {"QuaZip", TENSORDICT_QUAZIP_VERSION}, {"libzip", libzipVersion()},
        {"liblzma", lzma_version_string()},    {"zlib", zlibVersion()},
        {"bzip2", BZ2_bzlibVersion()},
    };
}

}  // namespace tensordict
