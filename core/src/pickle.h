#pragma once

#include <optional>
#include <string_view>

#include "tensordict/value.h"

namespace tensordict {

// Decodes a pickle that holds only plain data (None, bool, int, float, str,
// bytes, list, tuple, dict, set) without executing anything. Any opcode that
// would import or call code (GLOBAL, REDUCE, BUILD, ...) makes the result
// nullopt: such a sidecar is shown as opaque, never unpickled.
std::optional<Value> decodePlainPickle(std::string_view bytes);

// Pickles plain data (protocol 4 opcodes; lists stand for tuples and sets),
// as Python's pickle.loads reads it.
std::string encodePlainPickle(const Value& value);

}  // namespace tensordict
