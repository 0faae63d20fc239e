#include "values/pickle.h"

#include <algorithm>
#include <cstring>
#include <unordered_set>

#include "values/big_int.h"
#include "values/python_objects.h"

namespace tensordict {
namespace {

// Deeper plain data is refused (a million-deep list would also overflow
// the stack when destroyed).
constexpr int kMaxDepth = 256;
// Values made per byte of pickle, beyond a floor: shared objects count
// each time they are used (as a memo GET, ["cat"] * 1000000 is 2 or 3
// bytes a value), and a pickle that shares one tuple three times in each of
// twenty levels would be 3^20 values.
constexpr std::size_t kValuesPerByte = 16, kMinValues = 1u << 20;

// The plain-data policy over the one pickle decoder: None, bool, int, float,
// str, bytes, list, tuple, set and dict with str keys become a Value; any
// other object (a class, a call, a tensor), a cycle or deeper nesting
// makes the whole pickle not plain.
class PlainData {
public:
    // At most `maxValues` values in all (shared objects count each time).
    explicit PlainData(std::size_t maxValues) : valuesLeft_(maxValues) {}

    std::optional<Value> of(const python::Object& o, int depth) {
        using Type = python::Object::Type;
        if (depth > kMaxDepth || valuesLeft_ == 0 || !onPath_.insert(&o).second)
            return std::nullopt;
        --valuesLeft_;
        std::optional<Value> v;
        switch (o.type) {
            case Type::None:
                v = Value();
                break;
            case Type::Bool:
                v = Value(o.flag);
                break;
            case Type::Int:
                v = Value(o.integer);
                break;
            case Type::BigInt:
                v = Value::integer(o.text);
                break;
            case Type::Float:
                v = Value(o.real);
                break;
            case Type::Str:
                if (o.className.empty())
                    v = Value(o.text);
                break;
            case Type::Bytes:
                v = Value(Value::Bytes{o.text});
                break;
            case Type::List:
            case Type::Set:  // sets and frozensets as lists
            case Type::Tuple:
                if (o.type != Type::Tuple || o.className == "tuple")
                    v = items(o, depth);
                break;
            case Type::Dict:
                if (o.className == "dict")
                    v = entries(o, depth);
                break;
            default:
                break;
        }
        onPath_.erase(&o);
        return v;
    }

private:
    std::optional<Value> items(const python::Object& o, int depth) {
        Value::List list;
        list.reserve(o.items.size());
        for (const python::Object* item : o.items) {
            std::optional<Value> v = of(*item, depth + 1);
            if (!v)
                return std::nullopt;
            list.push_back(std::move(*v));
        }
        return Value(std::move(list));
    }

    std::optional<Value> entries(const python::Object& o, int depth) {
        Value::Object members;
        members.reserve(o.entries.size());
        for (const auto& [key, item] : o.entries) {
            if (key->type != python::Object::Type::Str || !key->className.empty())
                return std::nullopt;
            std::optional<Value> v = of(*item, depth + 1);
            if (!v)
                return std::nullopt;
            members.emplace_back(key->text, std::move(*v));
        }
        return Value(std::move(members));
    }

    std::unordered_set<const python::Object*> onPath_;
    std::size_t valuesLeft_;
};

void appendLE(std::string& out, std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i)
        out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

void appendSized(std::string& out, const std::string& s, char op1, char op4) {
    if (s.size() < 256) {
        out += op1;
        appendLE(out, s.size(), 1);
    } else {
        out += op4;
        appendLE(out, s.size(), 4);
    }
    out += s;
}

void encode(std::string& out, const Value& v) {
    if (v.isNull()) {
        out += 'N';
    } else if (v.isBool()) {
        out += static_cast<char>(v.asBool() ? 0x88 : 0x89);
    } else if (v.isBigInt()) {
        // LONG1 or LONG4 with the integer's two's-complement bytes, as pickle writes it.
        const std::string bytes = bigint::twosComplementFromDecimal(v.asBigInt().decimal);
        if (bytes.size() < 256) {
            out += static_cast<char>(0x8a);
            appendLE(out, bytes.size(), 1);
        } else {
            out += static_cast<char>(0x8b);
            appendLE(out, bytes.size(), 4);
        }
        out += bytes;
    } else if (v.isInt()) {
        const std::int64_t i = v.asInt();
        if (i >= 0 && i < 256) {
            out += 'K';
            appendLE(out, static_cast<std::uint64_t>(i), 1);
        } else if (i >= INT32_MIN && i <= INT32_MAX) {
            out += 'J';
            appendLE(out, static_cast<std::uint32_t>(static_cast<std::int32_t>(i)), 4);
        } else {
            out += static_cast<char>(0x8a);  // LONG1, 8 bytes two's complement
            out += static_cast<char>(8);
            appendLE(out, static_cast<std::uint64_t>(i), 8);
        }
    } else if (v.isDouble()) {
        out += 'G';
        std::uint64_t bits;
        const double d = v.asDouble();
        std::memcpy(&bits, &d, sizeof bits);
        for (int i = 7; i >= 0; --i)
            out += static_cast<char>((bits >> (8 * i)) & 0xFF);
    } else if (v.isString()) {
        appendSized(out, v.asString(), static_cast<char>(0x8c), 'X');
    } else if (v.isBytes()) {
        appendSized(out, v.asBytes().data, 'C', 'B');
    } else if (v.isList()) {
        out += ']';
        if (!v.asList().empty()) {
            out += '(';
            for (const Value& item : v.asList())
                encode(out, item);
            out += 'e';
        }
    } else {
        out += '}';
        if (!v.asObject().empty()) {
            out += '(';
            for (const auto& [k, item] : v.asObject()) {
                appendSized(out, k, static_cast<char>(0x8c), 'X');
                encode(out, item);
            }
            out += 'u';
        }
    }
}

}  // namespace

std::string encodePlainPickle(const Value& value) {
    std::string out("\x80\x04", 2);
    encode(out, value);
    out += '.';
    return out;
}

std::optional<Value> plainValue(const python::Object& object) {
    return PlainData(kMinValues * kValuesPerByte).of(object, 0);
}

std::optional<Value> decodePlainPickle(std::string_view bytes) {
    if (bytes.size() > (256u << 20))
        return std::nullopt;
    try {
        std::size_t pos = 0;
        const python::Pickle pickle = python::decode(bytes, &pos, "a pickle", {});
        return PlainData(std::max(bytes.size() * kValuesPerByte, kMinValues)).of(*pickle.root, 0);
    } catch (const Error&) {
        return std::nullopt;  // malformed, or it names a storage: shown as opaque
    }
}

}  // namespace tensordict
