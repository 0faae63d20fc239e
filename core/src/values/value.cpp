#include "tensordict/value.h"

#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <string_view>

#include "tensordict/error.h"
#include "values/big_int.h"
#include "values/json_members.h"
#include "values/plain_json.h"

namespace tensordict {

const Value* Value::find(std::string_view key) const {
    if (!isObject())
        return nullptr;
    const auto& members = asObject();
    for (auto it = members.rbegin(); it != members.rend(); ++it) {
        if (it->first == key)
            return &it->second;
    }
    return nullptr;
}

Value Value::integer(std::string_view decimal) {
    if (!bigint::isCanonicalDecimal(decimal))
        throw Error::corrupt({}, "not an integer: \"" + std::string(decimal.substr(0, 40)) + "\"");
    std::int64_t i = 0;
    const auto [at, ec] = std::from_chars(decimal.data(), decimal.data() + decimal.size(), i);
    if (ec == std::errc() && at == decimal.data() + decimal.size())
        return Value(i);
    Value v;
    v.v_ = BigInt{std::string(decimal)};
    return v;
}

double Value::asDouble() const {
    if (isInt())
        return double(asInt());
    if (isBigInt())
        return std::strtod(asBigInt().decimal.c_str(), nullptr);
    return std::get<double>(v_);
}

std::string Value::integerText() const {
    return isBigInt() ? asBigInt().decimal : std::to_string(asInt());
}

bool Value::operator==(const Value& o) const {
    // Structural: NaN equals NaN, so a value equals its own round trip; a
    // float never equals an int of the same value (their types differ).
    if (isDouble() && o.isDouble() && std::isnan(asDouble()) && std::isnan(o.asDouble()))
        return true;
    return v_ == o.v_;
}

namespace {

// Python's json.loads nesting is bounded by its recursion limit; bound ours so
// a hostile file cannot exhaust the stack when the Value is destroyed.
constexpr std::size_t kMaxDepth = 512;

class ValueBuilder : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, ValueBuilder> {
public:
    ValueBuilder() = default;
    // Hands the top-level object's members to `members` instead of keeping them.
    explicit ValueBuilder(const JsonMembers& members) : members_(&members) {}

    bool Null() { return add(Value(nullptr)); }
    bool Bool(bool b) { return add(Value(b)); }
    bool Int(int i) { return add(Value(std::int64_t{i})); }
    bool Uint(unsigned u) { return add(Value(std::int64_t{u})); }
    bool Int64(std::int64_t i) { return add(Value(i)); }
    bool Uint64(std::uint64_t u) { return add(Value::integer(std::to_string(u))); }
    bool Double(double d) { return add(Value(d)); }
    // Numbers arrive as their text (kParseNumbersAsStringsFlag): rapidjson's
    // own double conversion is not correctly rounded, and its full-precision
    // mode has bugs of its own (both found by fuzzing). std::from_chars rounds
    // correctly, as Python's float() does; integers of any size stay exact
    // integers, as Python's json reads them ("-0" is the int 0).
    bool RawNumber(const char* s, rapidjson::SizeType n, bool) {
        const char* end = s + n;
        if (std::find_if(s, end, [](char c) { return c == '.' || c == 'e' || c == 'E'; }) == end &&
            std::find_if(s, end, [](char c) { return c == 'N' || c == 'I'; }) == end) {
            const std::string_view text(s, n);
            if (text == "-0")
                return add(Value(std::int64_t{0}));
            if (!bigint::isCanonicalDecimal(text))
                return false;
            return add(Value::integer(text));
        }
        if (n == 3 && std::string_view(s, n) == "NaN")
            return add(Value(std::numeric_limits<double>::quiet_NaN()));
        if (std::string_view(s, n) == "Infinity" || std::string_view(s, n) == "-Infinity")
            return add(Value(s[0] == '-' ? -std::numeric_limits<double>::infinity()
                                         : std::numeric_limits<double>::infinity()));
        double d = 0;
        const auto [at, ec] = std::from_chars(s, end, d);
        if (at != end || (ec != std::errc() && ec != std::errc::result_out_of_range))
            return false;
        if (ec == std::errc::result_out_of_range)  // as Python: overflow to inf, underflow to 0
            d = std::strtod(std::string(s, n).c_str(), nullptr);
        return add(Value(d));
    }
    bool String(const char* s, rapidjson::SizeType n, bool) {
        return add(Value(std::string(s, n)));
    }
    bool Key(const char* s, rapidjson::SizeType n, bool) {
        keys_.back() = std::string(s, n);
        return true;
    }
    // Most objects and lists of meta.json are small: room for a few up front.
    bool StartObject() {
        if (members_ && !members_->streamed.empty() && stack_.size() == 1 && stack_[0].isObject() &&
            keys_.back() == members_->streamed) {
            streaming_ = true;
            if (!failure && members_->streamStarts)
                guarded([&] { members_->streamStarts(); });
        }
        Value::Object o;
        o.reserve(4);
        return open(Value(std::move(o)));
    }
    bool EndObject(rapidjson::SizeType) { return close(); }
    bool StartArray() {
        Value::List l;
        l.reserve(4);
        return open(Value(std::move(l)));
    }
    bool EndArray(rapidjson::SizeType) { return close(); }

    Value result;
    bool tooDeep = false;
    std::exception_ptr failure;  // the first a handler of `members_` threw

private:
    bool open(Value v) {
        if (stack_.size() >= kMaxDepth) {
            tooDeep = true;
            return false;
        }
        stack_.push_back(std::move(v));
        keys_.emplace_back();
        return true;
    }
    bool close() {
        Value done = std::move(stack_.back());
        stack_.pop_back();
        keys_.pop_back();
        return add(std::move(done));
    }
    bool add(Value v) {
        if (stack_.empty()) {
            result = std::move(v);
            return true;
        }
        if (members_ && stack_[0].isObject() &&
            (stack_.size() == 1 || (streaming_ && stack_.size() == 2)))
            return deliver(std::move(v));
        Value& top = stack_.back();
        if (top.isList()) {
            top.asList().push_back(std::move(v));
        } else {
            top.asObject().emplace_back(std::move(keys_.back()), std::move(v));
        }
        return true;
    }
    // A member of the top-level object ends (stack_ holds that object), or
    // one of the streamed object (stack_ holds both).
    bool deliver(Value v) {
        if (stack_.size() == 1 && streaming_) {  // the streamed object itself ends
            streaming_ = false;
            return true;
        }
        const auto& handler = stack_.size() == 2 ? members_->entry : members_->member;
        if (!failure && handler)
            guarded([&] { handler(std::move(keys_.back()), std::move(v)); });
        return true;
    }
    template <class Call>
    void guarded(const Call& call) {
        try {
            call();
        } catch (...) {
            failure = std::current_exception();
        }
    }

    const JsonMembers* members_ = nullptr;
    bool streaming_ = false;  // stack_[1] is the streamed object
    std::vector<Value> stack_;
    std::vector<std::string> keys_;
};

void appendUtf8Escaped(std::string& out, std::string_view s, bool asciiOnly) {
    static constexpr char kHex[] = "0123456789abcdef";
    auto u16 = [&](unsigned cp) {
        out += "\\u";
        for (int shift = 12; shift >= 0; shift -= 4)
            out += kHex[(cp >> shift) & 0xF];
    };
    out += '"';
    for (std::size_t i = 0; i < s.size(); ++i) {
        // Plain characters are written as they are, a run at a time.
        const std::size_t end = static_cast<std::size_t>(
            skipPlainCharacters(s.data() + i, s.data() + s.size()) - s.data());
        if (end > i) {
            out.append(s, i, end - i);
            i = end - 1;
            continue;
        }
        const auto c = static_cast<unsigned char>(s[i]);
        switch (c) {
            case '"':
                out += "\\\"";
                continue;
            case '\\':
                out += "\\\\";
                continue;
            case '\n':
                out += "\\n";
                continue;
            case '\r':
                out += "\\r";
                continue;
            case '\t':
                out += "\\t";
                continue;
            case '\b':
                out += "\\b";
                continue;
            case '\f':
                out += "\\f";
                continue;
            default:
                break;
        }
        if (c < 0x20 || (asciiOnly && c == 0x7F)) {
            u16(c);
        } else if (c < 0x80) {
            out += static_cast<char>(c);
        } else {
            // One UTF-8 sequence. Python escapes it as \uXXXX (surrogate pairs
            // above the BMP); the compact style keeps it raw, except a lone
            // surrogate (which Python's json accepts but is not UTF-8) and
            // invalid bytes, which only an escape can carry.
            unsigned cp = 0;
            int extra = 0;
            if ((c & 0xE0) == 0xC0)
                cp = c & 0x1F, extra = 1;
            else if ((c & 0xF0) == 0xE0)
                cp = c & 0x0F, extra = 2;
            else if ((c & 0xF8) == 0xF0)
                cp = c & 0x07, extra = 3;
            else
                extra = -1;
            bool valid = extra > 0 && i + static_cast<std::size_t>(extra) < s.size();
            for (int k = 1; valid && k <= extra; ++k)
                valid = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
            if (!valid) {
                u16(0xFFFD);
                continue;
            }
            for (int k = 1; k <= extra; ++k)
                cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
            const bool surrogate = cp >= 0xD800 && cp <= 0xDFFF;
            if (!asciiOnly && !surrogate) {
                out.append(s, i, static_cast<std::size_t>(extra) + 1);
            } else if (cp >= 0x10000) {
                cp -= 0x10000;
                u16(0xD800 + (cp >> 10));
                u16(0xDC00 + (cp & 0x3FF));
            } else {
                u16(cp);
            }
            i += static_cast<std::size_t>(extra);
        }
    }
    out += '"';
}

// Python's float repr: shortest round-trip digits, scientific notation when
// the decimal exponent is below -4 or at least 16.
void appendPythonFloat(std::string& out, double d) {
    if (std::isnan(d)) {
        out += "NaN";
        return;
    }
    if (std::isinf(d)) {
        out += d < 0 ? "-Infinity" : "Infinity";
        return;
    }
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
    std::string sci(buf, res.ptr);
    const auto ePos = sci.find('e');
    std::string mantissa = sci.substr(0, ePos);
    const int exp = std::stoi(sci.substr(ePos + 1));
    const bool negative = mantissa[0] == '-';
    if (negative)
        mantissa.erase(0, 1);
    std::string digits;
    for (char c : mantissa)
        if (c != '.')
            digits += c;
    if (negative)
        out += '-';
    if (exp >= -4 && exp < 16) {
        if (exp < 0) {
            out += "0.";
            out.append(static_cast<std::size_t>(-exp - 1), '0');
            out += digits;
        } else {
            const auto intLen = static_cast<std::size_t>(exp) + 1;
            if (digits.size() <= intLen) {
                out += digits;
                out.append(intLen - digits.size(), '0');
                out += ".0";
            } else {
                out += digits.substr(0, intLen) + "." + digits.substr(intLen);
            }
        }
    } else {
        out += digits.substr(0, 1);
        if (digits.size() > 1)
            out += "." + digits.substr(1);
        char e[16];
        std::snprintf(e, sizeof e, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
        out += e;
    }
}

void write(std::string& out, const Value& v, JsonStyle style, int depth, bool strict) {
    const bool pretty = style == JsonStyle::Pretty;
    const bool compact = style == JsonStyle::Compact || style == JsonStyle::PythonCompact;
    const bool ascii = style == JsonStyle::Python || style == JsonStyle::PythonCompact;
    const char* itemSep = compact ? "," : (pretty ? "," : ", ");
    const char* keySep = compact ? ":" : ": ";
    auto newline = [&](int d) {
        if (!pretty)
            return;
        out += '\n';
        out.append(static_cast<std::size_t>(d) * 2, ' ');
    };
    const auto& s = v.storage();
    if (v.isNull()) {
        out += "null";
    } else if (v.isBool()) {
        out += v.asBool() ? "true" : "false";
    } else if (v.isInteger()) {
        out += v.integerText();
    } else if (v.isDouble()) {
        const double d = std::get<double>(s);
        if (strict && !std::isfinite(d))
            out += std::isnan(d) ? "\"nan\"" : d < 0 ? "\"-inf\"" : "\"inf\"";
        else
            appendPythonFloat(out, d);
    } else if (v.isString()) {
        appendUtf8Escaped(out, v.asString(), ascii);
    } else if (v.isBytes()) {
        static constexpr char kHex[] = "0123456789abcdef";
        std::string hex;
        for (unsigned char c : v.asBytes().data) {
            hex += kHex[c >> 4];
            hex += kHex[c & 0xF];
        }
        write(out, Value(Value::Object{{"__bytes_hex__", Value(hex)}}), style, depth, strict);
    } else if (v.isList()) {
        const auto& list = v.asList();
        out += '[';
        for (std::size_t i = 0; i < list.size(); ++i) {
            if (i)
                out += itemSep;
            newline(depth + 1);
            write(out, list[i], style, depth + 1, strict);
        }
        if (!list.empty())
            newline(depth);
        out += ']';
    } else {
        const auto& obj = v.asObject();
        out += '{';
        for (std::size_t i = 0; i < obj.size(); ++i) {
            if (i)
                out += itemSep;
            newline(depth + 1);
            appendUtf8Escaped(out, obj[i].first, ascii);
            out += keySep;
            write(out, obj[i].second, style, depth + 1, strict);
        }
        if (!obj.empty())
            newline(depth);
        out += '}';
    }
}

}  // namespace

namespace {

// Whether every byte of `text` that is not ASCII belongs to a sequence that
// rapidjson's own UTF-8 validation accepts. ASCII is skipped eight bytes at
// a time: the headers of a model are nearly all ASCII, and validating them
// byte by byte in the parse took a fifth of its time.
bool isUtf8AsRapidjsonValidates(std::string_view text) {
    // The streams Validate() takes: bytes in (NUL past the end, as
    // rapidjson's MemoryStream), nothing out.
    struct Bytes {
        const char *at, *end;
        char Take() { return at < end ? *at++ : '\0'; }
    } in{text.data(), text.data() + text.size()};
    struct Discard {
        void Put(char) {}
    } out;
    for (;;) {
        for (std::uint64_t word; in.end - in.at >= 8; in.at += 8) {
            std::memcpy(&word, in.at, 8);
            if (word & 0x8080808080808080u)
                break;
        }
        while (in.at < in.end && static_cast<unsigned char>(*in.at) < 0x80)
            ++in.at;
        if (in.at == in.end)
            return true;
        if (!rapidjson::UTF8<char>::Validate(in, out))
            return false;
    }
}

// Numbers as text, converted by the builder (see RawNumber).
constexpr unsigned kParseFlags =
    rapidjson::kParseNanAndInfFlag | rapidjson::kParseStopWhenDoneFlag |
    rapidjson::kParseIterativeFlag | rapidjson::kParseNumbersAsStringsFlag;

void parse(ValueBuilder& builder, std::string_view text, const std::string& where) {
    rapidjson::Reader reader;
    rapidjson::MemoryStream stream(text.data(), text.size());
    // Text already known to be valid needs no validation as it is parsed:
    // the same result. Other text is validated as it is parsed, so that the
    // error names the byte where the string went wrong.
    const rapidjson::ParseResult ok =
        isUtf8AsRapidjsonValidates(text)
            ? reader.Parse<kParseFlags>(stream, builder)
            : reader.Parse<kParseFlags | rapidjson::kParseValidateEncodingFlag>(stream, builder);
    if (!ok) {
        if (builder.tooDeep)
            throw Error::corrupt(where, "JSON nested deeper than 512 levels");
        throw Error::corrupt(where, std::string("invalid JSON at byte ") +
                                        std::to_string(ok.Offset()) + ": " +
                                        rapidjson::GetParseError_En(ok.Code()));
    }
    // Only white space may follow the document.
    for (std::size_t i = stream.Tell(); i < text.size(); ++i) {
        const char c = text[i];
        if (c != ' ' && c != '\n' && c != '\r' && c != '\t')
            throw Error::corrupt(where, "invalid JSON: trailing data at byte " + std::to_string(i));
    }
}

}  // namespace

Value parseJson(std::string_view text, const std::string& where) {
    if (std::optional<Value> plain = readPlainJson(text))
        return std::move(*plain);
    return parseJsonGenerally(text, where);
}

Value parseJsonGenerally(std::string_view text, const std::string& where) {
    ValueBuilder builder;
    parse(builder, text, where);
    return std::move(builder.result);
}

bool parseJsonMembers(std::string_view text, const std::string& where,
                      const JsonMembers& handlers) {
    if (isPlainJson(text))
        return readPlainMembers(text, [&](std::string key, PlainJsonReader& json) {
            const bool streams =
                !handlers.streamed.empty() && key == handlers.streamed && json.peek() == '{';
            if (!streams) {
                Value value = json.value();
                if (handlers.member)
                    handlers.member(std::move(key), std::move(value));
                return;
            }
            if (handlers.streamStarts)
                handlers.streamStarts();
            json.members([&](std::string entryKey, PlainJsonReader& entries) {
                Value value = entries.value();
                if (handlers.entry)
                    handlers.entry(std::move(entryKey), std::move(value));
            });
        });
    ValueBuilder builder(handlers);
    parse(builder, text, where);
    if (builder.failure)
        std::rethrow_exception(builder.failure);
    return builder.result.isObject();
}

void appendJsonString(std::string& out, std::string_view text, JsonStyle style) {
    appendUtf8Escaped(out, text, style == JsonStyle::Python || style == JsonStyle::PythonCompact);
}

std::string toJson(const Value& value, JsonStyle style) {
    std::string out;
    write(out, value, style, 0, false);
    return out;
}

std::string toStrictJson(const Value& value, JsonStyle style) {
    std::string out;
    write(out, value, style, 0, true);
    return out;
}

}  // namespace tensordict
