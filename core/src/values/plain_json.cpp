#include "values/plain_json.h"

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
class Scan {
public:
    Scan(const char* at, const char* end) : at_(at), end_(end) {}

    bool document() {
        if (!value(0))
            return false;
        skipSpace();
        return at_ == end_;
    }

private:
    bool value(int depth) {
        skipSpace();
        if (at_ == end_)
            return false;
        switch (*at_) {
            case '{':
                return container(depth, '}', true);
            case '[':
                return container(depth, ']', false);
            case '"':
                return string();
            case 't':
                return literal("true");
            case 'f':
                return literal("false");
            case 'n':
                return literal("null");
            default:
                return number();
        }
    }
    bool container(int depth, char close, bool isObject) {
        if (depth + 1 >= kMaxDepth)
            return false;
        ++at_;
        skipSpace();
        if (at_ < end_ && *at_ == close) {
            ++at_;
            return true;
        }
        for (;;) {
            if (isObject) {
                skipSpace();
                if (!string())
                    return false;
                skipSpace();
                if (at_ == end_ || *at_++ != ':')
                    return false;
            }
            if (!value(depth + 1))
                return false;
            skipSpace();
            if (at_ == end_)
                return false;
            const char c = *at_++;
            if (c == close)
                return true;
            if (c != ',')
                return false;
        }
    }
    bool string() {
        if (at_ == end_ || *at_ != '"')
            return false;
        at_ = skipPlainCharacters(at_ + 1, end_);
        if (at_ == end_ || *at_ != '"')
            return false;
        ++at_;
        return true;
    }
    bool literal(std::string_view word) {
        if (std::string_view(at_, static_cast<std::size_t>(end_ - at_)).substr(0, word.size()) !=
            word)
            return false;
        at_ += word.size();
        return true;
    }
    // -?(0|[1-9][0-9]*), no fraction or exponent after it.
    bool number() {
        if (at_ < end_ && *at_ == '-')
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
        return at_ == end_ || (*at_ != '.' && *at_ != 'e' && *at_ != 'E' && !isDigit(*at_));
    }
    void skipSpace() {
        while (at_ < end_ && isSpace(*at_))
            ++at_;
    }

    const char* at_;
    const char* end_;
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
    return Scan(text.data(), text.data() + text.size()).document();
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

// A container's items are gathered on one stack shared by every level
// and moved into a vector of their exact number at its end: no vector grows
// item by item, moving what it holds each time it doubles.
Value PlainJsonReader::value() {
    switch (peek()) {
        case '{': {
            ++at_;
            const std::size_t first = members_.size();
            if (!take('}')) {
                do {
                    std::string key(string());
                    take(':');
                    Value v = value();
                    members_.emplace_back(std::move(key), std::move(v));
                } while (take(','));
                take('}');
            }
            Value::Object object(std::make_move_iterator(members_.begin() + first),
                                 std::make_move_iterator(members_.end()));
            members_.resize(first);
            return Value(std::move(object));
        }
        case '[': {
            ++at_;
            const std::size_t first = items_.size();
            if (!take(']')) {
                do
                    items_.push_back(value());
                while (take(','));
                take(']');
            }
            Value::List list(std::make_move_iterator(items_.begin() + first),
                             std::make_move_iterator(items_.end()));
            items_.resize(first);
            return Value(std::move(list));
        }
        case '"':
            return Value(std::string(string()));
        case 't':
            at_ += 4;
            return Value(true);
        case 'f':
            at_ += 5;
            return Value(false);
        case 'n':
            at_ += 4;
            return Value(nullptr);
        default:
            return Value(integer());
    }
}

}  // namespace tensordict
