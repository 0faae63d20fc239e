// libFuzzer target: tensordict::load of one file in any format the registry
// reads by content (a torch.save checkpoint, zip or legacy; safetensors;
// .npy; .npz; a consolidated tensordict), then every leaf read (sha256 and first values: views
// gathered, big-endian swapped) and every value written as JSON. The input
// is the file, in a memfd (load_support.h).

#include "load_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz::loadAndRead(fuzz::asFile("fuzz_load_file", data, size));
    return 0;
}
