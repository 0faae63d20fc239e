#include "values/python_objects.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "tensordict/error.h"
#include "tensordict/keys.h"
#include "values/big_int.h"
#include "values/python_calls.h"

namespace tensordict::python {
namespace {

// Bounds on what one pickle may build: far beyond any real checkpoint, and
// small enough that a hostile file fails fast instead of exhausting memory.
// (An object is about 200 bytes: 4 Mi of them are under 1 GiB, and a
// state_dict of 10,000 tensors makes about 300,000.)
constexpr std::size_t kMaxObjects = 4u << 20;
constexpr std::size_t kMaxStack = 16u << 20;
// What decoding may copy besides its objects (a call's arguments, a set's
// items, bytes of _codecs.encode), in items or bytes: a pickle that names one
// big tuple a million times is refused instead of copying it each time.
constexpr std::size_t kMaxCopied = 64u << 20;
// LONG4 integers are refused past 4,096 bytes; text integers past as many
// digits (Python itself refuses to print an int of more than 4,300).
constexpr std::size_t kMaxIntegerDigits = 9865;

using Type = Object::Type;

class Decoder final : public ObjectMaker {
public:
    Decoder(std::string_view in, std::size_t pos, std::string where, const PersistentLoad& load)
        : in_(in), pos_(pos), where_(std::move(where)), persistentLoad_(load) {}

    Pickle run(std::size_t* end) {
        while (true) {
            const auto op = static_cast<unsigned char>(byte());
            if (op == '.') {
                if (stack_.size() != 1 || !marks_.empty())
                    fail("the pickle ends with " + std::to_string(stack_.size()) +
                         " values on its stack");
                out_.root = stack_.back();
                *end = pos_;
                return std::move(out_);
            }
            step(op);
        }
    }

    [[noreturn]] void fail(const std::string& why) const override {
        throw Error::corrupt(where_,
                             "malformed pickle at byte " + std::to_string(pos_) + ": " + why);
    }

private:
    char byte() {
        if (pos_ >= in_.size())
            throw Truncated(where_, "the pickle is truncated (no STOP opcode)");
        return in_[pos_++];
    }
    std::string_view take(std::uint64_t n) {
        if (n > in_.size() - pos_)
            throw Truncated(where_, "the pickle is truncated: " + std::to_string(n) +
                                        " bytes announced at byte " + std::to_string(pos_) + ", " +
                                        std::to_string(in_.size() - pos_) + " left");
        const std::string_view s = in_.substr(pos_, static_cast<std::size_t>(n));
        pos_ += static_cast<std::size_t>(n);
        return s;
    }
    std::uint64_t little(std::size_t n) {
        const std::string_view s = take(n);
        std::uint64_t v = 0;
        for (std::size_t i = 0; i < n; ++i)
            v |= std::uint64_t(static_cast<unsigned char>(s[i])) << (8 * i);
        return v;
    }
    std::string_view line() {
        const std::size_t nl = in_.find('\n', pos_);
        if (nl == std::string_view::npos)
            throw Truncated(where_, "the pickle is truncated (a text argument has no newline)");
        const std::string_view s = in_.substr(pos_, nl - pos_);
        pos_ = nl + 1;
        return s;
    }

    // Charges `n` copied items or bytes to the pickle's budget.
    void charge(std::size_t n) override {
        copied_ += n;
        if (copied_ > kMaxCopied)
            fail("the pickle copies more than " + std::to_string(kMaxCopied) +
                 " items or bytes (a structure named over and over)");
    }

    Object* make(Type type) override {
        if (out_.objects.size() >= kMaxObjects)
            fail("more than " + std::to_string(kMaxObjects) + " objects");
        Object& o = out_.objects.emplace_back();
        o.type = type;
        return &o;
    }
    Object* makeInt(std::int64_t v) {
        // Small ints are shared, as Python shares them: nothing changes an
        // int once made, and a DCP .metadata holds a million of them
        // (chunk offsets and sizes), most of them small.
        const bool small = v >= -1 && v < std::int64_t(kSharedInts) - 1;
        if (small) {
            if (Object* shared = sharedInts_[static_cast<std::size_t>(v + 1)])
                return shared;
        }
        Object* o = make(Type::Int);
        o->integer = v;
        if (small)
            sharedInts_[static_cast<std::size_t>(v + 1)] = o;
        return o;
    }
    Object* makeText(Type type, std::string_view s) override {
        Object* o = make(type);
        o->text = std::string(s);
        return o;
    }

    void push(Object* o) {
        if (stack_.size() >= kMaxStack)
            fail("the stack is deeper than " + std::to_string(kMaxStack));
        stack_.push_back(o);
    }
    Object* pop() {
        if (stack_.size() <= floor())
            fail("pop from an empty stack");
        Object* o = stack_.back();
        stack_.pop_back();
        return o;
    }
    Object* top() {
        if (stack_.size() <= floor())
            fail("an empty stack");
        return stack_.back();
    }
    std::size_t floor() const { return marks_.empty() ? 0 : marks_.back(); }
    std::vector<Object*> popMark() {
        if (marks_.empty())
            fail("no MARK to pop to");
        const std::size_t mark = marks_.back();
        marks_.pop_back();
        std::vector<Object*> items(stack_.begin() + static_cast<std::ptrdiff_t>(mark),
                                   stack_.end());
        stack_.resize(mark);
        return items;
    }

    // Memo ids count up from 0 (MEMOIZE, and what pickle writes for PUT):
    // those below kMaxObjects live in a vector, any other in a map.
    void memoPut(std::uint64_t id) {
        Object*& slot = memoSlot(id);
        if (!slot) {
            if (memoCount_ >= kMaxObjects)
                fail("more than " + std::to_string(kMaxObjects) + " memo entries");
            ++memoCount_;
        }
        slot = top();
    }
    Object* memoGet(std::uint64_t id) {
        Object* found = nullptr;
        if (id < denseMemo_.size()) {
            found = denseMemo_[id];
        } else if (const auto it = sparseMemo_.find(id); it != sparseMemo_.end()) {
            found = it->second;
        }
        if (!found)
            fail("memo entry " + std::to_string(id) + " was never stored");
        return found;
    }
    Object*& memoSlot(std::uint64_t id) {
        if (id >= kMaxObjects)
            return sparseMemo_[id];
        if (id >= denseMemo_.size())
            denseMemo_.resize(std::max<std::size_t>(id + 1, denseMemo_.size() * 2), nullptr);
        return denseMemo_[id];
    }

    Object* tuple(std::vector<Object*> items) override {
        Object* t = make(Type::Tuple);
        t->className = "tuple";
        t->items = std::move(items);
        return t;
    }
    // EMPTY_TUPLE's one tuple, as Python shares it: no tuple changes once
    // made, and a DCP .metadata names 300,000 (each chunk's arguments).
    Object* emptyTuple() {
        if (!emptyTuple_)
            emptyTuple_ = tuple({});
        return emptyTuple_;
    }
    Object* tupleOf(std::size_t n) {
        std::vector<Object*> items(n);
        for (std::size_t i = n; i-- > 0;)
            items[i] = pop();
        return tuple(std::move(items));
    }

    // dict[key] = value, for a key Python can hash (it fails on others).
    void setItem(Object* dict, Object* key, Object* value) override {
        needHashable(*key, "a dict key");
        dict->entries.emplace_back(key, value);
    }
    // Fails, as Python does, when `item` (a dict key, a set item) cannot be hashed.
    void needHashable(const Object& item, const char* what) const {
        if (const Object* unhashable = unhashablePart(item))
            fail(std::string(what) + " that holds a " + typeName(*unhashable) +
                 ", which Python cannot hash");
    }
    void needHashable(const std::vector<Object*>& items, const char* what) const {
        for (const Object* item : items)
            needHashable(*item, what);
    }
    // The list, dict or set in `key` (itself, or inside its tuples), if any.
    static const Object* unhashablePart(const Object& key) {
        if (key.type != Type::Tuple)
            return isUnhashable(key) ? &key : nullptr;
        // Tuples may share tuples (a DAG): each is looked into once.
        std::vector<const Object*> pending{&key};
        std::unordered_set<const Object*> seen{&key};
        while (!pending.empty()) {
            const Object* t = pending.back();
            pending.pop_back();
            for (const Object* item : t->items) {
                if (isUnhashable(*item))
                    return item;
                if (item->type == Type::Tuple && seen.insert(item).second)
                    pending.push_back(item);
            }
        }
        return nullptr;
    }
    static bool isUnhashable(const Object& o) {
        return o.type == Type::List || o.type == Type::Dict ||
               (o.type == Type::Set && o.className == "set");
    }
    // The integer of protocol 0's INT and LONG opcodes ("123", "123L"), of any size.
    Object* decimal(std::string_view s) {
        while (!s.empty() && (s.back() == 'L' || s.back() == '\r'))
            s.remove_suffix(1);
        const bool plus = !s.empty() && s[0] == '+';
        if (plus)
            s.remove_prefix(1);
        // Python's int() takes leading zeros ("00" is handled by the caller).
        const bool negative = !s.empty() && s[0] == '-';
        std::string digits(s.substr(negative ? 1 : 0));
        digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size() - 1));
        if (digits.size() > kMaxIntegerDigits)
            fail("an integer of " + std::to_string(digits.size()) + " digits");
        const std::string text = (negative && digits != "0" ? "-" : "") + digits;
        if (!bigint::isCanonicalDecimal(text))
            fail("not an integer: \"" + std::string(s.substr(0, 40)) + "\"");
        return integer(text);
    }

    // A str of UTF-8 bytes, as Python decodes them: strictly, or letting
    // lone surrogates pass (as it reads BINUNICODE).
    Object* utf8(std::string_view bytes, bool surrogates) {
        needUtf8(bytes, surrogates);
        return makeText(Type::Str, bytes);
    }
    // A line of text that Python decodes as UTF-8 (a global's module and name).
    std::string_view utf8Line() {
        const std::string_view text = line();
        needUtf8(text, false);
        return text;
    }
    void needUtf8(std::string_view bytes, bool surrogates) const {
        for (std::size_t i = 0; i < bytes.size();) {
            const auto lead = static_cast<unsigned char>(bytes[i]);
            if (lead < 0x80) {
                ++i;
                continue;
            }
            const std::size_t more = lead >= 0xF0 ? 3 : lead >= 0xE0 ? 2 : 1;
            std::uint32_t cp = lead & (0x3Fu >> more);
            bool ok = lead >= 0xC2 && lead <= 0xF4 && bytes.size() - i > more;
            for (std::size_t k = 1; ok && k <= more; ++k) {
                const auto next = static_cast<unsigned char>(bytes[i + k]);
                ok = (next & 0xC0) == 0x80;
                cp = (cp << 6) | (next & 0x3Fu);
            }
            const std::uint32_t least = more == 1 ? 0x80 : more == 2 ? 0x800 : 0x10000;
            if (!ok || cp < least || cp > 0x10FFFF || (!surrogates && cp >= 0xD800 && cp <= 0xDFFF))
                fail("a string that is not UTF-8");
            i += more + 1;
        }
    }

    // The memo index of protocol 0's PUT and GET.
    std::uint64_t memoIndex(std::string_view s) {
        std::uint64_t v = 0;
        const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
        if (r.ec != std::errc() || r.ptr != s.data() + s.size())
            fail("not a memo index: \"" + std::string(s.substr(0, 40)) + "\"");
        return v;
    }

    Object* integer(const std::string& decimal) {
        std::int64_t v = 0;
        const auto r = std::from_chars(decimal.data(), decimal.data() + decimal.size(), v);
        if (r.ec == std::errc() && r.ptr == decimal.data() + decimal.size())
            return makeInt(v);
        return makeText(Type::BigInt, decimal);
    }

    // A little-endian two's-complement integer of n bytes (LONG1, LONG4).
    Object* longOf(std::string_view bytes) {
        if (bytes.size() <= 8) {
            std::uint64_t v = 0;
            for (std::size_t i = 0; i < bytes.size(); ++i)
                v |= std::uint64_t(static_cast<unsigned char>(bytes[i])) << (8 * i);
            if (!bytes.empty() && bytes.size() < 8 &&
                (static_cast<unsigned char>(bytes.back()) & 0x80))
                v |= ~std::uint64_t(0) << (8 * bytes.size());  // sign-extend
            return makeInt(static_cast<std::int64_t>(v));
        }
        return integer(bigint::decimalFromTwosComplement(bytes));
    }

    // One opcode, asked of each family in turn, the most frequent first: in
    // a DCP .metadata nearly half the opcodes are the memo's, a quarter
    // make or fill containers, and a seventh are values.
    void step(unsigned char op) {
        if (memoOp(op) || containerOp(op) || valueOp(op) || objectOp(op) || stackOp(op))
            return;
        static const char* hex = "0123456789abcdef";
        fail(std::string("unsupported opcode 0x") + hex[op >> 4] + hex[op & 15]);
    }

    // Framing and the stack itself. Each family says whether `op` is its own.
    bool stackOp(unsigned char op) {
        switch (op) {
            case 0x80:  // PROTO
                protocol_ = static_cast<unsigned char>(byte());
                if (protocol_ > 5)
                    fail("pickle protocol above 5");
                return true;
            case 0x95: {  // FRAME: the opcodes of its length follow (Python reads them at once)
                const std::uint64_t length = little(8);
                if (length > in_.size() - pos_)
                    throw Truncated(where_, "the pickle is truncated: a frame of " +
                                                std::to_string(length) + " bytes at byte " +
                                                std::to_string(pos_) + ", " +
                                                std::to_string(in_.size() - pos_) + " left");
                return true;
            }
            case '(':
                if (marks_.size() >= kMaxStack)
                    fail("more than " + std::to_string(kMaxStack) + " open MARKs");
                marks_.push_back(stack_.size());
                return true;
            case '0':
                pop();
                return true;
            case '1':
                popMark();
                return true;
            case '2':
                push(top());
                return true;
            default:
                return false;
        }
    }

    // None, bools, numbers, strings and bytes: one value pushed.
    bool valueOp(unsigned char op) {
        Object* value = nullptr;
        switch (op) {
            case 'N':
                value = make(Type::None);
                break;
            case 0x88:
            case 0x89:
                value = make(Type::Bool);
                value->flag = op == 0x88;
                break;
            case 'I': {
                const std::string_view s = line();
                if (s == "00" || s == "01") {
                    value = make(Type::Bool);
                    value->flag = s == "01";
                } else {
                    value = decimal(s);
                }
                break;
            }
            case 'L':
                value = decimal(line());
                break;
            case 'J':
                value = makeInt(static_cast<std::int32_t>(little(4)));
                break;
            case 'K':
                value = makeInt(static_cast<std::int64_t>(little(1)));
                break;
            case 'M':
                value = makeInt(static_cast<std::int64_t>(little(2)));
                break;
            case 0x8a:
                value = longOf(take(little(1)));
                break;
            case 0x8b: {
                const std::uint64_t n = little(4);
                if (n > 4096)
                    fail("an integer of " + std::to_string(n) + " bytes");
                value = longOf(take(n));
                break;
            }
            case 'F':
                value = textFloat(line());
                break;
            case 'G':
                value = binaryFloat(take(8));
                break;
            case 'X':
                value = utf8(take(little(4)), true);
                break;
            case 'T':  // Python 2 str, which torch.load reads as UTF-8
                value = utf8(take(little(4)), false);
                break;
            case 0x8c:
                value = utf8(take(little(1)), true);
                break;
            case 'U':
                value = utf8(take(little(1)), false);
                break;
            case 0x8d:
                value = utf8(take(little(8)), true);
                break;
            case 'V':
                value = makeText(Type::Str, line());  // raw-unicode-escape, kept as read
                break;
            case 'S':
                value = makeText(Type::Str, unquoted(line()));
                break;
            case 'B':
                value = makeText(Type::Bytes, take(little(4)));
                break;
            case 'C':
                value = makeText(Type::Bytes, take(little(1)));
                break;
            case 0x8e:
            case 0x96:
                value = makeText(Type::Bytes, take(little(8)));
                break;
            default:
                return false;
        }
        push(value);
        return true;
    }

    // FLOAT's text: from_chars, the same digits whatever the locale; the whole line a number.
    Object* textFloat(std::string_view text) {
        while (!text.empty() && text.back() == '\r')
            text.remove_suffix(1);
        Object* f = make(Type::Float);
        const auto r = std::from_chars(text.data(), text.data() + text.size(), f->real);
        if (r.ec != std::errc() || r.ptr != text.data() + text.size())
            fail("not a float: \"" + std::string(text.substr(0, 40)) + "\"");
        return f;
    }

    // BINFLOAT's 8 bytes, big-endian.
    Object* binaryFloat(std::string_view s) {
        std::uint64_t bits = 0;
        for (char c : s)
            bits = (bits << 8) | static_cast<unsigned char>(c);
        Object* f = make(Type::Float);
        std::memcpy(&f->real, &bits, 8);
        return f;
    }

    // STRING's argument without the quotes repr() put around it.
    static std::string_view unquoted(std::string_view s) {
        if (s.size() >= 2 && (s.front() == '\'' || s.front() == '"') && s.back() == s.front())
            return s.substr(1, s.size() - 2);
        return s;
    }

    // Lists, tuples, dicts and sets: made, or filled.
    bool containerOp(unsigned char op) {
        switch (op) {
            case ']':
                push(make(Type::List));
                return true;
            case 'l': {
                Object* l = make(Type::List);
                l->items = popMark();
                push(l);
                return true;
            }
            case 'a': {
                Object* v = pop();
                appends({v}, "APPEND");
                return true;
            }
            case 'e':
                appends(popMark(), "APPENDS");
                return true;
            case ')':
                push(emptyTuple());
                return true;
            case 't':
                push(tuple(popMark()));
                return true;
            case 0x85:
            case 0x86:
            case 0x87:
                push(tupleOf(op - 0x84u));
                return true;
            case '}':
                push(dict({}, "DICT"));
                return true;
            case 'd':
                push(dict(popMark(), "DICT"));
                return true;
            case 's': {
                Object* value = pop();
                Object* key = pop();
                setItems({key, value}, "SETITEM");
                return true;
            }
            case 'u':
                setItems(popMark(), "SETITEMS");
                return true;
            case 0x8f:
                push(set("set", {}));
                return true;
            case 0x90: {
                const std::vector<Object*> items = popMark();
                Object* s = top();
                if (s->type != Type::Set || s->className != "set")  // a frozenset has no add()
                    fail("ADDITEMS to a " + typeName(*s));
                needHashable(items, "a set item");
                s->items.insert(s->items.end(), items.begin(), items.end());
                return true;
            }
            case 0x91:
                push(set("frozenset", popMark()));
                return true;
            default:
                return false;
        }
    }

    // APPEND(S) to the list on top of the stack, or to an object never made
    // (a list subclass), which keeps them to show. Python fails on others.
    void appends(const std::vector<Object*>& items, const char* opcode) {
        Object* l = top();
        if (l->type == Type::Instance) {
            if (!l->listItems)
                l->listItems = make(Type::List);
            l = l->listItems;
        } else if (l->type != Type::List) {
            fail(std::string(opcode) + " to a " + typeName(*l));
        }
        l->items.insert(l->items.end(), items.begin(), items.end());
    }

    Object* set(std::string_view className, std::vector<Object*> items) override {
        needHashable(items, "a set item");
        Object* s = make(Type::Set);
        s->className = className;
        s->items = std::move(items);
        return s;
    }

    // A dict of key, value, key, value... (`opcode` names it in errors).
    Object* dict(const std::vector<Object*>& items, const char* opcode) {
        if (items.size() % 2)
            fail(std::string(opcode) + " with an odd number of items");
        Object* d = make(Type::Dict);
        d->className = "dict";
        for (std::size_t i = 0; i < items.size(); i += 2)
            setItem(d, items[i], items[i + 1]);
        return d;
    }

    // SETITEM(S) on the top of the stack: a dict's items, or those of an
    // object never made (a dict subclass), which keeps them to show.
    void setItems(const std::vector<Object*>& items, const char* opcode) {
        if (items.size() % 2)
            fail(std::string(opcode) + " with an odd number of items");
        Object* target = top();
        if (target->type != Type::Dict && target->type != Type::Instance)
            fail(std::string(opcode) + " on a " + typeName(*target));
        for (std::size_t i = 0; i < items.size(); i += 2)
            setItem(target, items[i], items[i + 1]);
    }

    // BUILD, never run. An object never made keeps its first state to
    // show, whatever its __setstate__ takes; tensors, storages and
    // TensorDicts set theirs in torch. Anything else gets Python's default:
    // a state dict (or None) for its __dict__, then a slot-state dict set as
    // attributes, given as a pair. Of the types here only an OrderedDict (a
    // state_dict's _metadata) has a __dict__, and only it and a class take
    // attributes; Python fails on the rest. What they take is not shown.
    void build(Object* target, Object* state) {
        if (target->type == Type::Instance) {
            if (!target->state)
                target->state = state;
            return;
        }
        if (target->type == Type::Tensor || target->type == Type::Storage ||
            target->type == Type::TensorDict)
            return;
        const Object* dictState = state;
        const Object* slotState = nullptr;
        if (state->type == Type::Tuple && state->items.size() == 2) {
            dictState = state->items[0];
            slotState = state->items[1];
        }
        const bool ordered = target->type == Type::Dict && target->className == "OrderedDict";
        if (dictState->type != Type::None) {
            if (dictState->type != Type::Dict)
                fail("BUILD with a state that is a " + typeName(*dictState) + ", not a dict");
            if (!ordered)
                fail("BUILD on a " + typeName(*target) + ", whose __dict__ Python cannot update");
        }
        if (slotState) {
            if (slotState->type != Type::Dict)
                fail("BUILD with a slot state that is a " + typeName(*slotState) + ", not a dict");
            if (!slotState->entries.empty() && !ordered && target->type != Type::Global)
                fail("BUILD that sets attributes of a " + typeName(*target));
        }
    }

    // Globals, calls, instances and persistent ids: named, never run.
    bool objectOp(unsigned char op) {
        switch (op) {
            case 'c': {
                const std::string module(utf8Line());
                const std::string name(utf8Line());
                push(global(module, name));
                return true;
            }
            case 0x93: {
                Object* name = pop();
                Object* module = pop();
                if (module->type != Type::Str || name->type != Type::Str)
                    fail("STACK_GLOBAL of non-strings");
                push(global(module->text, name->text));
                return true;
            }
            case 'R': {
                Object* args = pop();
                Object* callee = pop();
                needCall(*callee, *args, "REDUCE");
                push(rebuildCall(*this, callee, args));
                return true;
            }
            case 0x81:    // NEWOBJ: cls.__new__(cls, *args)
            case 0x92: {  // NEWOBJ_EX, its kwargs dropped
                if (op == 0x92)
                    pop();
                Object* args = pop();
                Object* cls = pop();
                push(newObject(cls, args));
                return true;
            }
            case 'i': {  // INST
                const std::string module(utf8Line());
                const std::string name(utf8Line());
                Object* args = tuple(popMark());
                push(newObject(global(module, name), args));
                return true;
            }
            case 'o': {  // OBJ
                std::vector<Object*> items = popMark();
                if (items.empty())
                    fail("OBJ without a class");
                Object* cls = items.front();
                items.erase(items.begin());
                push(newObject(cls, tuple(std::move(items))));
                return true;
            }
            case 'b': {
                Object* state = pop();
                build(top(), state);
                return true;
            }
            case 'P':
                push(persistent(*makeText(Type::Str, line())));
                return true;
            case 'Q':
                push(persistent(*pop()));
                return true;
            default:
                return false;
        }
    }

    // The memo: PUT and GET with a text, 1-byte or 4-byte index, and MEMOIZE.
    bool memoOp(unsigned char op) {
        switch (op) {
            case 'p':
                memoPut(memoIndex(line()));
                return true;
            case 'q':
                memoPut(little(1));
                return true;
            case 'r':
                memoPut(little(4));
                return true;
            case 0x94:
                memoPut(memoCount_);
                return true;
            case 'g':
                push(memoGet(memoIndex(line())));
                return true;
            case 'h':
                push(memoGet(little(1)));
                return true;
            case 'j':
                push(memoGet(little(4)));
                return true;
            default:
                return false;
        }
    }

    Object* global(const std::string& module, const std::string& name) {
        if (module.size() + name.size() > 1024)
            fail("a global's name is over 1 KiB");
        // Python 3 writes protocols 0-2 with Python 2's module names, and
        // reads them back as its own (pickle's fix_imports).
        if (protocol_ < 3 && module == "__builtin__")
            return makeText(Type::Global, python3Builtin(name));
        if (protocol_ < 3 && module == "copy_reg")
            return makeText(Type::Global, "copyreg." + name);
        return makeText(Type::Global, module + "." + name);
    }

    // A Python 2 builtin by its Python 3 name, as _compat_pickle maps it.
    static std::string python3Builtin(const std::string& name) {
        static constexpr std::pair<std::string_view, std::string_view> kRenamed[] = {
            {"xrange", "builtins.range"},   {"unicode", "builtins.str"},
            {"basestring", "builtins.str"}, {"long", "builtins.int"},
            {"unichr", "builtins.chr"},     {"raw_input", "builtins.input"},
            {"reduce", "functools.reduce"}, {"intern", "sys.intern"},
        };
        for (const auto& [python2, python3] : kRenamed)
            if (name == python2)
                return std::string(python3);
        return "builtins." + name;
    }

    Object* newObject(Object* cls, Object* args) {
        needCall(*cls, *args, "a new object");
        Object* instance = make(Type::Instance);
        instance->text = cls->type == Type::Global ? cls->text : "<computed class>";
        charge(args->items.size());
        instance->items = args->items;
        return instance;
    }

    // Python calls a class or function with a tuple of arguments: a call
    // of anything else, or with anything else, fails there. (An object
    // never made may be callable; nothing else here is.)
    void needCall(const Object& callee, const Object& args, const char* what) const {
        if (callee.type != Type::Global && callee.type != Type::Instance)
            fail(std::string(what) + " that calls a " + typeName(callee));
        if (args.type != Type::Tuple)
            fail(std::string(what) + " whose arguments are a " + typeName(args) + ", not a tuple");
    }

    Object* persistent(const Object& pid) {
        if (!persistentLoad_)
            fail("a persistent id in a pickle that has none");
        return persistentLoad_(pid, [this] { return make(Type::Storage); });
    }

    std::string_view in_;
    std::size_t pos_;
    std::string where_;
    const PersistentLoad& persistentLoad_;
    Pickle out_;
    std::vector<Object*> stack_;
    std::vector<std::size_t> marks_;
    std::vector<Object*> denseMemo_;
    std::unordered_map<std::uint64_t, Object*> sparseMemo_;
    std::size_t memoCount_ = 0;
    int protocol_ = 0;  // PROTO's, if any (protocols 0 and 1 have none)
    std::size_t copied_ = 0;
    static constexpr std::size_t kSharedInts = 1025;  // -1 to 1023
    std::array<Object*, kSharedInts> sharedInts_{};
    Object* emptyTuple_ = nullptr;
};

}  // namespace

Pickle decode(std::string_view bytes, std::size_t* pos, const std::string& where,
              const PersistentLoad& persistentLoad) {
    Decoder decoder(bytes, *pos, where, persistentLoad);
    return decoder.run(pos);
}

std::optional<DType> storageDType(std::string_view name) {
    struct Entry {
        std::string_view name;
        DType dtype;
    };
    static constexpr Entry kTable[] = {
        {"torch.FloatStorage", DType::Float32},
        {"torch.DoubleStorage", DType::Float64},
        {"torch.HalfStorage", DType::Float16},
        {"torch.BFloat16Storage", DType::BFloat16},
        {"torch.LongStorage", DType::Int64},
        {"torch.IntStorage", DType::Int32},
        {"torch.ShortStorage", DType::Int16},
        {"torch.CharStorage", DType::Int8},
        {"torch.ByteStorage", DType::UInt8},
        {"torch.BoolStorage", DType::Bool},
        {"torch.ComplexFloatStorage", DType::Complex64},
        {"torch.ComplexDoubleStorage", DType::Complex128},
        {"torch.UntypedStorage", DType::UInt8},
        {"torch.storage.UntypedStorage", DType::UInt8},  // torch 1.13's name
    };
    for (const Entry& e : kTable)
        if (e.name == name)
            return e.dtype;
    return std::nullopt;
}

std::optional<QuantizedStorage> quantizedStorage(std::string_view name) {
    struct Entry {
        std::string_view name;
        QuantizedStorage storage;
    };
    static constexpr Entry kTable[] = {
        {"torch.QInt8Storage", {DType::Int8, "torch.qint8", 8}},
        {"torch.QUInt8Storage", {DType::UInt8, "torch.quint8", 8}},
        {"torch.QInt32Storage", {DType::Int32, "torch.qint32", 32}},
        {"torch.QUInt4x2Storage", {DType::UInt8, "torch.quint4x2", 4}},
        {"torch.QUInt2x4Storage", {DType::UInt8, "torch.quint2x4", 2}},
    };
    for (const Entry& e : kTable)
        if (e.name == name)
            return e.storage;
    return std::nullopt;
}

std::string typeName(const Object& o) {
    switch (o.type) {
        case Type::None:
            return "None";
        case Type::Bool:
            return "bool";
        case Type::Int:
        case Type::BigInt:
            return "int";
        case Type::Float:
            return "float";
        case Type::Bytes:
            return "bytes";
        case Type::List:
            return "list";
        case Type::Str:
            return o.className.empty() ? "str" : std::string(o.className);
        case Type::Tuple:
            return o.className.empty() ? "tuple" : std::string(o.className);
        case Type::Dict:
            return o.className.empty() ? "dict" : std::string(o.className);
        case Type::Set:
            return o.className.empty() ? "set" : std::string(o.className);
        case Type::Global:
            return "global " + o.text;
        case Type::Instance:
        case Type::TensorDict:
            return o.text;
        case Type::Storage:
            return "storage";
        case Type::Tensor:
            return "tensor";
    }
    return "object";
}

std::optional<std::string> numpyDTypeString(const Object& dtype) {
    if (dtype.type != Type::Instance || dtype.text != "numpy.dtype" || dtype.items.empty() ||
        dtype.items[0]->type != Type::Str || !dtype.state || dtype.state->type != Type::Tuple ||
        dtype.state->items.size() < 5)
        return std::nullopt;
    const auto& s = dtype.state->items;
    if (s[1]->type != Type::Str || s[2]->type != Type::None || s[3]->type != Type::None ||
        s[4]->type != Type::None)
        return std::nullopt;
    // "=" is the writer's native order: little-endian on every machine torch runs on.
    return (s[1]->text == "=" ? std::string("<") : s[1]->text) + dtype.items[0]->text;
}

std::string keyText(const Object& key) {
    switch (key.type) {
        case Type::Str:
            return key.text;
        case Type::Int:
            return std::to_string(key.integer);
        case Type::Bool:
            return key.flag ? "True" : "False";
        case Type::None:
            return "None";
        case Type::Float: {
            char buf[32];
            const auto r = std::to_chars(buf, buf + sizeof buf, key.real);
            return std::string(buf, r.ptr);
        }
        case Type::BigInt:
        case Type::Global:
        case Type::Bytes:
            return key.text;
        case Type::Tuple: {
            // As Python's str() shows a tuple: "(0, 1)", "('a',)".
            std::string out = "(";
            for (std::size_t i = 0; i < key.items.size() && out.size() < 256; ++i) {
                if (i)
                    out += ", ";
                const Object& item = *key.items[i];
                out += item.type == Type::Str     ? "'" + item.text + "'"
                       : item.type == Type::Tuple ? std::string("(...)")
                                                  : keyText(item);
            }
            return out + (key.items.size() == 1 ? ",)" : ")");
        }
        case Type::Tensor: {
            // An optimizer's state is keyed by its parameters, each over a
            // storage of its own (whose key tells apart those of one shape).
            const TensorFields& t = key.tensor();
            std::string text = "<" + std::string(key.className) + " " +
                               std::string(dtypeName(t.dtype)) + " " + formatShape(t.shape);
            if (t.storage)
                text += " of storage " + t.storage->text;
            if (t.offset)
                text += " at " + std::to_string(t.offset);
            return text + ">";
        }
        default:
            return "<object key>";
    }
}

}  // namespace tensordict::python
