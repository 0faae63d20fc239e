#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace tensordict {

// Plain data as it appears in non-tensor entries: what Python's json module
// (and the plain-data subset of pickle) can hold. Objects keep their key order.
// Integers are exact whatever their size: those outside int64 are BigInt.
class Value {
public:
    struct Bytes {
        std::string data;
        bool operator==(const Bytes& o) const { return data == o.data; }
    };
    // An integer outside int64, as its canonical decimal text ("-18446744073709551616").
    struct BigInt {
        std::string decimal;
        bool operator==(const BigInt& o) const { return decimal == o.decimal; }
    };
    using List = std::vector<Value>;
    using Object = std::vector<std::pair<std::string, Value>>;
    using Storage = std::variant<std::nullptr_t, bool, std::int64_t, double, std::string, Bytes,
                                 List, Object, BigInt>;

    Value() : v_(nullptr) {}
    Value(std::nullptr_t) : v_(nullptr) {}
    Value(bool b) : v_(b) {}
    Value(int i) : v_(std::int64_t{i}) {}
    Value(std::int64_t i) : v_(i) {}
    Value(double d) : v_(d) {}
    Value(const char* s) : v_(std::string(s)) {}
    Value(std::string s) : v_(std::move(s)) {}
    Value(Bytes b) : v_(std::move(b)) {}
    Value(List l) : v_(std::move(l)) {}
    Value(Object o) : v_(std::move(o)) {}
    // The integer `decimal` (canonical decimal text): an int when it fits in
    // int64, a BigInt otherwise. Throws Error for text that is not one.
    static Value integer(std::string_view decimal);

    bool isNull() const { return std::holds_alternative<std::nullptr_t>(v_); }
    bool isBool() const { return std::holds_alternative<bool>(v_); }
    bool isInt() const { return std::holds_alternative<std::int64_t>(v_); }
    bool isDouble() const { return std::holds_alternative<double>(v_); }
    bool isBigInt() const { return std::holds_alternative<BigInt>(v_); }
    bool isInteger() const { return isInt() || isBigInt(); }  // a Python int of any size
    bool isNumber() const { return isInteger() || isDouble(); }
    bool isString() const { return std::holds_alternative<std::string>(v_); }
    bool isBytes() const { return std::holds_alternative<Bytes>(v_); }
    bool isList() const { return std::holds_alternative<List>(v_); }
    bool isObject() const { return std::holds_alternative<Object>(v_); }

    bool asBool() const { return std::get<bool>(v_); }
    std::int64_t asInt() const { return std::get<std::int64_t>(v_); }
    const BigInt& asBigInt() const { return std::get<BigInt>(v_); }
    // Any number as the nearest double (a BigInt rounds).
    double asDouble() const;
    // An integer's exact decimal text.
    std::string integerText() const;
    const std::string& asString() const { return std::get<std::string>(v_); }
    const Bytes& asBytes() const { return std::get<Bytes>(v_); }
    const List& asList() const { return std::get<List>(v_); }
    List& asList() { return std::get<List>(v_); }
    const Object& asObject() const { return std::get<Object>(v_); }
    Object& asObject() { return std::get<Object>(v_); }

    // Object member lookup; the last of duplicate keys wins, as in Python.
    const Value* find(std::string_view key) const;

    const Storage& storage() const { return v_; }
    // Structural equality: the same type and the same exact value (an int
    // never equals a float, as a saved value must keep its type), NaN equal
    // to NaN.
    bool operator==(const Value& o) const;
    bool operator!=(const Value& o) const { return !(*this == o); }

private:
    Storage v_;
};

enum class JsonStyle {
    Python,         // json.dumps defaults: ", " / ": ", ASCII with \uXXXX escapes
    Compact,        // orjson-like: no spaces, raw UTF-8
    Pretty,         // indented, for people
    PythonCompact,  // json.dumps(separators=(",", ":")): compact, ASCII with \uXXXX escapes
};

// Parses a JSON document as Python's json.loads does: both writer styles,
// NaN / Infinity / -Infinity tokens. Throws Error naming `where` on failure.
Value parseJson(std::string_view text, const std::string& where);

// Writes NaN / Infinity as Python does. Bytes become {"__bytes_hex__": "..."}.
std::string toJson(const Value& value, JsonStyle style = JsonStyle::Python);
// `text` as toJson() writes a string, quotes and escapes, appended to `out`.
void appendJsonString(std::string& out, std::string_view text, JsonStyle style = JsonStyle::Python);

// What machine-readable output (--info/--diff/--check --json) writes: strict
// JSON, which every parser reads: non-finite floats as the strings "nan",
// "inf" and "-inf" instead of Python's bare NaN / Infinity tokens.
std::string toStrictJson(const Value& value, JsonStyle style = JsonStyle::Pretty);

}  // namespace tensordict
