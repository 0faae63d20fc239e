#pragma once

// NumPy's dtype strings, as .npy headers and pickled numpy.dtype objects
// spell them: shared by the .npy reader and the checkpoints' unpickler.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tensordict/dtype.h"

namespace tensordict {

// What a NumPy dtype string names: a dtype read here, or a kind of array
// NumPy reads and tdstudio does not (strings, dates, records, float128,
// objects), with its item size.
struct DescrCode {
    std::optional<DType> dtype;  // read here
    bool bigEndian = false;
    std::string notRead;  // otherwise: what the array holds, in words
    // Its item size; none where the data is a pickle (Python objects).
    std::optional<std::uint64_t> itemBytes;
    // Written as np.save writes such a dtype (dtype.str: "|S5", "<U3",
    // "<M8[ns]", "|O", "<f16"). Only then is a kind not read here taken
    // as well-formed: other spellings ("<a8", "<S8", "m") are one bit
    // from a dtype read here ("<i8"), so tdstudio cannot tell them from damage.
    bool canonical = false;
};

// "<f4", "|b1", "<U10", "<M8[ns]", or a one-letter code ("<d", "|?"): the
// strings numpy.dtype() accepts with a byte order, as np.save writes them
// (dtype.str) and other writers may. Sizes are numpy's on 64-bit Linux.
// None: no NumPy dtype.
std::optional<DescrCode> parseDescrCode(std::string_view d);

}  // namespace tensordict
