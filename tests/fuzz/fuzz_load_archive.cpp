// libFuzzer target: tensordict::load of a .tdz archive, then every leaf read
// (sha256 and first values) and every non-tensor value written as JSON;
// then tensordict::check and a dry-run repair. The input is the archive
// file, in a memfd (load_support.h).

#include "load_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string path = fuzz::asFile("fuzz_load_archive.tdz", data, size);
    fuzz::loadAndRead(path);
    fuzz::checkAndPlanRepair(path);
    return 0;
}
