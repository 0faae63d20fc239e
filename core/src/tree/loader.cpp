// Builds the node tree of a saved tensordict from its meta.json files
// (core/FORMAT.md sections 2-7), reading metadata only.

#include <algorithm>
#include <cstring>
#include <limits>
#include <unordered_map>

#include "tensordict/error.h"
#include "tensordict/keys.h"
#include "tensordict/store.h"
#include "tensordict/tensordict.h"
#include "tree/loader.h"
#include "tree/node_builder.h"
#include "values/pickle.h"

namespace tensordict {
namespace {

// "<class 'tensordict._td.TensorDict'>" -> "tensordict._td.TensorDict"
std::string classPath(const std::string& typeString) {
    const std::string prefix = "<class '";
    const std::string suffix = "'>";
    if (typeString.size() > prefix.size() + suffix.size() &&
        typeString.compare(0, prefix.size(), prefix) == 0 &&
        typeString.compare(typeString.size() - suffix.size(), suffix.size(), suffix) == 0)
        return typeString.substr(prefix.size(), typeString.size() - prefix.size() - suffix.size());
    return typeString;
}

// The library's own classes are named by their class name; user classes
// (tensorclasses) keep their module path, as the fixtures' expectations do.
std::string displayClassName(const std::string& path) {
    if (path.rfind("tensordict.", 0) == 0)
        return path.substr(path.rfind('.') + 1);
    return path;
}

bool isViewClass(const std::string& name) {
    return name == "_SubTensorDict" || name == "_PermutedTensorDict" ||
           name == "_ViewedTensorDict" || name == "_SqueezedTensorDict" ||
           name == "_UnsqueezedTensorDict" || name == "_TransposedTensorDict";
}

bool isTensorDictClass(const std::string& path) {
    const std::string name = displayClassName(path);
    return path == "tensordict._td.TensorDict" || name == "TensorDict" ||
           name == "TensorDictParams" || name == "PersistentTensorDict";
}

// Where a problem is, for messages: a name, or a function that builds one
// (a leaf's name is built only when a problem is found: most leaves have none).
const std::string& whereText(const std::string& where) {
    return where;
}
template <class Name>
std::string whereText(const Name& where) {
    return where();
}

template <class Where>
std::vector<std::int64_t> intList(const Value& v, const Where& where, const char* what) {
    if (!v.isList())
        throw Error::corrupt(whereText(where), std::string(what) + " is not a list of integers");
    std::vector<std::int64_t> out;
    out.reserve(v.asList().size());
    for (const Value& d : v.asList()) {
        if (!d.isInt() || d.asInt() < 0)
            throw Error::corrupt(
                whereText(where),
                std::string(what) + " holds a value that is not a non-negative integer");
        out.push_back(d.asInt());
    }
    return out;
}

template <class Where>
std::int64_t checkedNumel(const std::vector<std::int64_t>& shape, const Where& where) {
    std::int64_t n = 1;
    for (std::int64_t d : shape) {
        if (d != 0 && n > std::numeric_limits<std::int64_t>::max() / d)
            throw Error::corrupt(whereText(where), "shape has more elements than fit in 64 bits");
        n *= d;
    }
    return n;
}

// Batch dimensions of a NonTensorStack's nested-list data.
std::vector<std::int64_t> stackDims(const Value& data) {
    std::vector<std::int64_t> dims;
    const Value* cur = &data;
    while (cur->isList()) {
        const auto& list = cur->asList();
        dims.push_back(static_cast<std::int64_t>(list.size()));
        if (list.empty())
            break;
        const bool uniform = std::all_of(list.begin(), list.end(), [&](const Value& e) {
            return e.isList() && e.asList().size() == list.front().asList().size();
        });
        if (!uniform || !list.front().isList())
            break;
        cur = &list.front();
    }
    return dims;
}

// Deeper trees are refused rather than risking the stack of a worker thread.
constexpr int kMaxDepth = 256;

class Loader {
public:
    Loader(std::shared_ptr<const Store> store, const LoadOptions& options,
           const FileObserver& onFile)
        : store_(std::move(store)),
          files_(store_->container()),
          options_(options),
          onFile_(onFile) {}

    std::unique_ptr<Node> loadRoot() {
        std::string dir;
        std::string key;
        for (const std::string& k : options_.subpath) {
            dir = childDirectory(dir, k);
            key = k;
        }
        // The root must load: there is no tree to mark an error in.
        return loadNodeOrThrow(dir, key, 0, {});
    }

private:
    Value readMeta(const std::string& dir) {
        const std::string rel = joinPath(dir, "meta.json");
        if (!stat(rel))
            throw Error::notFound(files_.describe(rel), "missing meta.json");
        const std::string text = read(rel, options_.maxMetadataBytes);
        Value meta = parseJson(text, files_.describe(rel));
        if (!meta.isObject())
            throw Error::corrupt(files_.describe(rel), "meta.json is not a JSON object");
        return meta;
    }

    bool hasNode(const std::string& dir) { return stat(joinPath(dir, "meta.json")).has_value(); }

    // Directory of the sub-node `key` under `dir`: robust name, or the legacy raw name.
    std::string findChildDirectory(const std::string& dir, const std::string& key) {
        const std::string robust = joinPath(dir, options_.robustKey ? encodeKey(key) : key);
        if (hasNode(robust))
            return robust;
        if (options_.robustKey && isSafeLegacyKey(key, true)) {
            const std::string legacy = joinPath(dir, key);
            if (hasNode(legacy))
                return legacy;
        }
        if (!options_.robustKey && !isSafeLegacyKey(key, true))
            throw Error::corrupt(files_.describe(dir),
                                 "key \"" + key + "\" is not a safe legacy file name");
        return robust;
    }

    // For subpath: the node directory of child `key`, looking through tensorclasses.
    std::string childDirectory(const std::string& dir, const std::string& key) {
        std::string base = dir;
        Value meta = readMeta(base);
        const Value* type = meta.find("_type");
        if (type && type->isString()) {
            const std::string path = classPath(type->asString());
            if (!isTensorDictClass(path) && !isViewClass(displayClassName(path)) &&
                displayClassName(path) != "LazyStackedTensorDict" &&
                hasNode(joinPath(base, "_tensordict")))
                base = joinPath(base, "_tensordict");
        }
        const std::string child = findChildDirectory(base, key);
        if (!hasNode(child))
            throw Error::notFound(files_.describe(dir), "subpath key \"" + key + "\" not found");
        return child;
    }

    // Called in a catch block of an Error: rethrows it as it is when the
    // first problem must throw, otherwise makes an error node of it. A
    // cancel is never caught here: it ends the load.
    std::unique_ptr<Node> errorNode(const std::string& key, const std::string& dir,
                                    const Error& e) {
        if (options_.throwOnError)
            throw;
        auto node = NodeBuilder::error(key, e.failure());
        NodeBuilder(*node).setDirectory(dir);
        return node;
    }

    std::unique_ptr<Node> loadNode(const std::string& dir, const std::string& key, int depth,
                                   const std::vector<std::int64_t>& parentBatch) {
        try {
            return loadNodeOrThrow(dir, key, depth, parentBatch);
        } catch (const Error& e) {
            return errorNode(key, dir, e);
        }
    }

    std::unique_ptr<Node> loadNodeOrThrow(const std::string& dir, const std::string& key, int depth,
                                          const std::vector<std::int64_t>& parentBatch) {
        if (depth > kMaxDepth)
            throw Error::corrupt(files_.describe(dir),
                                 "nested deeper than " + std::to_string(kMaxDepth) + " levels");
        Value meta = readMeta(dir);
        auto node = NodeBuilder::create(NodeKind::TensorDict, key);
        NodeBuilder b(*node);
        b.setDirectory(dir);
        b.setStore(store_);  // pickle sidecars are copied from it when re-saving
        const Value* type = meta.find("_type");
        std::string typeString =
            type && type->isString() ? type->asString() : "<class 'tensordict._td.TensorDict'>";
        const std::string path = classPath(typeString);
        const std::string name = displayClassName(path);
        b.setClass(name, std::move(typeString));

        if (isTensorDictClass(path)) {
            loadTensorDict(b, meta, dir, depth);
        } else if (name == "LazyStackedTensorDict") {
            loadLazyStack(b, meta, dir, depth);
        } else if (name == "NonTensorData" || name == "MetaData") {
            loadNonTensorData(b, meta, dir, parentBatch);
        } else if (name == "NonTensorStack") {
            if (meta.find("data"))
                loadNonTensorStack(b, meta, dir);
            else  // a stack saved without "data" (core/FORMAT.md 2.5)
                loadLazyStack(b, meta, dir, depth);
        } else if (isViewClass(name)) {
            loadView(b, meta, dir, depth, parentBatch);
        } else {
            loadTensorClass(b, meta, dir, depth);
        }
        return node;
    }

    void readNodeKeys(NodeBuilder& b, const Value& meta, const std::string& where) {
        if (const Value* shape = meta.find("shape"); shape && shape->isList())
            b.setBatchSize(intList(*shape, where, "\"shape\" (batch size)"));
        if (const Value* device = meta.find("device");
            device && device->isString() && device->asString() != "None")
            b.setDevice(device->asString());
    }

    void loadTensorDict(NodeBuilder& b, const Value& meta, const std::string& dir, int depth) {
        b.setKind(NodeKind::TensorDict);
        const std::string where = files_.describe(joinPath(dir, "meta.json"));
        readNodeKeys(b, meta, where);
        // Python's dict keeps the first position of a duplicated key and its last value.
        // (Keys are views into `meta`, which outlives the loop.)
        std::vector<std::pair<const std::string*, const Value*>> entries;
        std::unordered_map<std::string_view, std::size_t> position;
        position.reserve(meta.asObject().size());
        for (const auto& [k, v] : meta.asObject()) {
            auto [it, fresh] = position.emplace(k, entries.size());
            if (fresh)
                entries.emplace_back(&k, &v);
            else
                entries[it->second].second = &v;
        }
        std::vector<std::pair<std::string, const Value*>> subNodes;
        for (const auto& [key, v] : entries) {
            const std::string& k = *key;
            if (!v->isObject())
                continue;  // node keys: shape, device, _type (and entries they overwrote)
            if (v->find("type")) {
                subNodes.emplace_back(k, v);
                continue;
            }
            if (!v->find("dtype") || !v->find("shape"))
                continue;  // Python skips these silently
            try {
                b.append(loadLeaf(k, *v, dir, where));
            } catch (const Error& e) {
                b.append(errorNode(k, dir, e));
            }
        }
        // Leaves first, then sub-nodes, as Python's loader orders them.
        for (const auto& [k, v] : subNodes) {
            std::string childDir;
            try {
                childDir = findChildDirectory(dir, k);
            } catch (const Error& e) {
                b.append(errorNode(k, dir, e));
                continue;
            }
            b.append(loadNode(childDir, k, depth + 1, b.node().batchSize()));
        }
    }

    std::unique_ptr<Node> loadLeaf(const std::string& key, const Value& entry,
                                   const std::string& dir, const std::string& metaWhere) {
        const auto where = [&] { return metaWhere + ": key \"" + key + "\""; };
        auto node = NodeBuilder::create(NodeKind::Tensor, key);
        NodeBuilder b(*node);
        b.setStore(store_);
        TensorLeaf& leaf = b.leaf();
        const Value& dtype = *entry.find("dtype");
        if (!dtype.isString())
            throw Error::corrupt(where(), "\"dtype\" is not a string");
        const auto dt = dtypeFromString(dtype.asString());
        if (!dt)
            throw Error::unsupported(where(), "unknown dtype \"" + dtype.asString() + "\"");
        leaf.dtype = *dt;
        leaf.shape = intList(*entry.find("shape"), where, "\"shape\"");
        if (const Value* device = entry.find("device"); device && device->isString())
            b.setDevice(device->asString());
        if (const Value* nested = entry.find("is_nested"); nested && nested->isBool())
            leaf.isNested = nested->asBool();
        const std::size_t item = itemSize(*dt);
        const auto describeLeaf = [&] {
            return std::string(dtypeName(leaf.dtype)) + " " + formatShape(leaf.shape);
        };

        const std::string fileName = options_.robustKey ? encodeKey(key) : key;
        if (!options_.robustKey && !isSafeLegacyKey(key, false))
            throw Error::corrupt(where(), "key is not a safe legacy file name");
        std::optional<StorageInfo> file = stat(joinPath(dir, fileName + ".memmap"));
        std::string stem = fileName;
        if (!file && options_.robustKey && fileName != key && isSafeLegacyKey(key, false)) {
            file = stat(joinPath(dir, key + ".memmap"));
            stem = key;
        }

        if (leaf.isNested) {
            loadNestedShapes(leaf, joinPath(dir, stem + ".shape.memmap"), where());
        } else {
            leaf.numel = checkedNumel(leaf.shape, where);
        }
        if (static_cast<std::uint64_t>(leaf.numel) >
            std::numeric_limits<std::uint64_t>::max() / item)
            throw Error::corrupt(where(), "tensor too large");
        leaf.nbytes = static_cast<std::uint64_t>(leaf.numel) * item;

        if (!file) {
            if (leaf.numel == 0)
                return node;  // zero-element leaves have no data file
            throw Error::notFound(
                files_.describe(joinPath(dir, fileName + ".memmap")),
                "missing data file for key \"" + key + "\" (" + describeLeaf() + ")");
        }
        leaf.storage = std::move(*file);
        if (leaf.storage.size < leaf.nbytes)
            throw Error::truncated(files_.describe(leaf.storage.path),
                                   "file is " + std::to_string(leaf.storage.size) +
                                       " bytes but key \"" + key + "\" (" + describeLeaf() +
                                       ") needs " + std::to_string(leaf.nbytes));
        return node;
    }

    void loadNestedShapes(TensorLeaf& leaf, const std::string& rel, const std::string& where) {
        const std::optional<StorageInfo> table = stat(rel);
        if (!table)
            throw Error::notFound(files_.describe(rel), "missing shape table of nested leaf");
        if (leaf.shape.size() != 2)
            throw Error::corrupt(where, "nested leaf shape must be [components, dims]");
        const std::int64_t count = checkedNumel(leaf.shape, where);
        const std::string bytes = read(rel, options_.maxMetadataBytes);
        if (static_cast<std::uint64_t>(count) > bytes.size() / 8)
            throw Error::corrupt(
                files_.describe(rel),
                "shape table shorter than its declared shape " + formatShape(leaf.shape));
        leaf.numel = 0;
        for (std::int64_t i = 0; i < leaf.shape[0]; ++i) {
            std::vector<std::int64_t> component;
            for (std::int64_t j = 0; j < leaf.shape[1]; ++j) {
                std::int64_t d;
                std::memcpy(&d, bytes.data() + 8 * (i * leaf.shape[1] + j), 8);
                if (d < 0)
                    throw Error::corrupt(files_.describe(rel), "negative size in shape table");
                component.push_back(d);
            }
            const std::int64_t n = checkedNumel(component, where);
            if (leaf.numel > std::numeric_limits<std::int64_t>::max() - n)
                throw Error::corrupt(where, "tensor too large");
            leaf.numel += n;
            leaf.nestedShapes.push_back(std::move(component));
        }
    }

    void loadLazyStack(NodeBuilder& b, const Value& meta, const std::string& dir, int depth) {
        b.setKind(NodeKind::LazyStack);
        const std::string where = files_.describe(joinPath(dir, "meta.json"));
        int& stackDim = b.collection().stackDim;
        if (const Value* sd = meta.find("stack_dim"); sd && sd->isInt())
            stackDim = static_cast<int>(sd->asInt());
        // Members 0, 1, ... until a member's directory is absent. A member that
        // is there but cannot be read (no meta.json, say) is an error, as in
        // Python: the stack is never silently cut short.
        for (int i = 0;; ++i) {
            const std::string childDir = joinPath(dir, std::to_string(i));
            if (!files_.hasDirectory(childDir))
                break;
            b.append(loadNode(childDir, std::to_string(i), depth + 1, {}));
        }
        // The stacked batch size: the members' common batch size with the
        // stack's length inserted at stack_dim.
        std::vector<std::int64_t> common;
        bool first = true, uniform = true;
        for (const Node* child : b.node().children()) {
            if (child->isError())
                continue;
            if (first)
                common = child->batchSize(), first = false;
            else if (child->batchSize() != common)
                uniform = false;
        }
        if (!uniform)
            throw Error::corrupt(where, "stacked members have different batch sizes");
        const int dim = stackDim < 0 ? stackDim + static_cast<int>(common.size()) + 1 : stackDim;
        if (dim < 0 || dim > static_cast<int>(common.size()))
            throw Error::corrupt(where, "stack_dim " + std::to_string(stackDim) + " out of range");
        common.insert(common.begin() + dim, static_cast<std::int64_t>(b.node().children().size()));
        b.setBatchSize(std::move(common));
        if (const Value* device = meta.find("device");
            device && device->isString() && device->asString() != "None")
            b.setDevice(device->asString());
    }

    // A pickle sidecar: decoded if it holds plain data, else left opaque.
    template <typename Record>  // NonTensor, Collection
    std::optional<Value> readPickle(Record& record, const std::string& rel) {
        record.pickleFile = rel;
        std::optional<Value> v = decodePlainPickle(read(rel, options_.maxMetadataBytes));
        record.pickleOpaque = !v.has_value();
        return v;
    }

    void loadNonTensorData(NodeBuilder& b, const Value& meta, const std::string& dir,
                           const std::vector<std::int64_t>& parentBatch) {
        b.setKind(NodeKind::NonTensorData);
        b.setBatchSize(parentBatch);  // NonTensorData stores none; it takes its parent's
        if (const Value* data = meta.find("data")) {
            b.setValue(*data);
            return;
        }
        const std::string pickle = joinPath(dir, "other.pickle");
        if (stat(pickle)) {
            if (auto v = readPickle(b.nonTensor(), pickle)) {
                if (const Value* data = v->find("data"))
                    b.setValue(*data);
                else
                    b.nonTensor().pickleOpaque = true;
            }
        }
    }

    void loadNonTensorStack(NodeBuilder& b, const Value& meta, const std::string& dir) {
        b.setKind(NodeKind::NonTensorStack);
        Value data = *meta.find("data");
        if (data.isString() && data.asString() == "pickle.pkl" &&
            stat(joinPath(dir, "pickle.pkl"))) {
            data = Value();
            if (auto v = readPickle(b.nonTensor(), joinPath(dir, "pickle.pkl")))
                data = std::move(*v);
        }
        if (const Value* sd = meta.find("stack_dim"); sd && sd->isInt())
            b.nonTensor().stackDim = static_cast<int>(sd->asInt());
        if (const Value* device = meta.find("device"); device && device->isString())
            b.setDevice(device->asString());
        b.setBatchSize(b.nonTensor().pickleOpaque ? std::vector<std::int64_t>{} : stackDims(data));
        b.setValue(std::move(data));
    }

    void loadView(NodeBuilder& b, const Value& meta, const std::string& dir, int depth,
                  const std::vector<std::int64_t>& parentBatch) {
        b.setKind(NodeKind::View);
        readNodeKeys(b, meta, files_.describe(joinPath(dir, "meta.json")));
        for (const auto& [k, v] : meta.asObject())
            if (k != "_type" && k != "shape" && k != "device")
                b.collection().attributes.emplace_back(k, v);
        const Node& source =
            b.append(loadNode(joinPath(dir, "_source"), "_source", depth + 1, parentBatch));
        if (!meta.find("shape") && !source.isError())
            b.setBatchSize(source.batchSize());
    }

    void loadTensorClass(NodeBuilder& b, const Value& meta, const std::string& dir, int depth) {
        b.setKind(NodeKind::TensorClass);
        for (const auto& [k, v] : meta.asObject())
            if (k != "_type")
                b.collection().attributes.emplace_back(k, v);
        const std::string pickle = joinPath(dir, "other.pickle");
        if (stat(pickle)) {
            if (auto v = readPickle(b.collection(), pickle); v && v->isObject())
                for (auto& [k, val] : v->asObject())
                    b.collection().attributes.emplace_back(k, val);
        }
        const std::string inner = joinPath(dir, "_tensordict");
        if (!hasNode(inner))
            throw Error::corrupt(files_.describe(dir), "unknown node class \"" +
                                                           b.node().typeString() +
                                                           "\" with no _tensordict/ directory");
        // The fields live in _tensordict/; they become this node's children,
        // one level deeper for the nesting limit.
        Node fields;
        NodeBuilder f(fields);
        loadTensorDict(f, readMeta(inner), inner, depth + 1);
        b.setBatchSize(fields.batchSize());
        b.setDevice(fields.device());
        for (auto& child : f.takeChildren())
            b.append(std::move(child));
    }

    // The container's files, each found or read one told to onFile_.
    std::optional<StorageInfo> stat(const std::string& rel) const {
        std::optional<StorageInfo> info = files_.stat(rel);
        if (info && onFile_)
            onFile_(rel);
        return info;
    }
    std::string read(const std::string& rel, std::uint64_t cap) const {
        if (onFile_)
            onFile_(rel);
        return files_.read(rel, cap);
    }

    std::shared_ptr<const Store> store_;
    const Container& files_;
    const LoadOptions& options_;
    const FileObserver& onFile_;
};

void collectErrors(const Node& node, std::vector<const Node*>& out) {
    if (node.isError())
        out.push_back(&node);
    for (const Node* child : node.children())
        collectErrors(*child, out);
}

}  // namespace

std::vector<const Node*> TensorDict::errors() const {
    std::vector<const Node*> out;
    if (root_)
        collectErrors(*root_, out);
    return out;
}

TensorDict TensorDict::create(std::vector<std::int64_t> batchSize) {
    auto root = std::make_shared<Node>();
    NodeBuilder b(*root);
    b.setClass("TensorDict", "<class 'tensordict._td.TensorDict'>");
    b.setBatchSize(std::move(batchSize));
    b.setDevice("cpu");
    return adopt(std::move(root), {}, "directory");
}

Node& TensorDict::mutableRoot() {
    if (root_->isLocked())
        throw Error::invalid(path_, "the tensordict is locked (saved tensordicts are read-only)");
    return *root_;
}

TensorDict TensorDict::adopt(std::shared_ptr<Node> root, std::string path, std::string format,
                             std::shared_ptr<const Store> store) {
    TensorDict td;
    td.root_ = std::move(root);
    td.path_ = std::move(path);
    td.format_ = std::move(format);
    td.store_ = std::move(store);
    return td;
}

TensorDict select(const TensorDict& td, const std::vector<std::vector<std::string>>& keyPaths) {
    // Copy the root's own fields, then graft each selected subtree along its path.
    std::shared_ptr<Node> root = NodeBuilder::shallowCopy(td.root());
    for (const auto& path : keyPaths) {
        const Node* source = td.root().find(path);
        if (!source || path.empty())
            throw Error::notFound(formatKeyPath(path), "no such key");
        Node* target = root.get();
        const Node* sourceParent = &td.root();
        for (std::size_t i = 0; i + 1 < path.size(); ++i) {
            sourceParent = sourceParent->child(path[i]);
            Node* next = NodeBuilder(*target).child(path[i]);
            if (!next)
                next = &NodeBuilder(*target).append(NodeBuilder::shallowCopy(*sourceParent));
            target = next;
        }
        NodeBuilder(*target).put(source->clone());
    }
    return TensorDict::adopt(std::move(root), td.path(), td.format(), td.store());
}

TensorDict underKey(const TensorDict& td, const std::string& key) {
    if (key.empty())
        throw Error::invalid("the root", "a key cannot be empty");
    auto root = NodeBuilder::create(NodeKind::TensorDict, "");
    NodeBuilder(*root).setClass("TensorDict", {});
    std::unique_ptr<Node> moved = td.root().clone();
    NodeBuilder(*moved).setKey(key);
    NodeBuilder(*moved).setKeyRepr({});
    NodeBuilder(*root).append(std::move(moved));
    return TensorDict::adopt(std::move(root), td.path(), td.format(), td.store());
}

TensorDict load(const std::string& path, const LoadOptions& options) {
    std::string target = path;
    // A meta.json given directly stands for its directory.
    const std::string metaName = "meta.json";
    if (target.size() >= metaName.size() &&
        target.compare(target.size() - metaName.size(), metaName.size(), metaName) == 0 &&
        (target.size() == metaName.size() || target[target.size() - metaName.size() - 1] == '/')) {
        target = target.size() == metaName.size()
                     ? "."
                     : target.substr(0, target.size() - metaName.size() - 1);
        if (target.empty())
            target = "/";
    }
    return loadStore(openStore(target, options.store), options);
}

TensorDict loadStore(const std::shared_ptr<const Store>& store, const LoadOptions& options,
                     const FileObserver& onFile) {
    const std::string path = store->container().location(), format(store->format());
    if (std::unique_ptr<Node> root = store->buildTree(store)) {
        // A format with a structure of its own (a checkpoint, safetensors, numpy).
        const Node* sub = root->find(options.subpath);
        if (!sub)
            throw Error::notFound(path,
                                  "subpath key " + formatKeyPath(options.subpath) + " not found");
        if (sub != root.get())
            return TensorDict::adopt(sub->clone(), path, format, store);
        return TensorDict::adopt(std::move(root), path, format, store);
    }
    Loader loader(store, options, onFile);
    return TensorDict::adopt(loader.loadRoot(), path, format, store);
}

}  // namespace tensordict
