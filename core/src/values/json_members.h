#pragma once

// Reading a large JSON object member by member (a safetensors header of
// thousands of tensors, a sharded model's weight_map): the grammar, numbers
// and errors of parseJson(), without ever holding the object whole.

#include <functional>
#include <string>
#include <string_view>

#include "tensordict/value.h"

namespace tensordict {

struct JsonMembers {
    // Each member of the document's top-level object as it ends, in the
    // file's order, repeated keys included.
    std::function<void(std::string key, Value value)> member;
    // A top-level key whose object is handed over member by member too:
    // streamStarts() before each occurrence of it whose value is an object,
    // then entry() for each of that object's members. An occurrence that is
    // not an object goes to member().
    std::string_view streamed;
    std::function<void()> streamStarts;
    std::function<void(std::string key, Value value)> entry;
};

// Parses `text` as parseJson() does. Returns false, having called no
// handler, when the document is valid JSON but not an object. An exception
// from a handler stops the calls and is rethrown once the whole text is
// known to be valid JSON: invalid JSON throws its own Error first, as
// parseJson() would.
bool parseJsonMembers(std::string_view text, const std::string& where, const JsonMembers& handlers);

// parseJson() by the general reader alone, never by the plain subset's
// (values/plain_json.h): the tests' check that both read the same.
Value parseJsonGenerally(std::string_view text, const std::string& where);

}  // namespace tensordict
