#pragma once

// What parseJsonMembers() hands over, put back together as the Value that
// parseJson() reads from the same text: the tests' and the fuzz target's
// check that the two readers agree on every document.

#include <optional>
#include <string>

#include "../../core/src/values/json_members.h"

namespace oracle {

// The document as parseJsonMembers() read it, with `streamed`'s objects
// streamed; nullopt when it says the document is not an object. Throws what
// parseJsonMembers() throws.
inline std::optional<tensordict::Value> viaMembers(const std::string& text,
                                                   std::string_view streamed) {
    using tensordict::Value;
    Value::Object top;
    std::size_t streaming = 0;
    tensordict::JsonMembers handlers;
    handlers.member = [&](std::string key, Value value) {
        top.emplace_back(std::move(key), std::move(value));
    };
    handlers.streamed = streamed;
    handlers.streamStarts = [&] {
        top.emplace_back(std::string(streamed), Value(Value::Object{}));
        streaming = top.size() - 1;
    };
    handlers.entry = [&](std::string key, Value value) {
        top[streaming].second.asObject().emplace_back(std::move(key), std::move(value));
    };
    if (!tensordict::parseJsonMembers(text, "oracle.json", handlers))
        return std::nullopt;
    return Value(std::move(top));
}

}  // namespace oracle
