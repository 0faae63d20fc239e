// The meta.json files and data files of a save (core/FORMAT.md sections 2-6 and 9.1),
// byte for byte as Python's stdlib-json writer produces them.

#include "writing/write_plan.h"

#include <algorithm>
#include <unordered_map>

#include "tensordict/error.h"
#include "tensordict/keys.h"
#include "tensordict/store.h"
#include "tensordict/value.h"
#include "values/pickle.h"

namespace tensordict {
namespace {

const char* const kTensorDictType = "<class 'tensordict._td.TensorDict'>";

Value ints(const std::vector<std::int64_t>& v) {
    Value::List l;
    for (auto i : v)
        l.emplace_back(i);
    return Value(std::move(l));
}

bool jsonSerializable(const Value& v) {
    if (v.isBytes())
        return false;
    if (v.isList())
        return std::all_of(v.asList().begin(), v.asList().end(), jsonSerializable);
    if (v.isObject())
        return std::all_of(v.asObject().begin(), v.asObject().end(),
                           [](const auto& kv) { return jsonSerializable(kv.second); });
    return true;
}

// type(value).__name__ as the parent's {"type": ...} entry records it.
// Containers of a checkpoint are saved as TensorDicts, its values (an int,
// a str) as NonTensorData, as tensordict converts them.
std::string shortTypeName(const Node& node) {
    if (node.kind() == NodeKind::Container)
        return "TensorDict";
    if (node.kind() == NodeKind::NonTensorData && node.typeString().empty())
        return "NonTensorData";
    const auto dot = node.className().rfind('.');
    return dot == std::string::npos ? node.className() : node.className().substr(dot + 1);
}

class Planner {
public:
    Planner(bool robustKey, bool skipObjects, WritePlan& plan)
        : robustKey_(robustKey), skipObjects_(skipObjects), plan_(plan) {}

    void node(const Node& n, const std::string& dir) {
        switch (n.kind()) {
            case NodeKind::TensorDict:
                tensorDict(n, dir, n.typeString().empty() ? kTensorDictType : n.typeString());
                break;
            case NodeKind::Container:
                tensorDict(n, dir, kTensorDictType);
                break;
            case NodeKind::Object:
                if (!n.parent())
                    throw Error::invalid(
                        "the root",
                        "the file holds one Python object of class " + n.className() +
                            ", not a dict of tensors: a tensordict cannot hold it. Save a key "
                            "inside it instead (--key K; --info lists them)");
                unrepresentable(n);
            case NodeKind::TensorClass:
                tensorClass(n, dir);
                break;
            case NodeKind::LazyStack:
                lazyStack(n, dir);
                break;
            case NodeKind::View:
                view(n, dir);
                break;
            case NodeKind::NonTensorData:
                nonTensorData(n, dir);
                break;
            case NodeKind::NonTensorStack:
                nonTensorStack(n, dir);
                break;
            case NodeKind::Tensor:
                throw Error::invalid(
                    "the root",
                    "the file holds one tensor, not a dict of tensors: a tensordict needs a key "
                    "for it (--key-name NAME saves it under NAME)");
            case NodeKind::Error:
                unreadable(n);
        }
    }

private:
    static std::string keyText(const Node& n) { return formatKeyPath(n.keyPath()); }

    [[noreturn]] static void unrepresentable(const Node& n) {
        throw Error::invalid(keyText(n),
                             "a Python object of class " + n.className() +
                                 " cannot be saved as a tensordict (it was never rebuilt: "
                                 "no code of the file is run); skip such objects to save the rest");
    }

    [[noreturn]] static void unreadable(const Node& n) {
        throw Error::invalid(keyText(n), "cannot save a part that could not be read: " + n.error());
    }

    std::string fileName(const Node& parent, const std::string& key, bool collection) {
        if (key == "shape" || key == "device" || key == "_type")
            throw Error::invalid(
                formatKeyPath(parent.keyPath()) + (parent.parent() ? "/" : "") + key,
                "a key named \"" + key +
                    "\" collides with node metadata in meta.json and cannot be saved "
                    "(Python would silently drop it); rename it");
        if (robustKey_)
            return encodeKey(key);
        if (!isSafeLegacyKey(key, collection) || key.empty())
            throw Error::invalid(
                key,
                "key cannot be a raw file name (robust_key is off); it would escape its directory");
        return key;
    }

    // Every path the plan writes belongs to one node: two source keys that
    // would become one file or folder (a checkpoint's 0 and '0'; a key "x"
    // beside a key "x.memmap") are refused before anything is written,
    // instead of one silently replacing the other.
    void claim(const std::string& path, const Node& owner) {
        const auto [it, fresh] = claimed_.emplace(path, &owner);
        if (fresh || it->second == &owner)
            return;
        const Node& first = *it->second;
        const auto spelled = [](const Node& n) {
            return n.parent() && n.parent()->parent()
                       ? n.keyRepr() + " (in " + formatKeyPath(n.parent()->keyPath()) + ")"
                       : n.keyRepr();
        };
        throw Error::invalid(
            formatKeyPath(owner.keyPath()),
            "the keys " + spelled(first) + " and " + spelled(owner) + " would both be saved as " +
                path +
                ", and a tensordict keeps only one of them (its keys are strings). To keep "
                "both, rename one in the source; to save the rest without them, select the "
                "other keys (--key K for each, or Save As... of the selected keys)");
    }

    void addDir(const std::string& dir, const Node& owner) {
        if (dir.empty())
            return;
        claim(dir, owner);
        plan_.directories.push_back(dir);
    }

    void addContent(const std::string& path, const Node& owner, std::string content) {
        claim(path, owner);
        PlannedFile f;
        f.path = path;
        f.keyText = keyText(owner);
        f.size = content.size();
        f.content = std::move(content);
        plan_.totalBytes += f.size;
        plan_.files.push_back(std::move(f));
    }

    void addMeta(const std::string& dir, const Node& owner, const Value& meta,
                 JsonStyle style = JsonStyle::Python) {
        addContent(joinPath(dir, "meta.json"), owner, toJson(meta, style));
    }

    // The entries of a TensorDict node, its files, then its meta.json (last, as Python's sequential
    // writer).
    void tensorDict(const Node& n, const std::string& dir, const std::string& typeString) {
        addDir(dir, n);
        Value::Object meta;
        for (const auto& childPtr : n.children()) {
            const Node& c = *childPtr;
            if (c.kind() == NodeKind::Object || c.isUnread()) {
                if (!skipObjects_)
                    c.isError() ? unreadable(c) : unrepresentable(c);
                plan_.skipped.push_back(keyText(c));
                continue;
            }
            if (c.isError())
                unreadable(c);
            const std::string name = fileName(n, c.key(), !c.isTensor());
            if (c.isTensor() && dtypeInfo(c.leaf().dtype).packedBits)
                throw Error::unsupported(keyText(c), "a " + std::string(dtypeName(c.leaf().dtype)) +
                                                         " tensor: tensordict files have no "
                                                         "dtype for packed sub-byte floats");
            if (c.isTensor()) {
                meta.emplace_back(
                    c.key(),
                    Value(Value::Object{{"device", Value("cpu")},
                                        {"shape", ints(c.leaf().shape)},
                                        {"dtype", Value(std::string(dtypeName(c.leaf().dtype)))},
                                        {"is_nested", Value(c.leaf().isNested)}}));
                leafFiles(c, dir, name);
            } else {
                meta.emplace_back(c.key(), Value(Value::Object{{"type", Value(shortTypeName(c))}}));
                node(c, joinPath(dir, name));
            }
        }
        meta.emplace_back("shape", ints(n.batchSize()));
        meta.emplace_back("device", Value("cpu"));  // memmap results always live on the CPU
        meta.emplace_back("_type", Value(typeString));
        addMeta(dir, n, Value(std::move(meta)));
    }

    void leafFiles(const Node& leaf, const std::string& dir, const std::string& name) {
        if (leaf.leaf().isNested) {
            std::string table;
            for (const auto& component : leaf.leaf().nestedShapes)
                for (std::int64_t d : component)
                    table.append(reinterpret_cast<const char*>(&d), sizeof d);
            addContent(joinPath(dir, name + ".shape.memmap"), leaf, std::move(table));
        }
        if (leaf.leaf().nbytes == 0)
            return;  // zero-element leaves get no file
        PlannedFile f;
        f.path = joinPath(dir, name + ".memmap");
        claim(f.path, leaf);
        f.keyText = keyText(leaf);
        f.leaf = &leaf;
        f.size = leaf.leaf().nbytes;
        f.isTensorData = true;
        f.outsideTarget = leaf.leaf().storage.outsideTarget();
        plan_.totalBytes += f.size;
        plan_.files.push_back(std::move(f));
    }

    void tensorClass(const Node& n, const std::string& dir) {
        addDir(dir, n);
        Value::Object meta{{"_type", Value(n.typeString())}};
        Value::Object pickled;
        for (const auto& [k, v] : n.collection().attributes) {
            if (jsonSerializable(v))
                meta.emplace_back(k, v);
            else
                pickled.emplace_back(k, v);
        }
        addMeta(dir, n, Value(std::move(meta)));
        if (n.collection().pickleOpaque)  // fields we could not decode travel as they are
            addSidecar(joinPath(dir, "other.pickle"), n, n.collection().pickleFile);
        else if (!pickled.empty())
            addContent(joinPath(dir, "other.pickle"), n,
                       encodePlainPickle(Value(std::move(pickled))));
        tensorDict(n, joinPath(dir, "_tensordict"), kTensorDictType);
    }

    void lazyStack(const Node& n, const std::string& dir) {
        addDir(dir, n);
        addMeta(dir, n,
                Value(Value::Object{
                    {"_type", Value(n.typeString().empty()
                                        ? "<class 'tensordict._lazy.LazyStackedTensorDict'>"
                                        : n.typeString())},
                    {"stack_dim", Value(std::int64_t{n.collection().stackDim})}}));
        for (std::size_t i = 0; i < n.children().size(); ++i)
            node(*n.children()[i], joinPath(dir, std::to_string(i)));
    }

    void view(const Node& n, const std::string& dir) {
        addDir(dir, n);
        Value::Object meta;
        if (n.className() != "_SubTensorDict") {
            meta.emplace_back("shape", ints(n.batchSize()));
            meta.emplace_back("device", Value("cpu"));
        }
        meta.emplace_back("_type", Value(n.typeString()));
        for (const auto& kv : n.collection().attributes)
            meta.push_back(kv);
        addMeta(dir, n, Value(std::move(meta)));
        for (const auto& c : n.children())
            node(*c, joinPath(dir, c->key()));
    }

    // An opaque pickle is copied byte for byte from its source.
    void addSidecar(const std::string& path, const Node& n, const std::string& sidecar) {
        if (!n.store())
            throw Error::invalid(keyText(n), "pickled value has no source to copy from");
        const auto source = n.store()->container().stat(sidecar);
        addContent(path, n, n.store()->container().read(sidecar, 1ull << 34));
        if (source)
            plan_.files.back().outsideTarget = source->outsideTarget();
    }

    void nonTensorData(const Node& n, const std::string& dir) {
        addDir(dir, n);
        const std::string type = n.typeString().empty()
                                     ? "<class 'tensordict.tensorclass.NonTensorData'>"
                                     : n.typeString();
        const Value value = n.value();
        const bool inline_ = !n.nonTensor().pickleOpaque && jsonSerializable(value);
        Value::Object meta{{"_type", Value(type)}};
        if (inline_)
            meta.emplace_back("data", value);
        meta.emplace_back("_is_non_tensor", Value(true));
        meta.emplace_back("_metadata", Value());
        addMeta(dir, n, Value(std::move(meta)));
        if (n.nonTensor().pickleOpaque)
            addSidecar(joinPath(dir, "other.pickle"), n, n.nonTensor().pickleFile);
        else if (!inline_)
            addContent(joinPath(dir, "other.pickle"), n,
                       encodePlainPickle(Value(Value::Object{{"data", value}})));
    }

    void nonTensorStack(const Node& n, const std::string& dir) {
        addDir(dir, n);
        const Value value = n.value();
        const bool inline_ = !n.nonTensor().pickleOpaque && jsonSerializable(value);
        Value::Object meta{{"_type", Value(n.typeString().empty()
                                               ? "<class 'tensordict.tensorclass.NonTensorStack'>"
                                               : n.typeString())},
                           {"stack_dim", Value(std::int64_t{n.nonTensor().stackDim})},
                           {"device", Value()},
                           {"data", inline_ ? value : Value("pickle.pkl")}};
        // Python writes this one file with separators=(",", ":").
        addMeta(dir, n, Value(std::move(meta)), JsonStyle::PythonCompact);
        if (n.nonTensor().pickleOpaque)
            addSidecar(joinPath(dir, "pickle.pkl"), n, n.nonTensor().pickleFile);
        else if (!inline_)
            addContent(joinPath(dir, "pickle.pkl"), n, encodePlainPickle(value));
    }

    bool robustKey_;
    bool skipObjects_;
    WritePlan& plan_;
    std::unordered_map<std::string, const Node*> claimed_;
};

// core/FORMAT.md 8.1: per directory, meta.json first, then the other files by
// name, then the sub-directories by name, recursively.
bool archiveOrder(const PlannedFile& a, const PlannedFile& b) {
    // Component by component, without splitting the paths into strings:
    // the sort of a 100,000-file plan calls this two million times.
    std::string_view pa = a.path, pb = b.path;
    for (;;) {
        const auto sa = pa.find('/'), sb = pb.find('/');
        const std::string_view ca = pa.substr(0, sa), cb = pb.substr(0, sb);
        const bool aFile = sa == std::string_view::npos, bFile = sb == std::string_view::npos;
        if (ca == cb) {
            if (aFile || bFile)
                return aFile && !bFile;  // the shorter path first
            pa.remove_prefix(sa + 1);
            pb.remove_prefix(sb + 1);
            continue;
        }
        if (aFile != bFile)
            return aFile;  // files before sub-directories
        if (aFile && (ca == "meta.json" || cb == "meta.json"))
            return ca == "meta.json";
        return ca < cb;  // UTF-8 byte order is Python's code-point order
    }
}

}  // namespace

LeafBytes PlannedFile::bytes() const {
    if (leaf)
        return leaf->bytes();
    // Non-owning: the plan outlives every write of its content.
    auto* p = reinterpret_cast<std::byte*>(const_cast<char*>(content.data()));
    return {std::shared_ptr<std::byte>(std::shared_ptr<void>(), p), content.size()};
}

WritePlan makeWritePlan(const Node& root, bool robustKey, PlanOrder order, bool skipObjects) {
    WritePlan plan;
    Planner(robustKey, skipObjects, plan).node(root, "");
    if (order == PlanOrder::Archive) {
        // Sorted through positions, then moved once: a file is too large a
        // record to move at every step of the sort.
        std::vector<std::uint32_t> order(plan.files.size());
        for (std::uint32_t i = 0; i < order.size(); ++i)
            order[i] = i;
        std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
            return archiveOrder(plan.files[a], plan.files[b]);
        });
        std::vector<PlannedFile> sorted;
        sorted.reserve(order.size());
        for (const std::uint32_t i : order)
            sorted.push_back(std::move(plan.files[i]));
        plan.files = std::move(sorted);
    }
    return plan;
}

}  // namespace tensordict
