#pragma once

// JSON's plain subset, read at memory speed: what the writers of safetensors
// headers, sharded indexes and meta.json files write. Objects, lists,
// strings of printable ASCII without escapes, whole numbers of at most 18
// digits, true, false and null, nested fewer than 64 deep, with JSON's white
// space. A plain text means the same as it does to parseJson(); any other
// text (an escape, a fraction, UTF-8, NaN, an error) is parseJson()'s to
// read, so every error is still named by the one general reader.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tensordict/value.h"

namespace tensordict {

// Past the plain characters from `at` on (printable ASCII but the quote and
// the backslash: what a plain string holds, and what JSON writes as it is):
// the first that is not one, or `end`.
const char* skipPlainCharacters(const char* at, const char* end);

// True when `text` is one JSON document, white space around it, that keeps
// within the plain subset.
bool isPlainJson(std::string_view text);

// The value of `text` when it is plain, read in the one pass that checks it
// (parseJson's first reader); nullopt when it is not. A text that leaves the
// subset late is built and then dropped: the writers read here (meta.json,
// DCP, replay-buffer and consolidated metadata) keep within it.
std::optional<Value> readPlainJson(std::string_view text);

// Where a plain reader gathers the items of the containers it is reading,
// outermost first, shared by every level.
struct PlainJsonStacks {
    Value::Object members;
    Value::List items;
};

// A cursor over a text that isPlainJson(): it never meets an error, so it
// checks none. Each read skips the white space before it.
class PlainJsonReader {
public:
    explicit PlainJsonReader(std::string_view text)
        : at_(text.data()), end_(text.data() + text.size()) {}

    // The next character, or '\0' at the end.
    char peek() {
        skipSpace();
        return at_ < end_ ? *at_ : '\0';
    }
    // Takes `c` when it comes next.
    bool take(char c) {
        if (peek() != c)
            return false;
        ++at_;
        return true;
    }
    // The string that comes next, without its quotes.
    std::string_view string();
    // The whole number that comes next.
    std::int64_t integer();
    // The value that comes next, as parseJson() reads it.
    Value value();
    // When an object comes next: `member(key, *this)` for each of its
    // members in the text's order, the reader before the member's value,
    // which `member` reads whole; then true. Otherwise false, having read
    // only the white space before what comes next.
    template <class Member>
    bool members(Member&& member) {
        return memberViews([&member](std::string_view key, PlainJsonReader& json) {
            member(std::string(key), json);
        });
    }
    // The same, each key a view into the text: an object of many members
    // (an index's weight_map) is read without a string made for each.
    template <class Member>
    bool memberViews(Member&& member) {
        if (!take('{'))
            return false;
        if (take('}'))
            return true;
        do {
            const std::string_view key = string();
            take(':');
            member(key, *this);
        } while (take(','));
        take('}');
        return true;
    }

    // Where the reader is, to come back to.
    const char* position() const { return at_; }
    void rewind(const char* position) { at_ = position; }

private:
    void skipSpace() {
        while (at_ < end_ && (*at_ == ' ' || *at_ == '\n' || *at_ == '\r' || *at_ == '\t'))
            ++at_;
    }

    const char* at_;
    const char* end_;
    PlainJsonStacks stacks_;
};

// Calls `member(key, reader)` for each member of a plain document's
// top-level object, in the text's order, with the reader before the
// member's value; `member` reads that value whole. False, calling nothing,
// when the document is no object.
template <class Member>
bool readPlainMembers(std::string_view text, Member&& member) {
    PlainJsonReader json(text);
    return json.members(member);
}

}  // namespace tensordict
