#include "tensordict/version.h"

#include <bzlib.h>
#include <isa-l.h>
#include <lzma.h>
#include <zlib.h>

#include <QtGlobal>

namespace tensordict {

std::string version() {
    return TENSORDICT_VERSION;
}

std::vector<std::pair<std::string, std::string>> libraryVersions() {
    return {
        {"Qt", qVersion()},
        {"liblzma", lzma_version_string()},
        {"zlib", zlibVersion()},
        {"ISA-L", std::to_string(ISAL_MAJOR_VERSION) + "." + std::to_string(ISAL_MINOR_VERSION) +
                      "." + std::to_string(ISAL_PATCH_VERSION)},
        {"bzip2", BZ2_bzlibVersion()},
    };
}

}  // namespace tensordict
