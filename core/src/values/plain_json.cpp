#include "values/plain_json.h"

#include <cassert>
#include <cstdint>
#include <cstring>
#include <iterator>

namespace tensordict {
namespace {

constexpr int kMaxDepth = 64;   // parseJson() allows 512; deeper text is its to read
constexpr int kMaxDigits = 18;  // always within an int64

bool isSpace(char c) {
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}
bool isDigit(char c) {
    return c >= '0' && c <= '9';
}
// A string's character that needs no escape and is ASCII.
bool isPlainCharacter(char c) {
    return c >= 0x20 && c < 0x7F && c != '"' && c != '\\';
}

// A recursive scan of one value, false where the text leaves the subset.
// With kBuild it also makes the value as it goes, so that parseJson reads a
// plain document in one pass; its containers' items gather on the shared
// stacks (PlainJsonStacks) and move into a container of their exact number
// at its end, so no container grows item by item.
template <bool kBuild>
class Scan {
public:
    Scan(const char* at, const char* end, PlainJsonStacks* stacks = nullptr)
        : at_(at), end_(end), stacks_(stacks) {}

    bool document(Value* out) {
        if (!value(0, out))
            return false;
        skipSpace();
        return at_ == end_;
    }
    // One value from here on; `out` is written only with kBuild.
    bool value(int depth, Value* out) {
        skipSpace();
        if (at_ == end_)
            return false;
        switch (*at_) {
            case '{':
                return container(depth, '}', true, out);
            case '[':
                return container(depth, ']', false, out);
            case '"': {
                std::string_view text;
                if (!string(text))
                    return false;
                if constexpr (kBuild)
                    *out = Value(std::string(text));
                return true;
            }
            case 't':
                return literal("true", out, true);
            case 'f':
                return literal("false", out, false);
            case 'n':
                return literal("null", out, nullptr);
            default:
                return number(out);
        }
    }
    const char* position() const { return at_; }

private:
    bool container(int depth, char close, bool isObject, Value* out) {
        if (depth + 1 >= kMaxDepth)
            return false;
        ++at_;
        [[maybe_unused]] const std::size_t firstMember = kBuild ? stacks_->members.size() : 0,
                                           firstItem = kBuild ? stacks_->items.size() : 0;
        skipSpace();
        if (at_ < end_ && *at_ == close) {
            ++at_;
        } else {
            for (;;) {
                std::string_view key;
                if (isObject) {
                    skipSpace();
                    if (!string(key))
                        return false;
                    skipSpace();
                    if (at_ == end_ || *at_++ != ':')
                        return false;
                }
                if constexpr (kBuild) {
                    Value item;
                    if (!value(depth + 1, &item))
                        return false;
                    if (isObject)
                        stacks_->members.emplace_back(std::string(key), std::move(item));
                    else
                        stacks_->items.push_back(std::move(item));
                } else if (!value(depth + 1, nullptr)) {
                    return false;
                }
                skipSpace();
                if (at_ == end_)
                    return false;
                const char c = *at_++;
                if (c == close)
                    break;
                if (c != ',')
                    return false;
            }
        }
        if constexpr (kBuild) {
            if (isObject) {
                auto& members = stacks_->members;
                *out = Value(Value::Object(std::make_move_iterator(members.begin() + firstMember),
                                           std::make_move_iterator(members.end())));
                members.resize(firstMember);
            } else {
                auto& items = stacks_->items;
                *out = Value(Value::List(std::make_move_iterator(items.begin() + firstItem),
                                         std::make_move_iterator(items.end())));
                items.resize(firstItem);
            }
        }
        return true;
    }
    bool string(std::string_view& text) {
        if (at_ == end_ || *at_ != '"')
            return false;
        const char* begin = at_ + 1;
        at_ = skipPlainCharacters(begin, end_);
        if (at_ == end_ || *at_ != '"')
            return false;
        text = {begin, static_cast<std::size_t>(at_++ - begin)};
        return true;
    }
    template <typename T>
    bool literal(std::string_view word, Value* out, T meaning) {
        if (std::string_view(at_, static_cast<std::size_t>(end_ - at_)).substr(0, word.size()) !=
            word)
            return false;
        at_ += word.size();
        if constexpr (kBuild)
            *out = Value(meaning);
        return true;
    }
    // -?(0|[1-9][0-9]*), no fraction or exponent after it.
    bool number(Value* out) {
        const bool negative = at_ < end_ && *at_ == '-';
        if (negative)
            ++at_;
        const char* digits = at_;
        if (at_ == end_ || !isDigit(*at_))
            return false;
        if (*at_ == '0')
            ++at_;
        else
            while (at_ < end_ && isDigit(*at_))
                ++at_;
        if (at_ - digits > kMaxDigits)
            return false;
        if (at_ != end_ && (*at_ == '.' || *at_ == 'e' || *at_ == 'E' || isDigit(*at_)))
            return false;
        if constexpr (kBuild) {
            std::int64_t n = 0;  // of at most 18 digits: within an int64
            for (const char* d = digits; d < at_; ++d)
                n = n * 10 + (*d - '0');
            *out = Value(negative ? -n : n);
        }
        return true;
    }
    void skipSpace() {
        while (at_ < end_ && isSpace(*at_))
            ++at_;
    }

    const char* at_;
    const char* end_;
    PlainJsonStacks* stacks_;
};

}  // namespace

// Eight at a time while none of the eight can end the run: the tests below
// have no false negatives, and a word they flag is walked byte by byte.
const char* skipPlainCharacters(const char* at, const char* end) {
    constexpr std::uint64_t kOnes = 0x0101010101010101u;
    constexpr std::uint64_t kHighs = 0x8080808080808080u;
    const auto hasByte = [](std::uint64_t word, unsigned char c) {
        const std::uint64_t x = word ^ (kOnes * c);
        return (x - kOnes) & ~x & kHighs;
    };
    for (std::uint64_t word; end - at >= 8; at += 8) {
        std::memcpy(&word, at, 8);
        const std::uint64_t stops = (word & kHighs) | ((word - kOnes * 0x20) & ~word & kHighs) |
                                    hasByte(word, '"') | hasByte(word, '\\') | hasByte(word, 0x7F);
        if (stops)
            break;
    }
    while (at < end && isPlainCharacter(*at))
        ++at;
    return at;
}

bool isPlainJson(std::string_view text) {
    return Scan<false>(text.data(), text.data() + text.size()).document(nullptr);
}

std::optional<Value> readPlainJson(std::string_view text) {
    PlainJsonStacks stacks;
    Value value;
    if (!Scan<true>(text.data(), text.data() + text.size(), &stacks).document(&value))
        return std::nullopt;
    return value;
}

std::string_view PlainJsonReader::string() {
    skipSpace();
    const char* begin = ++at_;  // past the quote
    at_ = static_cast<const char*>(std::memchr(begin, '"', static_cast<std::size_t>(end_ - begin)));
    return {begin, static_cast<std::size_t>(at_++ - begin)};
}

std::int64_t PlainJsonReader::integer() {
    skipSpace();
    const bool negative = *at_ == '-';
    if (negative)
        ++at_;
    std::int64_t n = 0;
    while (at_ < end_ && isDigit(*at_))
        n = n * 10 + (*at_++ - '0');
    return negative ? -n : n;
}

Value PlainJsonReader::value() {
    Scan<true> scan(at_, end_, &stacks_);
    Value value;
    [[maybe_unused]] const bool plain = scan.value(0, &value);
    assert(plain);  // the caller checked the whole text: nothing fails
    at_ = scan.position();
    return value;
}

}  // namespace tensordict
