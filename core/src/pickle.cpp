#include "pickle.h"

#include <algorithm>
#include <cstring>
#include <map>

namespace tensordict {
namespace {

class PlainUnpickler {
public:
    explicit PlainUnpickler(std::string_view in) : in_(in) {}

    std::optional<Value> run() {
        while (pos_ < in_.size()) {
            const auto op = static_cast<unsigned char>(in_[pos_++]);
            if (op == '.') {  // STOP
                if (stack_.size() != 1 || !marks_.empty())
                    return std::nullopt;
                return std::move(stack_.back());
            }
            if (!step(op))
                return std::nullopt;
        }
        return std::nullopt;  // no STOP: truncated
    }

private:
    bool need(std::size_t n) const { return in_.size() - pos_ >= n; }
    std::uint64_t readLE(std::size_t n) {
        std::uint64_t v = 0;
        for (std::size_t i = 0; i < n; ++i)
            v |= std::uint64_t(static_cast<unsigned char>(in_[pos_ + i])) << (8 * i);
        pos_ += n;
        return v;
    }
    bool pushString(std::size_t lenBytes, bool isBytes) {
        if (!need(lenBytes))
            return false;
        const std::uint64_t len = readLE(lenBytes);
        if (!need(len))
            return false;
        std::string s(in_.substr(pos_, len));
        pos_ += len;
        return push(isBytes ? Value(Value::Bytes{std::move(s)}) : Value(std::move(s)));
    }

    // Every value on the stack carries its nesting depth, checked as each
    // container grows: a deeper value is refused before it exists (a
    // million-deep one would also overflow the stack when destroyed).
    bool push(Value v, int depth = 0) {
        if (depth > kMaxDepth)
            return false;
        stack_.push_back(std::move(v));
        depths_.push_back(depth);
        return true;
    }
    void pop() {
        stack_.pop_back();
        depths_.pop_back();
    }
    // Moves the values above the topmost mark into `items`; `depth` gets the
    // depth of a container holding them.
    bool popMark(std::vector<Value>& items, int& depth) {
        if (marks_.empty() || marks_.back() > stack_.size())
            return false;
        const std::size_t mark = marks_.back();
        marks_.pop_back();
        items.assign(std::make_move_iterator(stack_.begin() + mark),
                     std::make_move_iterator(stack_.end()));
        depth = 1;
        for (std::size_t i = mark; i < depths_.size(); ++i)
            depth = std::max(depth, depths_[i] + 1);
        stack_.resize(mark);
        depths_.resize(mark);
        return true;
    }
    // The container on top of the stack now also holds a value of `inner` depth.
    bool deepen(int inner) {
        depths_.back() = std::max(depths_.back(), inner + 1);
        return depths_.back() <= kMaxDepth;
    }
    static bool setItem(Value& dict, Value key, Value value) {
        if (!dict.isObject() || !key.isString())
            return false;  // non-str keys: not plain data
        auto& obj = dict.asObject();
        for (auto& kv : obj) {
            if (kv.first == key.asString()) {
                kv.second = std::move(value);
                return true;
            }
        }
        obj.emplace_back(key.asString(), std::move(value));
        return true;
    }
    bool tupleOf(std::size_t n) {
        if (stack_.size() < n + marksBelowTop())
            return false;
        Value::List items(std::make_move_iterator(stack_.end() - n),
                          std::make_move_iterator(stack_.end()));
        int depth = 1;
        for (std::size_t i = depths_.size() - n; i < depths_.size(); ++i)
            depth = std::max(depth, depths_[i] + 1);
        stack_.resize(stack_.size() - n);
        depths_.resize(depths_.size() - n);
        return push(Value(std::move(items)), depth);
    }
    std::size_t marksBelowTop() const { return marks_.empty() ? 0 : marks_.back(); }

    // Scalars are remembered by value; containers only as "not plain data".
    void memoize(std::uint64_t id) {
        const Value& top = stack_.back();
        if (top.isList() || top.isObject())
            memo_[id] = std::nullopt;
        else
            memo_[id] = top;
    }

    static constexpr int kMaxDepth = 256;

    bool step(unsigned char op) {
        std::vector<Value> items;
        int depth = 0;
        switch (op) {
            case 0x80:
                return need(1) && (pos_ += 1, true);  // PROTO
            case 0x95:
                return need(8) && (pos_ += 8, true);  // FRAME
            case '}':
                return push(Value(Value::Object{}), 1);  // EMPTY_DICT
            case ']':
                return push(Value(Value::List{}), 1);  // EMPTY_LIST
            case ')':
                return push(Value(Value::List{}), 1);  // EMPTY_TUPLE
            case 0x8f:
                return push(Value(Value::List{}), 1);  // EMPTY_SET
            case '(':
                marks_.push_back(stack_.size());
                return true;  // MARK
            case 'N':
                return push(Value(nullptr));
            case 0x88:
                return push(Value(true));
            case 0x89:
                return push(Value(false));
            case 'K':
                return need(1) && push(Value(std::int64_t(readLE(1))));
            case 'M':
                return need(2) && push(Value(std::int64_t(readLE(2))));
            case 'J':
                return need(4) && push(Value(std::int64_t(std::int32_t(readLE(4)))));
            case 0x8a: {  // LONG1: little-endian two's complement
                if (!need(1))
                    return false;
                const std::size_t n = readLE(1);
                if (n > 8 || !need(n))
                    return false;  // beyond int64: not representable
                std::uint64_t v = n ? readLE(n) : 0;
                if (n && n < 8 && (v >> (8 * n - 1)) & 1)
                    v |= ~std::uint64_t(0) << (8 * n);
                return push(Value(static_cast<std::int64_t>(v)));
            }
            case 'G': {  // BINFLOAT, big-endian
                if (!need(8))
                    return false;
                std::uint64_t bits = 0;
                for (int i = 0; i < 8; ++i)
                    bits = (bits << 8) | static_cast<unsigned char>(in_[pos_ + i]);
                pos_ += 8;
                double d;
                std::memcpy(&d, &bits, sizeof d);
                return push(Value(d));
            }
            case 0x8c:
                return pushString(1, false);  // SHORT_BINUNICODE
            case 'X':
                return pushString(4, false);  // BINUNICODE
            case 0x8d:
                return pushString(8, false);  // BINUNICODE8
            case 'C':
                return pushString(1, true);  // SHORT_BINBYTES
            case 'B':
                return pushString(4, true);  // BINBYTES
            case 0x8e:
                return pushString(8, true);  // BINBYTES8
            case 0x94:                       // MEMOIZE
                if (stack_.empty())
                    return false;
                memoize(memo_.size());
                return true;
            case 'q':
            case 'r': {  // BINPUT, LONG_BINPUT
                const std::size_t n = op == 'q' ? 1 : 4;
                if (!need(n) || stack_.empty())
                    return false;
                memoize(readLE(n));
                return true;
            }
            case 'h':
            case 'j': {  // BINGET, LONG_BINGET
                const std::size_t n = op == 'h' ? 1 : 4;
                if (!need(n))
                    return false;
                auto it = memo_.find(readLE(n));
                // A memoized container may have been filled after it was
                // memoized; a shared reference to it is not plain data here.
                if (it == memo_.end() || !it->second)
                    return false;
                return push(*it->second);
            }
            case 't':   // TUPLE
            case 0x91:  // FROZENSET
                return popMark(items, depth) && push(Value(Value::List(std::move(items))), depth);
            case 0x85:
                return tupleOf(1);
            case 0x86:
                return tupleOf(2);
            case 0x87:
                return tupleOf(3);
            case 'a': {  // APPEND
                if (stack_.size() < 2 + marksBelowTop() || !stack_[stack_.size() - 2].isList())
                    return false;
                Value item = std::move(stack_.back());
                const int inner = depths_.back();
                pop();
                stack_.back().asList().push_back(std::move(item));
                return deepen(inner);
            }
            case 'e':   // APPENDS
            case 0x90:  // ADDITEMS
                if (!popMark(items, depth) || stack_.empty() || !stack_.back().isList())
                    return false;
                for (auto& item : items)
                    stack_.back().asList().push_back(std::move(item));
                return deepen(depth - 1);
            case 's': {  // SETITEM
                if (stack_.size() < 3 + marksBelowTop())
                    return false;
                Value value = std::move(stack_.back());
                const int inner = depths_.back();
                pop();
                Value key = std::move(stack_.back());
                pop();
                return setItem(stack_.back(), std::move(key), std::move(value)) && deepen(inner);
            }
            case 'u':  // SETITEMS
                if (!popMark(items, depth) || items.size() % 2 || stack_.empty())
                    return false;
                for (std::size_t i = 0; i < items.size(); i += 2)
                    if (!setItem(stack_.back(), std::move(items[i]), std::move(items[i + 1])))
                        return false;
                return deepen(depth - 1);
            default:
                return false;  // anything that imports, calls or builds objects
        }
    }

    std::string_view in_;
    std::size_t pos_ = 0;
    std::vector<Value> stack_;
    std::vector<int> depths_;  // nesting depth of each stack value
    std::vector<std::size_t> marks_;
    std::map<std::uint64_t, std::optional<Value>> memo_;
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

std::optional<Value> decodePlainPickle(std::string_view bytes) {
    if (bytes.size() > (256u << 20))
        return std::nullopt;
    return PlainUnpickler(bytes).run();
}

}  // namespace tensordict
