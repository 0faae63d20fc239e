#include "formats/python_tree.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "formats/consolidated.h"
#include "formats/numpy_descr.h"
#include "tensordict/error.h"
#include "tensordict/keys.h"
#include "tensordict/store.h"
#include "tree/leaf_view.h"
#include "tree/node_builder.h"
#include "tree/strides.h"
#include "values/pickle.h"

namespace tensordict {
namespace {

using python::Object;
using python::TensorFields;
using Type = Object::Type;

// Deeper nesting is shown as an error node rather than risking the stack.
constexpr int kMaxDepth = 256;
// Far beyond any checkpoint (a model of 10,000 tensors with its optimizer's
// state is some 50,000 nodes), and about 300 MB of nodes at most.
constexpr std::size_t kMaxNodes = 1u << 20;

std::string lastComponent(const std::string& qualified) {
    const auto dot = qualified.rfind('.');
    return dot == std::string::npos ? qualified : qualified.substr(dot + 1);
}

class TreeBuilder {
public:
    TreeBuilder(const std::shared_ptr<const Store>& store, const StorageLocator& locate)
        : store_(store), locate_(locate) {}

    std::unique_ptr<Node> build(const Object& o, const std::string& key, int depth) {
        if (depth > kMaxDepth)
            return errorFor(
                o, key,
                Error::unsupported(
                    where(), "nested more than " + std::to_string(kMaxDepth) + " levels deep"));
        // Shared objects are shown once per place they are used: a pickle
        // that shares a tuple inside itself 60 times over would be 2^60 nodes.
        if (++nodes_ > kMaxNodes)
            return errorFor(o, key,
                            Error::unsupported(where(), "more than " + std::to_string(kMaxNodes) +
                                                            " nodes: the pickle repeats shared "
                                                            "objects"));
        // A loop back to an object being shown (a scheduler's bound method
        // in its own __dict__, l.append(l)): Python keeps it as a reference,
        // and so is it shown, naming where the object is.
        const auto [entered, added] = onPath_.emplace(&o, path_.size() + (depth > 0 ? 1 : 0));
        if (!added)
            return reference(key, entered->second);
        if (depth > 0)
            path_.push_back(key);
        std::unique_ptr<Node> n;
        try {
            n = make(o, key, depth);
        } catch (const Error& e) {
            n = errorFor(o, key, e);
        }
        if (depth > 0)
            path_.pop_back();
        onPath_.erase(&o);
        return n;
    }

    // One Unplaced node under `root` for the storages that `pickle` loads
    // and no part of the tree uses, if any. A root that takes no children
    // (one tensor) leaves it to the store, beside the tree.
    void addUnplaced(const python::Pickle& pickle, const std::vector<std::string>& storedKeys,
                     Node& root) {
        // torch.load reads each storage once, by key, however often the pickle names it.
        std::vector<std::string> keys;
        std::unordered_set<std::string> unplaced;
        const auto consider = [&](const std::string& key) {
            if (!shown_.count(key) && unplaced.insert(key).second && keys.size() < 5)
                keys.push_back(key);
        };
        for (const Object& o : pickle.objects)
            if (o.type == Type::Storage)
                consider(o.text);
        for (const std::string& key : storedKeys)
            consider(key);
        const std::size_t count = unplaced.size();
        if (!count)
            return;
        std::string named;
        for (const std::string& k : keys)
            named += (named.empty() ? "" : ", ") + k;
        if (count > keys.size())
            named += ", ...";
        const std::string key = "<storages outside every key>";
        const bool one = count == 1;
        const std::string reason =
            (one ? "storage " + named + " is"
                 : std::to_string(count) + " storages (" + named + ") are") +
            " in the file but used by no tensor tdstudio shows: torch.load may keep " +
            (one ? "it" : "them") +
            " where tdstudio does not look (an OrderedDict's attributes, a parameter's "
            "state), or the file is damaged or holds leftovers. " +
            (one ? "Its values are" : "Their values are") + " not read or checked";
        const bool takesChildren = root.kind() == NodeKind::Container ||
                                   root.kind() == NodeKind::Object ||
                                   root.kind() == NodeKind::TensorDict;
        if (takesChildren)
            NodeBuilder(root).append(
                NodeBuilder::error(key, {ErrorKind::Unplaced, location() + ": " + key, reason}));
        else if (store_)
            store_->keepFailureBesideTheTree({ErrorKind::Unplaced, location(), reason});
    }

private:
    static std::string classOr(const Object& o, const char* builtin) {
        return o.className.empty() ? std::string(builtin) : std::string(o.className);
    }

    // A node for a loop back to the object at the first `length` keys of
    // the path being built: a value naming it, as Python's repr shows
    // [...] for a list that holds itself.
    std::unique_ptr<Node> reference(const std::string& key, std::size_t length) {
        const std::vector<std::string> at(path_.begin(), path_.begin() + std::ptrdiff_t(length));
        return value(key, "reference",
                     Value(at.empty() ? std::string("<the root>")
                                      : "<the object at " + formatKeyPath(at) + ">"));
    }

    // The error node for `o` and all below it, which stands for the storages in them.
    std::unique_ptr<Node> errorFor(const Object& o, const std::string& key, const Error& e) {
        cover(o);
        return NodeBuilder::error(key, e.failure());
    }

    // Counts the storages in `o` and all below it as shown: by an error
    // node, or by the text of a dict key (a tensor, a tuple of them).
    void cover(const Object& o) {
        std::vector<const Object*> pending{&o};
        while (!pending.empty()) {
            const Object* p = pending.back();
            pending.pop_back();
            if (!p || !covered_.insert(p).second)
                continue;
            if (p->type == Type::Storage)
                shown_.insert(p->text);
            pending.insert(pending.end(), p->items.begin(), p->items.end());
            for (const auto& [k, v] : p->entries)
                pending.insert(pending.end(), {k, v});
            pending.insert(pending.end(), {p->state, p->listItems, p->tensor().storage});
        }
    }

    // How errors name the part: the file and the key path ("x.pt: model/w").
    std::string where() const { return location() + ": " + formatKeyPath(path_); }
    std::string location() const {
        return store_ ? store_->container().location() : std::string("the pickle");
    }

    std::unique_ptr<Node> make(const Object& o, const std::string& key, int depth) {
        switch (o.type) {
            case Type::Dict: {
                auto n = container(key, std::string(o.className));
                appendEntries(*n, o.entries, depth + 1);
                return n;
            }
            case Type::List:
            case Type::Set:
            case Type::Tuple: {
                if (o.className == "torch.Size")
                    return value(key, "torch.Size", sizeValue(o));
                auto n = container(key, python::typeName(o));
                for (std::size_t i = 0; i < o.items.size(); ++i)
                    NodeBuilder(*n).append(build(*o.items[i], std::to_string(i), depth + 1));
                return n;
            }
            case Type::Tensor:
                return tensor(o, key);
            case Type::Storage:  // a bare storage: its elements as one 1-D tensor
                return tensor(wholeStorage(o), key);
            case Type::TensorDict:
                return tensorDict(o, key, depth);
            case Type::Instance: {
                if (o.text == "tensordict._reductions._rebuild_tensordict_files_consolidated")
                    return consolidated(o, key);
                if (o.text == "torch._utils._rebuild_qtensor")
                    quantizedTensor(o);  // throws: not read here, or what is wrong with it
                // An array of strings, records or objects (or of a subclass)
                // stays an object, named by the class it is made of.
                const bool reconstructed = (o.text == "numpy.core.multiarray._reconstruct" ||
                                            o.text == "numpy._core.multiarray._reconstruct") &&
                                           !o.items.empty() && o.items[0]->type == Type::Global;
                const bool fromBuffer = o.text == "numpy.core.numeric._frombuffer" ||
                                        o.text == "numpy._core.numeric._frombuffer";  // NumPy 2
                if (reconstructed || fromBuffer) {
                    const std::optional<ArrayParts> parts =
                        reconstructed ? reconstructedParts(o) : bufferParts(o);
                    if (parts)
                        if (auto leaf = numpyArray(*parts, key))
                            return leaf;
                }
                if (rebuildsUnknownTensor(o))
                    throw Error::unsupported(
                        where(), "a tensor made by " + o.text +
                                     ", which tdstudio does not know (from a newer torch, or a "
                                     "damaged name); the rest of the file is read");
                // Its state's fields, then what it was made with (the
                // call's arguments) and given (a list or dict subclass's
                // items, as Python's __reduce__ names them). A repeated key
                // is kept (child() finds the first): nothing found is hidden.
                auto n = NodeBuilder::create(NodeKind::Object, key);
                NodeBuilder(*n).setClass(reconstructed ? o.items[0]->text
                                         : fromBuffer  ? std::string("numpy.ndarray")
                                                       : o.text,
                                         {});
                NodeBuilder(*n).setStore(store_);
                if (o.state && o.state->type == Type::Dict)
                    appendEntries(*n, o.state->entries, depth + 1);
                else if (o.state)
                    NodeBuilder(*n).append(build(*o.state, "state", depth + 1));
                if (!o.items.empty()) {
                    auto args = container("args", "tuple");
                    path_.push_back("args");
                    for (std::size_t i = 0; i < o.items.size(); ++i)
                        NodeBuilder(*args).append(build(*o.items[i], std::to_string(i), depth + 2));
                    path_.pop_back();
                    NodeBuilder(*n).append(std::move(args));
                }
                if (o.listItems)
                    NodeBuilder(*n).append(build(*o.listItems, "listitems", depth + 1));
                if (!o.entries.empty()) {
                    auto items = container("dictitems", "dict");
                    path_.push_back("dictitems");
                    appendEntries(*items, o.entries, depth + 2);
                    path_.pop_back();
                    NodeBuilder(*n).append(std::move(items));
                }
                return n;
            }
            case Type::None:
                return value(key, "NoneType", Value());
            // A NumPy scalar (numpy.int64, ...) keeps its class.
            case Type::Bool:
                return value(key, classOr(o, "bool"), Value(o.flag));
            case Type::Int:
                return value(key, classOr(o, "int"), Value(o.integer));
            case Type::BigInt:
                return value(key, classOr(o, "int"), Value::integer(o.text));
            case Type::Float:
                return value(key, classOr(o, "float"), Value(o.real));
            case Type::Str:
                return value(key, o.className.empty() ? "str" : std::string(o.className),
                             Value(o.text));
            case Type::Bytes:
                return value(key, "bytes", Value(Value::Bytes{o.text}));
            case Type::Global: {
                // torch.float32 and friends name a dtype; anything else is a class or function.
                const bool dtype = dtypeFromString(o.text).has_value();
                return value(key, dtype ? "torch.dtype" : "global", Value(o.text));
            }
        }
        return NodeBuilder::error(
            key, {ErrorKind::Unsupported, where(), "an object of an unknown kind"});
    }

    // A dict's entries as children of `n`. Keys that print alike (1 and
    // "1") are all kept; child() finds the first, and a save refuses to
    // merge them, naming each as Python does.
    void appendEntries(Node& n, const std::vector<std::pair<Object*, Object*>>& entries,
                       int depth) {
        for (const auto& [k, v] : entries) {
            auto child = build(*v, python::keyText(*k), depth);
            if (k->type == Type::Tensor || k->type == Type::Tuple)
                cover(*k);
            if (k->type != Type::Str)
                NodeBuilder(*child).setKeyRepr(python::keyText(*k));
            NodeBuilder(n).append(std::move(child));
        }
    }

    std::unique_ptr<Node> container(const std::string& key, const std::string& className) {
        auto n = NodeBuilder::create(NodeKind::Container, key);
        NodeBuilder(*n).setClass(className, {});
        NodeBuilder(*n).setStore(store_);
        return n;
    }

    std::unique_ptr<Node> value(const std::string& key, const std::string& className, Value v) {
        auto n = NodeBuilder::create(NodeKind::NonTensorData, key);
        NodeBuilder(*n).setClass(className, {});
        NodeBuilder(*n).setValue(std::move(v));
        NodeBuilder(*n).setStore(store_);
        return n;
    }

    static Value sizeValue(const Object& o) {
        Value::List dims;
        for (const Object* d : o.items)
            dims.push_back(d->type == Type::Int ? Value(d->integer) : Value());
        return Value(std::move(dims));
    }

    std::unique_ptr<Node> tensor(const Object& o, const std::string& key) {
        const TensorFields& t = o.tensor();
        if (!t.storage)
            throw Error::corrupt(where(), "a tensor without a storage");
        shown_.insert(t.storage->text);
        const Object& storage = *t.storage;
        // A storage type not read here (torch_format.cpp). torch.save writes
        // a quantized storage only under _rebuild_qtensor (quantizedTensor()):
        // one anywhere else is as likely a damaged call as a sound file.
        if (storage.flag)
            throw Error::unsupported(where(), "a tensor over a " + storage.state->text +
                                                  ", which tdstudio does not read; the rest of "
                                                  "the file is read");
        const DTypeCategory category = dtypeInfo(t.dtype).category;
        if (o.flag && category != DTypeCategory::Float && category != DTypeCategory::Complex)
            throw Error::corrupt(where(), "a " + std::string(dtypeName(t.dtype)) +
                                              " tensor that requires grad, which torch.load "
                                              "cannot make: only floating point and complex "
                                              "tensors can");
        return leaf(o, key);
    }

    // A NumPy array as pickle saves it (one in a checkpoint's dict,
    // np.random.get_state()'s), in its parts.
    struct ArrayParts {
        const Object* shape;  // a tuple of sizes
        const Object* dtype;  // a numpy.dtype
        bool fortranOrder;
        const Object* data;  // bytes, or a list for an array of Python objects
    };

    // Protocols 2-4: _reconstruct(ndarray, (0,), b"b"), then BUILD with
    // (version, shape, dtype, fortran order, data), which
    // ndarray.__setstate__ takes or refuses. None: not an ndarray.
    std::optional<ArrayParts> reconstructedParts(const Object& o) const {
        if (!o.state || o.items[0]->text != "numpy.ndarray")
            return std::nullopt;
        std::vector<const Object*> fields(o.state->items.begin(), o.state->items.end());
        if (o.state->type != Type::Tuple || fields.size() < 4 || fields.size() > 5 ||
            (fields.size() == 5 && fields[0]->type != Type::Int))
            throw Error::corrupt(where(),
                                 "a NumPy array's state is not (version, shape, dtype, "
                                 "fortran order, data)");
        if (fields.size() == 5)
            fields.erase(fields.begin());
        const Object& fortran = *fields[2];
        if (fortran.type != Type::Bool && fortran.type != Type::Int)
            throw Error::corrupt(where(), "a NumPy array's fortran order is not a bool");
        const bool fortranOrder = fortran.type == Type::Bool ? fortran.flag : fortran.integer != 0;
        return ArrayParts{fields[0], fields[1], fortranOrder, fields[3]};
    }

    // Protocol 5: _frombuffer(buffer, dtype, shape, order), order "C" or "F".
    std::optional<ArrayParts> bufferParts(const Object& o) const {
        if (o.items.size() != 4 || o.items[3]->type != Type::Str ||
            (o.items[3]->text != "C" && o.items[3]->text != "F"))
            throw Error::corrupt(where(),
                                 "a NumPy array's _frombuffer is not (buffer, dtype, "
                                 "shape, order)");
        return ArrayParts{o.items[2], o.items[1], o.items[3]->text == "F", o.items[0]};
    }

    // An array of a dtype read here as a leaf over a copy of its data
    // (protocol 2 pickles bytes as latin-1 text, not as the array's bytes);
    // null for any other (strings, records, Python objects), which stays
    // an object with its fields.
    std::unique_ptr<Node> numpyArray(const ArrayParts& parts, const std::string& key) {
        const Object &shape = *parts.shape, &dtype = *parts.dtype, &data = *parts.data;
        if (dtype.type != Type::Instance || dtype.text != "numpy.dtype")
            throw Error::corrupt(where(), "a NumPy array's dtype is a " + python::typeName(dtype) +
                                              ", not a numpy.dtype");
        const std::optional<std::string> dtypeString = python::numpyDTypeString(dtype);
        const std::optional<DescrCode> code =
            dtypeString ? parseDescrCode(*dtypeString) : std::nullopt;
        if (!code || !code->dtype || data.type != Type::Bytes)
            return nullptr;
        if (shape.type != Type::Tuple)
            throw Error::corrupt(where(), "a NumPy array's shape is not a tuple");
        auto n = NodeBuilder::create(NodeKind::Tensor, key);
        NodeBuilder b(*n);
        TensorLeaf& leaf = b.leaf();
        leaf.dtype = *code->dtype;
        const std::uint64_t item = itemSize(leaf.dtype);
        // Bounded as NumPy bounds it: the sizes other than 0 too.
        std::uint64_t numel = 1, span = 1;
        for (const Object* d : shape.items) {
            if (d->type != Type::Int || d->integer < 0 ||
                (d->integer &&
                 span > ((std::uint64_t(1) << 62) / item) / std::uint64_t(d->integer)))
                throw Error::corrupt(where(),
                                     "a NumPy array's shape holds a size that is not a "
                                     "count of elements");
            numel *= std::uint64_t(d->integer);
            span *= std::uint64_t(std::max<std::int64_t>(d->integer, 1));
            leaf.shape.push_back(d->integer);
        }
        leaf.numel = static_cast<std::int64_t>(numel);
        leaf.nbytes = numel * item;
        if (data.text.size() != leaf.nbytes)
            throw Error::corrupt(where(), "a NumPy array of shape " + formatShape(leaf.shape) +
                                              " and dtype " + std::string(dtypeName(leaf.dtype)) +
                                              " needs " + std::to_string(leaf.nbytes) +
                                              " bytes of data, and has " +
                                              std::to_string(data.text.size()));
        leaf.storage.kind = leaf.nbytes ? StorageKind::Memory : StorageKind::None;
        leaf.storage.size = leaf.nbytes;
        const bool fortranOrder = parts.fortranOrder && leaf.shape.size() > 1;
        if (leaf.nbytes && !fortranOrder && !code->bigEndian) {
            b.adoptBytes(ownedBytes(std::string(data.text)));
        } else if (leaf.nbytes) {
            TensorLeaf stored = leaf;
            stored.storage.bigEndian = code->bigEndian;
            b.adoptBytes(gatheredBytes(reinterpret_cast<const std::byte*>(data.text.data()), stored,
                                       fortranOrder ? fStrides(leaf.shape) : cStrides(leaf.shape)));
        }
        // No store: its bytes are the node's own, read from no container.
        return n;
    }

    // A call given a storage that tdstudio does not rebuild, of torch's
    // (which takes storages only in the rebuilds python_calls.cpp makes
    // Tensors of) or of any _rebuild_* function: a tensor whose shape is
    // unknown here, from a newer torch or a damaged name.
    static bool rebuildsUnknownTensor(const Object& call) {
        const std::string_view name(call.text);
        const std::size_t dot = name.rfind('.');
        const bool torchOrRebuild =
            name.compare(0, 6, "torch.") == 0 ||
            name.compare(dot == std::string_view::npos ? 0 : dot + 1, 9, "_rebuild_") == 0;
        return torchOrRebuild &&
               std::any_of(call.items.begin(), call.items.end(),
                           [](const Object* arg) { return arg->type == Type::Storage; });
    }

    // A 1-D tensor of all of `storage`'s elements.
    static Object wholeStorage(const Object& storage) {
        Object view;
        view.type = Type::Tensor;
        view.tensor().storage = &storage;
        view.tensor().dtype = storage.tensor().dtype;
        view.tensor().shape = {storage.tensor().numel};
        view.tensor().stride = {1};
        return view;
    }

    // The leaf of a tensor over a storage of `o.tensor().dtype` elements,
    // once every element it reaches is known to lie in the file.
    std::unique_ptr<Node> leaf(const Object& o, const std::string& key) {
        const TensorFields& t = o.tensor();
        const Object& storage = *t.storage;
        // The tensor's elements are of its dtype; the storage's of its own
        // (the same, but for torch 2's untyped byte storages).
        const std::size_t item = itemSize(t.dtype);
        std::uint64_t storageBytes = 0;
        const TensorFields& stored = storage.tensor();
        if (stored.numel < 0 || __builtin_mul_overflow(std::uint64_t(stored.numel),
                                                       itemSize(stored.dtype), &storageBytes))
            throw Error::corrupt(where(), "the tensor's storage has an impossible size");
        auto n = NodeBuilder::create(NodeKind::Tensor, key);
        NodeBuilder b(*n);
        TensorLeaf& leaf = b.leaf();
        leaf.dtype = t.dtype;
        leaf.shape = t.shape;
        // Every element the view reaches must lie inside its storage.
        const std::optional<ViewReach> reach = viewReach(t.shape, t.stride);
        if (!reach || reach->numel > (std::uint64_t(1) << 62) / item)
            throw Error::corrupt(where(), "the tensor's sizes or strides are negative or overflow");
        const std::uint64_t numel = reach->numel, last = reach->last;
        if (t.offset < 0)
            throw Error::corrupt(where(), "negative storage offset");
        leaf.numel = static_cast<std::int64_t>(numel);
        leaf.nbytes = numel * item;
        std::uint64_t end = 0;  // bytes into the storage past the last element
        if (numel && (__builtin_add_overflow(std::uint64_t(t.offset), last, &end) ||
                      __builtin_mul_overflow(end + 1, item, &end) || end > storageBytes))
            throw Error::corrupt(where(), "the view reaches past its storage of " +
                                              std::to_string(storageBytes) + " bytes");
        // A view may repeat its storage's elements (stride 0, an expand), but
        // not into more memory than any real tensor would take.
        if (leaf.nbytes > storageBytes && leaf.nbytes > (std::uint64_t(1) << 32))
            throw Error::corrupt(where(), "the view repeats its storage's " +
                                              std::to_string(storageBytes) + " bytes into " +
                                              std::to_string(leaf.nbytes) + ": not expanded");
        if (numel) {
            // The locator gives the file or entry, and where the storage starts in it.
            leaf.storage = locate_(storage);
            const std::uint64_t start = leaf.storage.offset;
            if (start > leaf.storage.size || leaf.storage.size - start < storageBytes)
                throw Error::truncated(
                    store_ ? store_->container().describe(leaf.storage.path) : leaf.storage.path,
                    "the storage of " + where() + " needs " + std::to_string(storageBytes) +
                        " bytes from byte " + std::to_string(start) + ", past the end at " +
                        std::to_string(leaf.storage.size) + " (truncated file?)");
            leaf.storage.offset += std::uint64_t(t.offset) * item;
            if (!isCOrder(t.shape, t.stride))
                leaf.storage.strides = t.stride;
        }
        b.setStore(store_);
        return n;
    }

    // torch._utils._rebuild_qtensor(storage, storage_offset, size, stride,
    // quantizer_params, requires_grad, backward_hooks): a quantized tensor
    // as torch.save writes it. It is not decoded here, but all it names is
    // checked first, so that only a sound one is said to be not read: its
    // elements lie in its storage and the storage in the file, and its
    // quantizer is one torch.load rebuilds. Always throws.
    [[noreturn]] void quantizedTensor(const Object& call) {
        const auto& args = call.items;
        const auto integers = [](const Object* o, std::vector<std::int64_t>* out) {
            if (o->type != Type::Tuple && o->type != Type::List)
                return false;
            for (const Object* d : o->items) {
                if (d->type != Type::Int)
                    return false;
                out->push_back(d->integer);
            }
            return true;
        };
        Object view;
        view.type = Type::Tensor;
        TensorFields& t = view.tensor();
        // requires_grad is always False: torch.load fails on a quantized
        // tensor that requires grad.
        if (args.size() != 7 || args[0]->type != Type::Storage || args[1]->type != Type::Int ||
            !integers(args[2], &t.shape) || !integers(args[3], &t.stride) ||
            args[4]->type != Type::Tuple || args[4]->items.empty() ||
            args[4]->items[0]->type != Type::Global || args[5]->type != Type::Bool || args[5]->flag)
            throw Error::corrupt(where(),
                                 "a quantized tensor's rebuild is not (storage, offset, size, "
                                 "stride, quantizer parameters, False, hooks)");
        const Object& storage = *args[0];
        if (!storage.flag)
            throw Error::corrupt(where(), "a quantized tensor over a storage of " +
                                              std::string(dtypeName(storage.tensor().dtype)) +
                                              " values, which are not quantized");
        const auto quantized = python::quantizedStorage(storage.state->text);
        if (!quantized)
            throw Error::unsupported(where(), "a quantized tensor over a " + storage.state->text +
                                                  ", a storage type tdstudio does not know");
        t.storage = &storage;
        t.dtype = quantized->held;
        t.offset = args[1]->integer;
        if (t.shape.size() != t.stride.size())
            throw Error::corrupt(where(), "a quantized tensor with " +
                                              std::to_string(t.shape.size()) + " sizes and " +
                                              std::to_string(t.stride.size()) + " strides");
        if (quantized->bitsPerValue >= 8) {
            leaf(view, "");
        } else {
            // Values packed several to a byte: each row (the last dimension)
            // starts at a byte, as torch allocates them. torch saves no view
            // of them (it cannot load one back): the whole storage, in order.
            // Sizes first: isCOrder multiplies them.
            std::uint64_t span = 1;
            for (const std::int64_t d : t.shape)
                if (d < 0 ||
                    __builtin_mul_overflow(span, std::uint64_t(std::max<std::int64_t>(d, 1)),
                                           &span) ||
                    span > (std::uint64_t(1) << 56))
                    throw Error::corrupt(where(), "the tensor's sizes are negative or overflow");
            if (t.offset != 0 || !isCOrder(t.shape, t.stride))
                throw Error::corrupt(
                    where(), "a view of packed " + std::string(quantized->torchDType) +
                                 " values (offset " + std::to_string(t.offset) + ", strides " +
                                 formatShape(t.stride) + "), which torch cannot save");
            std::uint64_t rows = 1;
            for (std::size_t i = 0; i + 1 < t.shape.size(); ++i)
                if (t.shape[i] < 0 ||
                    __builtin_mul_overflow(rows, std::uint64_t(t.shape[i]), &rows))
                    throw Error::corrupt(where(), "the tensor's sizes are negative or overflow");
            const std::int64_t columns = t.shape.empty() ? 1 : t.shape.back();
            if (columns < 0 || std::uint64_t(columns) > (std::uint64_t(1) << 56))
                throw Error::corrupt(where(), "the tensor's sizes are negative or overflow");
            const std::uint64_t rowBytes =
                (std::uint64_t(columns) * std::uint64_t(quantized->bitsPerValue) + 7) / 8;
            std::uint64_t bytes = 0;
            if (__builtin_mul_overflow(rows, rowBytes, &bytes) ||
                bytes > std::uint64_t(storage.tensor().numel))
                throw Error::corrupt(where(), "the tensor's " + formatShape(t.shape) + " " +
                                                  std::string(quantized->torchDType) +
                                                  " values take more than its storage's " +
                                                  std::to_string(storage.tensor().numel) +
                                                  " bytes");
            leaf(wholeStorage(storage), "");  // every byte of it must be in the file
        }
        const std::string quantizer = quantizerText(*args[4], t.shape);
        throw Error::notReadHere(where(), "a quantized tensor (" +
                                              std::string(quantized->torchDType) + ", shape " +
                                              formatShape(t.shape) + ", " + quantizer +
                                              "), which torch.load reads and tdstudio does "
                                              "not decode");
    }

    // A quantized tensor's quantizer_params as torch.load's _rebuild_qtensor
    // takes them: (torch.per_tensor_affine, scale, zero_point), or a
    // per-channel scheme with (scales, zero_points, axis), the scales and
    // zero points tensors (or lists) of one per channel along `axis`.
    std::string quantizerText(const Object& params, const std::vector<std::int64_t>& shape) {
        const std::string& scheme = params.items[0]->text;
        const auto& p = params.items;
        if (scheme == "torch.per_tensor_affine") {
            if (p.size() != 3 || (p[1]->type != Type::Float && p[1]->type != Type::Int) ||
                p[2]->type != Type::Int)
                throw Error::corrupt(where(),
                                     "a quantized tensor's per-tensor parameters are "
                                     "not (scheme, scale, zero point)");
            return "per-tensor affine: scale " + python::keyText(*p[1]) + ", zero point " +
                   python::keyText(*p[2]);
        }
        if (scheme == "torch.per_channel_affine" ||
            scheme == "torch.per_channel_affine_float_qparams") {
            if (p.size() != 4 || p[3]->type != Type::Int)
                throw Error::corrupt(where(),
                                     "a quantized tensor's per-channel parameters are "
                                     "not (scheme, scales, zero points, axis)");
            const std::int64_t axis = p[3]->integer;
            if (axis < 0 || std::uint64_t(axis) >= shape.size())
                throw Error::corrupt(
                    where(), "a quantized tensor of " + std::to_string(shape.size()) +
                                 " dimensions quantized along dimension " + std::to_string(axis));
            // torch.load takes two lists of numbers, or two tensors: here a
            // contiguous 1-D one of floats for the scales, and of integers
            // or floats for the zero points (torch pickles the float-qparams
            // scheme as per_channel_affine: its float zero points tell it).
            const bool lists = p[1]->type == Type::List && p[2]->type == Type::List;
            bool floatZeroPoints = false;
            const auto count = [&](const Object& o, const char* name, bool scales) {
                if (lists) {
                    for (const Object* v : o.items)
                        if (v->type != Type::Int && v->type != Type::Float)
                            throw Error::corrupt(where(), std::string("a quantized tensor's ") +
                                                              name + " hold a non-number");
                    return std::int64_t(o.items.size());
                }
                if (o.type != Type::Tensor || !o.tensor().storage || o.tensor().storage->flag)
                    throw Error::corrupt(where(), std::string("a quantized tensor's ") + name +
                                                      " are not two lists or two tensors");
                const std::unique_ptr<Node> values = tensor(o, name);  // checked as any tensor
                const TensorLeaf& leaf = values->leaf();
                const DTypeCategory category = dtypeInfo(leaf.dtype).category;
                if (!scales)
                    floatZeroPoints = category == DTypeCategory::Float;
                if (leaf.shape.size() != 1 || !leaf.storage.strides.empty() ||
                    (category != DTypeCategory::Float &&
                     (scales || category != DTypeCategory::Signed)))
                    throw Error::corrupt(where(),
                                         std::string("a quantized tensor's ") + name + " are a " +
                                             std::string(dtypeName(leaf.dtype)) + " " +
                                             formatShape(leaf.shape) + " view, not a row of " +
                                             (scales ? "floats" : "numbers"));
                return leaf.numel;
            };
            const std::int64_t scales = count(*p[1], "scales", true);
            const std::int64_t zeroPoints = count(*p[2], "zero points", floatZeroPoints);
            if (scales != shape[axis] || zeroPoints != shape[axis])
                throw Error::corrupt(
                    where(), "a quantized tensor with " + std::to_string(shape[axis]) +
                                 " channels along dimension " + std::to_string(axis) + " has " +
                                 std::to_string(scales) + " scales and " +
                                 std::to_string(zeroPoints) + " zero points");
            return "per-channel affine along dimension " + std::to_string(axis) +
                   (floatZeroPoints ? ", float zero points" : "");
        }
        throw Error::unsupported(where(), "a quantized tensor of scheme " + scheme +
                                              ", which torch.load does not rebuild");
    }

    // torch.save of a consolidated TensorDict: its metadata and the one
    // uint8 storage that holds every leaf (consolidated.h).
    std::unique_ptr<Node> consolidated(const Object& call, const std::string& key) {
        if (call.items.size() != 2 || call.items[1]->type != Type::Tensor)
            throw Error::corrupt(where(),
                                 "a consolidated TensorDict's rebuild is not "
                                 "(metadata, storage)");
        const std::optional<Value> metadata = plainValue(*call.items[0]);
        if (!metadata)
            throw Error::corrupt(where(), "a consolidated TensorDict's metadata is not plain data");
        const std::unique_ptr<Node> storage = tensor(*call.items[1], key);
        const TensorLeaf& bytes = storage->leaf();
        if (bytes.dtype != DType::UInt8 || bytes.shape.size() != 1 ||
            !bytes.storage.strides.empty())
            throw Error::corrupt(where(),
                                 "a consolidated TensorDict's storage is not a 1-D "
                                 "uint8 tensor");
        return buildConsolidatedTree(*metadata, key, bytes.storage, bytes.nbytes, store_, where());
    }

    std::unique_ptr<Node> tensorDict(const Object& o, const std::string& key, int depth) {
        auto n = NodeBuilder::create(NodeKind::TensorDict, key);
        NodeBuilder b(*n);
        b.setClass(lastComponent(o.text), {});
        b.setStore(store_);
        for (const auto& [k, v] : o.state->entries) {
            const std::string name = python::keyText(*k);
            if (name == "_batch_size" && (v->type == Type::Tuple || v->type == Type::List)) {
                std::vector<std::int64_t> batch;
                for (const Object* d : v->items)
                    batch.push_back(d->type == Type::Int ? d->integer : 0);
                b.setBatchSize(std::move(batch));
            } else if (name == "_device") {
                if (v->type == Type::Str)
                    b.setDevice(v->text);
            } else if ((name == "_tensordict" || name == "_non_tensordict") &&
                       v->type == Type::Dict) {
                for (const auto& [ck, cv] : v->entries)
                    b.put(build(*cv, python::keyText(*ck), depth + 1));
            }
        }
        return n;
    }

    const std::shared_ptr<const Store>& store_;
    const StorageLocator& locate_;
    // The keys of the storages a tensor of the tree uses, or a node stands for.
    std::unordered_set<std::string> shown_;
    std::unordered_set<const Object*> covered_;  // objects an error node or a key stands for
    // The objects being shown, each with the length of its key path.
    std::unordered_map<const Object*, std::size_t> onPath_;
    std::vector<std::string> path_;  // keys from the root to the node being built
    std::size_t nodes_ = 0;
};

}  // namespace

std::unique_ptr<Node> buildPythonTree(const python::Pickle& pickle,
                                      const std::shared_ptr<const Store>& store,
                                      const StorageLocator& locate,
                                      const std::vector<std::string>& storedKeys) {
    TreeBuilder builder(store, locate);
    std::unique_ptr<Node> root = builder.build(*pickle.root, "", 0);
    builder.addUnplaced(pickle, storedKeys, *root);
    return root;
}

}  // namespace tensordict
