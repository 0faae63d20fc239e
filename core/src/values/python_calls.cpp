#include "values/python_calls.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <optional>

#include "tensordict/dtype.h"

namespace tensordict::python {
namespace {

using Type = Object::Type;

// The callables known by name, each rebuilt from its arguments.
class CallRebuilder {
public:
    explicit CallRebuilder(ObjectMaker& maker) : m_(maker) {}

    // What a call of `callee` with `args` is, without calling anything.
    Object* call(Object* callee, Object* args) {
        // A view: a DCP .metadata makes 300,000 calls, and copying each name
        // (longer than a short string holds) took a tenth of decoding it.
        const std::string_view name =
            callee->type == Type::Global ? std::string_view(callee->text) : std::string_view();
        // (storage, offset, size, stride), then requires_grad and the
        // backward hooks, then the dtype (v3), then metadata if any.
        if (name == "torch._utils._rebuild_tensor")
            return tensor(args, name, 4, 4);
        if (name == "torch._utils._rebuild_tensor_v2")
            return tensor(args, name, 6, 7);
        if (name == "torch._utils._rebuild_tensor_v3") {
            // torch 2.1+ for dtypes without a typed storage (float8, uint16-64): an
            // untyped (byte) storage, and the dtype as its seventh argument.
            Object* t = tensor(args, name, 7, 8);
            const Object* dtype = arg(args, 6, name);
            const std::optional<DType> type =
                dtype->type == Type::Global ? dtypeFromString(dtype->text) : std::nullopt;
            if (!type)
                m_.fail(std::string(name) + " with an unknown dtype");
            t->tensor().dtype = *type;
            return t;
        }
        // (data, requires_grad, backward_hooks[, state]).
        if (name == "torch._utils._rebuild_parameter" ||
            name == "torch._utils._rebuild_parameter_with_state") {
            needCount(args, name, 3, name == "torch._utils._rebuild_parameter" ? 3 : 4);
            const Object* data = args->items[0];
            if (data->type != Type::Tensor)
                m_.fail(std::string(name) + "'s first argument is not a tensor");
            needType(args->items[1], Type::Bool, "a parameter's requires_grad is not a bool");
            Object* p = m_.make(Type::Tensor);
            *p = *data;
            p->className = "Parameter";
            p->flag = args->items[1]->flag;
            return p;
        }
        if (name == "numpy.core.multiarray.scalar" ||
            name == "numpy._core.multiarray.scalar")  // NumPy 2
            if (Object* number = numpyScalar(args))
                return number;
        // _rebuild_from_type(func, type, args, dict): torch 1.7 to 1.11's.
        if (name == "torch._tensor._rebuild_from_type_v2" ||
            name == "torch._tensor._rebuild_from_type")
            return subclassTensor(args, name);
        if (name == "collections.OrderedDict")
            return orderedDict(args);
        if (name == "torch.Size") {  // torch.Size() or torch.Size(sizes)
            needCount(args, name, 0, 1);
            std::vector<Object*> sizes;
            if (!args->items.empty()) {
                sizes = args->items[0]->items;
                ints(args->items[0], "torch.Size's sizes");
            }
            Object* t = m_.tuple(std::move(sizes));
            t->className = "torch.Size";
            return t;
        }
        if (name == "torch.device") {
            const Object* type = arg(args, 0, name);
            needType(type, Type::Str, "torch.device of a non-string");
            std::string text = type->text;
            if (args->items.size() > 1 && args->items[1]->type == Type::Int)
                text += ":" + std::to_string(args->items[1]->integer);
            Object* d = m_.makeText(Type::Str, text);
            d->className = "torch.device";
            return d;
        }
        // Protocols 0-2 pickle an empty bytes as bytes(). A bytearray, shown
        // as bytes, is bytearray() when empty, bytearray(text, "latin-1") at
        // protocols 0-2 and bytearray(its bytes) at 3 and 4.
        if (name == "builtins.bytes" && args->items.empty())
            return m_.makeText(Type::Bytes, "");
        if (name == "builtins.bytearray") {
            const auto& a = args->items;
            if (a.empty())
                return m_.makeText(Type::Bytes, "");
            if (a.size() == 1 && a[0]->type == Type::Bytes) {
                m_.charge(a[0]->text.size());
                return m_.makeText(Type::Bytes, a[0]->text);
            }
            if (a.size() == 2 && a[0]->type == Type::Str && a[1]->type == Type::Str &&
                (a[1]->text == "latin-1" || a[1]->text == "latin1"))
                return latin1(*a[0]);
        }
        if (name == "_codecs.encode") {
            const Object* text = arg(args, 0, name);
            needType(text, Type::Str, "_codecs.encode of a non-string");
            return latin1(*text);
        }
        if (name == "builtins.set" || name == "builtins.frozenset") {
            // set() or set(iterable): the items of a list, tuple or set, a dict's keys.
            needCount(args, name, 0, 1);
            std::vector<Object*> items;
            if (!args->items.empty()) {
                const Object* from = args->items[0];
                if (from->type == Type::Dict) {
                    for (const auto& entry : from->entries)
                        items.push_back(entry.first);
                } else if (from->type == Type::List || from->type == Type::Tuple ||
                           from->type == Type::Set) {
                    items = from->items;
                } else {
                    m_.fail(std::string(name) + " of a " + typeName(*from));
                }
                m_.charge(items.size());
            }
            return m_.set(name.substr(name.find('.') + 1), std::move(items));
        }
        if (name == "tensordict._reductions._make_td") {
            const Object* cls = arg(args, 0, name);
            Object* state = arg(args, 1, name);
            needType(state, Type::Dict, "_make_td's state is not a dict");
            Object* td = m_.make(Type::TensorDict);
            td->text = cls->type == Type::Global ? cls->text : "tensordict.TensorDict";
            td->state = state;
            return td;
        }
        if (name == "builtins.getattr")
            return enumMember(args);
        if (name == "torch.serialization._get_layout") {  // how torch.layout pickles: by name
            const Object* layout = arg(args, 0, name);
            needType(layout, Type::Str, "_get_layout of a non-string");
            return m_.makeText(Type::Global, layout->text);
        }
        // copyreg's reconstructor (how pickle saves most objects): the object's class by name.
        Object* instance = m_.make(Type::Instance);
        if (name == "copyreg._reconstructor" && !args->items.empty() &&
            args->items[0]->type == Type::Global) {
            instance->text = args->items[0]->text;
            if (args->items.size() == 3)
                keepBaseValue(instance, args->items[2]);
            return instance;
        }
        instance->text =
            name.empty() ? std::string("<call of a computed object>") : std::string(name);
        m_.charge(args->items.size());
        instance->items = args->items;
        return instance;
    }

private:
    // torch._tensor._rebuild_from_type_v2(func, new_type, args, state): how
    // torch saves a tensor subclass, or (torch 2) a tensor with attributes.
    // torch.load makes func(*args), makes it a new_type and sets its
    // attributes from state. Without attributes it is what func makes, at
    // its own key; with them, an object of new_type whose `data` (as Python
    // names a tensor's values) is that, beside its attributes.
    Object* subclassTensor(const Object* args, std::string_view callee) {
        needCount(args, callee, 4, 4);
        Object* func = args->items[0];
        const Object* type = args->items[1];
        Object* funcArgs = args->items[2];
        Object* state = args->items[3];
        // torch never nests it: refusing that bounds the recursion.
        if (func->type != Type::Global ||
            func->text.compare(0, 32, "torch._tensor._rebuild_from_type") == 0)
            m_.fail(std::string(callee) + "'s function is not one that rebuilds a tensor");
        if (type->type != Type::Global && type->type != Type::Instance)
            m_.fail(std::string(callee) + "'s type is a " + typeName(*type) + ", not a class");
        if (funcArgs->type != Type::Tuple && funcArgs->type != Type::List)
            m_.fail(std::string(callee) + "'s arguments are a " + typeName(*funcArgs));
        Object* made = call(func, funcArgs);
        // What torch could make a subclass of (an object not known here may be one).
        if (made->type != Type::Tensor && made->type != Type::Instance)
            m_.fail(std::string(callee) + "'s function made an object of type " + typeName(*made) +
                    ", not a tensor");
        const bool noAttributes =
            state->type == Type::None || (state->type == Type::Dict && state->entries.empty());
        if (noAttributes)
            return made;
        Object* object = m_.make(Type::Instance);
        object->text = type->type == Type::Global ? type->text : "<computed class>";
        Object* fields = m_.make(Type::Dict);
        fields->entries.emplace_back(m_.makeText(Type::Str, "data"), made);
        // Python's object state: __dict__, or (__dict__, slots) when it has
        // slots. Anything else is kept whole: a subclass's own __setstate__
        // may take it.
        const auto isFields = [](const Object* o) {
            return o->type == Type::Dict || o->type == Type::None;
        };
        std::vector<const Object*> parts;
        if (state->type == Type::Dict)
            parts = {state};
        else if (state->type == Type::Tuple && state->items.size() == 2 &&
                 isFields(state->items[0]) && isFields(state->items[1]))
            parts = {state->items[0], state->items[1]};
        else
            fields->entries.emplace_back(m_.makeText(Type::Str, "state"), state);
        for (const Object* part : parts) {
            m_.charge(part->entries.size());
            fields->entries.insert(fields->entries.end(), part->entries.begin(),
                                   part->entries.end());
        }
        object->state = fields;
        return object;
    }

    // numpy.core.multiarray.scalar(dtype, bytes): a NumPy bool, integer,
    // float32 or float64 scalar (a metric, a label map's key), as its number
    // (a float32 exactly, as a double), its class "numpy.int64" and so on.
    // Null for any other, which stays an object.
    Object* numpyScalar(const Object* args) {
        if (args->items.size() != 2 || args->items[1]->type != Type::Bytes)
            return nullptr;
        const std::optional<std::string> dtype = numpyDTypeString(*args->items[0]);
        if (!dtype || dtype->size() != 3)
            return nullptr;
        struct Kind {
            std::string_view code, className;
            Type type;
            bool isSigned;
        };
        static constexpr Kind kKinds[] = {
            {"b1", "numpy.bool_", Type::Bool, false},   {"i1", "numpy.int8", Type::Int, true},
            {"i2", "numpy.int16", Type::Int, true},     {"i4", "numpy.int32", Type::Int, true},
            {"i8", "numpy.int64", Type::Int, true},     {"u1", "numpy.uint8", Type::Int, false},
            {"u2", "numpy.uint16", Type::Int, false},   {"u4", "numpy.uint32", Type::Int, false},
            {"u8", "numpy.uint64", Type::Int, false},   {"f4", "numpy.float32", Type::Float, true},
            {"f8", "numpy.float64", Type::Float, true},
        };
        const std::string_view code = std::string_view(*dtype).substr(1);
        const auto* kind = std::find_if(std::begin(kKinds), std::end(kKinds),
                                        [&](const Kind& k) { return k.code == code; });
        if (kind == std::end(kKinds))
            return nullptr;
        const std::string& bytes = args->items[1]->text;
        const std::size_t size = std::size_t(kind->code[1] - '0');
        if (bytes.size() != size)
            return nullptr;
        // As an unsigned number of `size` bytes in their byte order.
        const bool big = (*dtype)[0] == '>';
        std::uint64_t bits = 0;
        for (std::size_t i = 0; i < size; ++i)
            bits |= std::uint64_t(static_cast<unsigned char>(bytes[big ? size - 1 - i : i]))
                    << (8 * i);
        Object* number = nullptr;
        if (kind->type == Type::Float && size == 4) {  // exactly, as a double
            float single = 0;
            const auto low = static_cast<std::uint32_t>(bits);
            std::memcpy(&single, &low, sizeof single);
            number = m_.make(Type::Float);
            number->real = single;
        } else if (kind->type == Type::Float) {
            number = m_.make(Type::Float);
            std::memcpy(&number->real, &bits, sizeof bits);
        } else if (kind->type == Type::Bool) {
            number = m_.make(Type::Bool);
            number->flag = bits != 0;
        } else if (kind->isSigned) {
            const unsigned shift = unsigned(64 - 8 * size);  // sign-extended
            number = m_.make(Type::Int);
            number->integer = static_cast<std::int64_t>(bits << shift) >> shift;
        } else if (bits > std::uint64_t(INT64_MAX)) {
            number = m_.makeText(Type::BigInt, std::to_string(bits));
        } else {
            number = m_.make(Type::Int);
            number->integer = static_cast<std::int64_t>(bits);
        }
        number->className = kind->className;
        return number;
    }

    // OrderedDict(), OrderedDict(mapping) or OrderedDict(pairs), as Python
    // makes it (torch pickles its state dicts as the first, then SETITEMS);
    // Python fails on any other arguments.
    Object* orderedDict(const Object* args) {
        Object* d = m_.make(Type::Dict);
        d->className = "OrderedDict";
        needCount(args, "collections.OrderedDict", 0, 1);
        if (args->items.empty())
            return d;
        const Object* from = args->items[0];
        if (from->type == Type::Dict) {
            m_.charge(from->entries.size());
            for (const auto& [key, value] : from->entries)
                m_.setItem(d, key, value);
            return d;
        }
        if (from->type != Type::List && from->type != Type::Tuple)
            m_.fail("collections.OrderedDict of a " + typeName(*from));
        m_.charge(from->items.size());
        for (const Object* pair : from->items) {
            if ((pair->type != Type::Tuple && pair->type != Type::List) || pair->items.size() != 2)
                m_.fail("collections.OrderedDict of an item that is not a (key, value) pair");
            m_.setItem(d, pair->items[0], pair->items[1]);
        }
        return d;
    }

    // copyreg._reconstructor(cls, base, value) makes a subclass of a builtin
    // (protocols 0 and 1) from its base's value: a list subclass keeps its
    // items to show, a dict subclass its entries, any other its value as
    // its one argument.
    void keepBaseValue(Object* instance, Object* value) {
        if (value->type == Type::List) {
            m_.charge(value->items.size());
            instance->listItems = m_.make(Type::List);
            instance->listItems->items = value->items;
        } else if (value->type == Type::Dict) {
            m_.charge(value->entries.size());
            instance->entries = value->entries;
        } else if (value->type != Type::None) {
            instance->items = {value};
        }
    }

    void needType(const Object* o, Type type, const char* what) const {
        if (o->type != type)
            m_.fail(std::string(what));
    }

    // Python's latin-1 `_codecs.encode(text, "latin1")`: code points below 256 as bytes.
    Object* latin1(const Object& text) {
        m_.charge(text.text.size());
        std::string out;
        const std::string& s = text.text;
        for (std::size_t i = 0; i < s.size();) {
            const auto c = static_cast<unsigned char>(s[i]);
            if (c < 0x80) {
                out += static_cast<char>(c), ++i;
            } else if ((c & 0xE0) == 0xC0 && i + 1 < s.size()) {
                const unsigned cp =
                    ((c & 0x1Fu) << 6) | (static_cast<unsigned char>(s[i + 1]) & 0x3Fu);
                if (cp > 0xFF)
                    m_.fail("_codecs.encode of a character beyond latin-1");
                out += static_cast<char>(cp), i += 2;
            } else {
                m_.fail("_codecs.encode of a character beyond latin-1");
            }
        }
        return m_.makeText(Type::Bytes, out);
    }

    std::vector<std::int64_t> ints(const Object* o, const char* what) {
        if (o->type != Type::Tuple && o->type != Type::List)
            m_.fail(std::string(what) + " is not a tuple");
        std::vector<std::int64_t> v;
        for (const Object* e : o->items) {
            if (e->type != Type::Int)
                m_.fail(std::string(what) + " holds a non-integer");
            v.push_back(e->integer);
        }
        return v;
    }

    // Fails unless `callee` has from `least` to `most` arguments.
    void needCount(const Object* args, std::string_view callee, std::size_t least,
                   std::size_t most) {
        const std::size_t n = args->items.size();
        if (n < least || n > most)
            m_.fail(std::string(callee) + " called with " + std::to_string(n) + " arguments");
    }

    Object* arg(const Object* args, std::size_t i, std::string_view callee) {
        if (args->items.size() <= i)
            m_.fail(std::string(callee) + " called with too few arguments");
        return args->items[i];
    }

    // A tensor of `least` to `most` arguments: requires_grad is the fifth, if any.
    Object* tensor(const Object* args, std::string_view callee, std::size_t least,
                   std::size_t most) {
        needCount(args, callee, least, most);
        Object* t = m_.make(Type::Tensor);
        t->className = "Tensor";
        Object* storage = arg(args, 0, callee);
        if (storage->type != Type::Storage)
            m_.fail(std::string(callee) + "'s first argument is not a storage");
        TensorFields& fields = t->tensor();
        fields.storage = storage;
        const Object* offset = arg(args, 1, callee);
        needType(offset, Type::Int, "a tensor's storage offset is not an integer");
        fields.offset = offset->integer;
        fields.shape = ints(arg(args, 2, callee), "a tensor's size");
        fields.stride = ints(arg(args, 3, callee), "a tensor's stride");
        if (args->items.size() > 4) {
            needType(args->items[4], Type::Bool, "a tensor's requires_grad is not a bool");
            t->flag = args->items[4]->flag;
        }
        if (fields.shape.size() != fields.stride.size())
            m_.fail(std::string(callee) + ": size and stride differ in length");
        fields.dtype = storage->tensor().dtype;
        return t;
    }

    // Python 3.11+ pickles an enum member as getattr(<its class>, 'NAME'):
    // for the enum classes torch's files hold, the member by name (a
    // Global "class.NAME"). getattr of anything else is never rebuilt: an
    // Instance of "builtins.getattr" that readers refuse.
    Object* enumMember(Object* args) {
        static constexpr std::string_view kKnownEnums[] = {
            "torch.distributed.checkpoint.metadata._MEM_FORMAT_ENCODING",
            "torch.distributed._shard.sharded_tensor.metadata.MEM_FORMAT_ENCODING",
        };
        if (args->items.size() == 2 && args->items[0]->type == Type::Global &&
            args->items[1]->type == Type::Str &&
            std::find(std::begin(kKnownEnums), std::end(kKnownEnums), args->items[0]->text) !=
                std::end(kKnownEnums))
            return m_.makeText(Type::Global, args->items[0]->text + "." + args->items[1]->text);
        Object* refused = m_.make(Type::Instance);
        refused->text = "builtins.getattr";
        m_.charge(args->items.size());
        refused->items = args->items;
        return refused;
    }

    ObjectMaker& m_;
};

}  // namespace

Object* rebuildCall(ObjectMaker& maker, Object* callee, Object* args) {
    return CallRebuilder(maker).call(callee, args);
}

}  // namespace tensordict::python
