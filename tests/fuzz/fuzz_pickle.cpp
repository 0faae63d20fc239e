// libFuzzer target: tensordict::decodePlainPickle, the reader of non-tensor
// pickle sidecars (plain data only, never executes anything). It must never
// crash; whatever it decodes must survive encodePlainPickle and decode back
// to an equal value.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "tensordict/value.h"
#include "values/pickle.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::optional<tensordict::Value> value =
        tensordict::decodePlainPickle(std::string_view(reinterpret_cast<const char*>(data), size));
    if (!value)
        return 0;
    const std::string encoded = tensordict::encodePlainPickle(*value);
    const std::optional<tensordict::Value> again = tensordict::decodePlainPickle(encoded);
    if (!again || *again != *value) {
        std::fprintf(stderr, "fuzz_pickle: the re-encoded pickle %s\n%s\n",
                     again ? "decodes to a different value" : "does not decode",
                     tensordict::toJson(*value).c_str());
        std::abort();
    }
    return 0;
}
