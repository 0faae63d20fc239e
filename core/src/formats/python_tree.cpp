#include "formats/python_tree.h"

#include <unordered_set>

#include "formats/consolidated.h"
#include "tensordict/error.h"
#include "tensordict/keys.h"
#include "tensordict/store.h"
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
            return NodeBuilder::error(
                key, {ErrorKind::Unsupported, where(),
                      "nested more than " + std::to_string(kMaxDepth) + " levels deep"});
        // Shared objects are shown once per place they are used: a pickle
        // that shares a tuple inside itself 60 times over would be 2^60 nodes.
        if (++nodes_ > kMaxNodes)
            return NodeBuilder::error(key, {ErrorKind::Unsupported, where(),
                                            "more than " + std::to_string(kMaxNodes) +
                                                " nodes: the pickle repeats shared objects"});
        if (!onPath_.insert(&o).second)
            return NodeBuilder::error(
                key, {ErrorKind::Unsupported, where(), "refers to itself (a recursive structure)"});
        if (depth > 0)
            path_.push_back(key);
        std::unique_ptr<Node> n;
        try {
            n = make(o, key, depth);
        } catch (const Error& e) {
            n = NodeBuilder::error(key, e.failure());
        }
        if (depth > 0)
            path_.pop_back();
        onPath_.erase(&o);
        return n;
    }

private:
    // How errors name the part: the file and the key path ("x.pt: model/w").
    std::string where() const {
        return (store_ ? store_->container().location() : std::string("the pickle")) + ": " +
               formatKeyPath(path_);
    }

    std::unique_ptr<Node> make(const Object& o, const std::string& key, int depth) {
        switch (o.type) {
            case Type::Dict: {
                auto n = container(key, std::string(o.className));
                // Keys that print alike (1 and "1") are all kept; child() finds the
                // first, and a save refuses to merge them, naming each as Python does.
                for (const auto& [k, v] : o.entries) {
                    auto child = build(*v, python::keyText(*k), depth + 1);
                    if (k->type != Type::Str)
                        NodeBuilder(*child).setKeyRepr(python::keyText(*k));
                    NodeBuilder(*n).append(std::move(child));
                }
                return n;
            }
            case Type::List:
            case Type::Set:
            case Type::Tuple: {
                if (o.className == "torch.Size")
                    return value(key, "torch.Size", sizeValue(o));
                auto n = container(key, o.type == Type::List  ? "list"
                                        : o.type == Type::Set ? "set"
                                                              : "tuple");
                for (std::size_t i = 0; i < o.items.size(); ++i)
                    NodeBuilder(*n).append(build(*o.items[i], std::to_string(i), depth + 1));
                return n;
            }
            case Type::Tensor:
                return tensor(o, key);
            case Type::Storage: {
                // A bare storage: its elements as one 1-D tensor.
                Object view;
                view.type = Type::Tensor;
                view.tensor().storage = &o;
                view.tensor().dtype = o.tensor().dtype;
                view.tensor().shape = {o.tensor().numel};
                view.tensor().stride = {1};
                return tensor(view, key);
            }
            case Type::TensorDict:
                return tensorDict(o, key, depth);
            case Type::Instance: {
                if (o.text == "tensordict._reductions._rebuild_tensordict_files_consolidated")
                    return consolidated(o, key);
                auto n = NodeBuilder::create(NodeKind::Object, key);
                NodeBuilder(*n).setClass(o.text, {});
                NodeBuilder(*n).setStore(store_);
                if (o.state && o.state->type == Type::Dict) {
                    for (const auto& [k, v] : o.state->entries)
                        NodeBuilder(*n).put(build(*v, python::keyText(*k), depth + 1));
                } else if (o.state) {
                    NodeBuilder(*n).put(build(*o.state, "state", depth + 1));
                }
                if (!o.items.empty()) {
                    auto args = container("args", "tuple");
                    for (std::size_t i = 0; i < o.items.size(); ++i)
                        NodeBuilder(*args).append(build(*o.items[i], std::to_string(i), depth + 2));
                    NodeBuilder(*n).put(std::move(args));
                }
                return n;
            }
            case Type::None:
                return value(key, "NoneType", Value());
            case Type::Bool:
                return value(key, "bool", Value(o.flag));
            case Type::Int:
                return value(key, "int", Value(o.integer));
            case Type::BigInt:
                return value(key, "int", Value::integer(o.text));
            case Type::Float:
                return value(key, "float", Value(o.real));
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
        const Object& storage = *t.storage;
        if (storage.flag)  // a storage type no reader here knows (torch_format.cpp)
            throw Error::unsupported(where(), "a tensor over a " + storage.state->text +
                                                  ", which tdstudio does not read (quantized "
                                                  "and other special tensors); the rest of "
                                                  "the file is read");
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
    std::unordered_set<const Object*> onPath_;
    std::vector<std::string> path_;  // keys from the root to the node being built
    std::size_t nodes_ = 0;
};

}  // namespace

std::unique_ptr<Node> buildPythonTree(const python::Object& root,
                                      const std::shared_ptr<const Store>& store,
                                      const StorageLocator& locate) {
    TreeBuilder builder(store, locate);
    return builder.build(root, "", 0);
}

}  // namespace tensordict
