#pragma once

#include <optional>
#include <string_view>

#include "tensordict/value.h"

namespace tensordict {

// Decodes a pickle that holds only plain data (None, bool, int of any size,
// float, str, bytes, list, tuple, dict with str keys, set) without executing
// anything: the one pickle decoder (values/python_objects.h) with a
// plain-data policy. Anything else (a class or function it names, a call, a
// persistent id) makes the result nullopt: such a sidecar is shown as
// opaque, never unpickled.
std::optional<Value> decodePlainPickle(std::string_view bytes);

namespace python {
struct Object;
}
// The same policy over an object already decoded: its plain data, or
// nullopt when it holds anything else.
std::optional<Value> plainValue(const python::Object& object);

// Pickles plain data (protocol 4 opcodes; lists stand for tuples and sets),
// as Python's pickle.loads reads it.
std::string encodePlainPickle(const Value& value);

}  // namespace tensordict
