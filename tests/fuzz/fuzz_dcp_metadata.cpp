// libFuzzer target: a torch.distributed.checkpoint folder's .metadata pickle
// (the safe unpickler with DCP's classes rebuilt as data, planner_data's key
// nesting, chunk tiling, storage_data's places). The input is the .metadata
// of an otherwise empty folder, written for each input; the folder is
// loaded (errors as error nodes), every leaf asked for (its .distcp file is
// missing: an error naming it), then checked as --check does.

#include <string>

#include "load_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::string folder = fuzz::workDirectory("fuzz_dcp_metadata");
    fuzz::writeWhole(folder + "/.metadata", data, size);
    fuzz::loadAndRead(folder);
    fuzz::checkAndPlanRepair(folder);
    return 0;
}
