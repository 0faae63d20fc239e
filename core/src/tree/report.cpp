#include "tensordict/report.h"

#include "tensordict/datasets.h"

#include "tensordict/guarded_read.h"

#include <openssl/evp.h>

#include <memory>

#include "tensordict/element.h"
#include "tensordict/error.h"
#include "tensordict/keys.h"
#include "tensordict/statistics.h"
#include "tensordict/store.h"

namespace tensordict {
namespace {

Value keyValue(const Node& node) {
    Value::List key;
    for (const auto& k : node.keyPath())
        key.emplace_back(k);
    return Value(std::move(key));
}

Value intsValue(const std::vector<std::int64_t>& ints) {
    Value::List list;
    for (auto i : ints)
        list.emplace_back(i);
    return Value(std::move(list));
}

// The properties of one kind of node (nodeProperties()), in order.
void collectionProperties(const Node& node, std::vector<NodeProperty>& out) {
    out.push_back({"class", Value(node.className())});
    if (node.kind() == NodeKind::Container || node.kind() == NodeKind::Object) {
        // A checkpoint's dict, list or object: no batch size, device or directory.
        out.push_back({"keys", Value(static_cast<std::int64_t>(node.children().size()))});
        if (node.kind() == NodeKind::Object)
            out.push_back({"never_rebuilt", Value(true)});
        if (!node.collection().attributes.empty())
            out.push_back({"attributes", Value(node.collection().attributes)});
        return;
    }
    if (node.kind() == NodeKind::TensorClass)
        out.push_back({"is_tensorclass", Value(true)});
    out.push_back({"batch_size", intsValue(node.batchSize())});
    if (node.kind() == NodeKind::LazyStack)
        out.push_back({"stack_dim", Value(std::int64_t{node.collection().stackDim})});
    else
        out.push_back({"device", node.device() ? Value(*node.device()) : Value()});
    out.push_back({"keys", Value(static_cast<std::int64_t>(node.children().size()))});
    out.push_back({"directory", Value(node.directory())});
    if (node.kind() == NodeKind::TensorClass || node.kind() == NodeKind::View)
        out.push_back({node.kind() == NodeKind::TensorClass ? "non_tensor_fields" : "attributes",
                       Value(node.collection().attributes)});
}

// The parts of a leaf gathered from several files (a DCP tensor's chunks, a
// dump's runs of rows), as its store's container lists them; none for any
// other leaf.
Value::List partsOf(const Node& node) {
    const StorageInfo& storage = node.leaf().storage;
    return storage.kind == StorageKind::Chunks && node.store()
               ? node.store()->container().leafParts(storage)
               : Value::List();
}

// A leaf's "file": null (nullptr) for a leaf in memory (or of no bytes),
// none for one gathered from parts (they say where its bytes are), else its
// one file.
std::optional<const std::string*> fileOf(const StorageInfo& storage, const Value::List& parts) {
    if (storage.kind == StorageKind::None || storage.kind == StorageKind::Memory)
        return nullptr;
    if (!parts.empty())
        return std::nullopt;
    return &storage.path;
}

void leafProperties(const Node& node, PropertyDetail detail, std::vector<NodeProperty>& out) {
    if (detail == PropertyDetail::Listing) {
        const LeafBrief brief = leafBrief(node);
        out.push_back({"dtype", Value(std::string(dtypeName(brief.dtype)))});
        out.push_back({"shape", intsValue(*brief.shape)});
        out.push_back({"nbytes", Value(static_cast<std::int64_t>(brief.nbytes))});
        out.push_back({"storage", Value(std::string(storageKindName(brief.storage)))});
        if (brief.hasFile)
            out.push_back({"file", brief.file ? Value(*brief.file) : Value()});
        return;
    }
    const TensorLeaf& leaf = node.leaf();
    const StorageInfo& storage = leaf.storage;
    out.push_back({"dtype", Value(std::string(dtypeName(leaf.dtype)))});
    out.push_back({"shape", intsValue(leaf.shape)});
    if (leaf.isNested) {
        out.push_back({"is_nested", Value(true)});
        Value::List shapes;
        for (const auto& s : leaf.nestedShapes)
            shapes.push_back(intsValue(s));
        out.push_back({"nested_shapes", Value(std::move(shapes))});
    }
    out.push_back({"numel", Value(leaf.numel)});
    out.push_back({"nbytes", Value(static_cast<std::int64_t>(leaf.dataBytes()))});
    if (node.device())
        out.push_back({"device", Value(*node.device())});
    out.push_back({"storage", Value(std::string(storageKindName(storage.kind)))});
    Value::List parts = partsOf(node);
    const std::optional<const std::string*> file = fileOf(storage, parts);
    if (!file) {  // gathered from parts: they, not one file
        out.push_back({"location", Value(node.store()->container().location())});
        out.push_back({"stored_size", Value(static_cast<std::int64_t>(storage.storedSize))});
        out.push_back({"chunks", Value(std::move(parts))});
        return;
    }
    if (!*file) {  // in memory
        out.push_back({"file", Value()});
        return;
    }
    out.push_back({"file", Value(**file)});
    out.push_back({"file_size", Value(static_cast<std::int64_t>(storage.size))});
    if (node.store())
        out.push_back({"location", Value(node.store()->container().location())});
    if (storage.kind != StorageKind::File) {
        out.push_back({"zip_method", Value(zipMethodName(storage.zipMethod))});
        out.push_back({"stored_size", Value(static_cast<std::int64_t>(storage.storedSize))});
        if (detail == PropertyDetail::All) {
            std::optional<std::uint64_t> offset;
            std::string unreadable;
            try {
                offset = node.payloadOffset();
            } catch (const Error& e) {
                unreadable = e.reason();  // a damaged local header, a file changed meanwhile
            }
            out.push_back(
                {"payload_offset", offset ? Value(static_cast<std::int64_t>(*offset)) : Value()});
            if (!unreadable.empty())
                out.push_back({"payload_offset_error", Value(unreadable)});
        }
    }
    if (!storage.outsideTarget().empty())
        out.push_back({"outside_target", Value(storage.outsideTarget())});
    if (storage.offset)
        out.push_back({"byte_offset", Value(static_cast<std::int64_t>(storage.offset))});
    else if (storage.kind == StorageKind::File && node.store())
        // A leaf its container decodes (a packed F4/F6 tensor): where its bytes start.
        if (const std::optional<std::uint64_t> at =
                node.store()->container().payloadOffset(storage))
            out.push_back({"byte_offset", Value(static_cast<std::int64_t>(*at))});
    if (!storage.strides.empty())
        out.push_back({"strides", intsValue(storage.strides)});
    if (storage.bigEndian)
        out.push_back({"byte_order", Value("big")});
}

void nonTensorProperties(const Node& node, std::vector<NodeProperty>& out) {
    out.push_back({"class", Value(node.className())});
    // A value in a checkpoint's dict, list or object (an int, a str) has no batch size.
    const Node* parent = node.parent();
    const bool plainValue =
        parent && (parent->kind() == NodeKind::Container || parent->kind() == NodeKind::Object);
    if (!plainValue)
        out.push_back({"batch_size", intsValue(node.batchSize())});
    out.push_back({"data", node.value()});
    if (!node.nonTensor().pickleFile.empty()) {
        out.push_back({"pickle", Value(node.nonTensor().pickleFile)});
        out.push_back({"pickle_opaque", Value(node.nonTensor().pickleOpaque)});
    }
}

// {"key": [...], then every property}.
Value::Object keyedProperties(const Node& node) {
    Value::Object o{{"key", keyValue(node)}};
    for (NodeProperty& p : nodeProperties(node))
        o.emplace_back(std::string(p.name), std::move(p.value));
    return o;
}

struct Collector {
    const DescribeOptions& options;
    Value::List nodes, leaves, nonTensor, errors;

    void visit(const Node& node) {
        Value::Object o = keyedProperties(node);
        if (node.isTensor()) {
            if (options.sha256) {
                o.emplace_back("sha256", Value(leafSha256(node)));
                if (const std::string warning = node.integrityWarning(); !warning.empty())
                    o.emplace_back("warning", Value(warning));
            }
            if (options.stats)
                o.emplace_back("stats", statisticsValue(node));
            if (options.firstValues > 0)
                o.emplace_back("first_values", firstValues(node, options.firstValues));
            leaves.emplace_back(std::move(o));
        } else if (node.isNonTensor()) {
            nonTensor.emplace_back(std::move(o));
        } else if (node.isError()) {
            errors.emplace_back(std::move(o));
        } else {
            nodes.emplace_back(std::move(o));
        }
        for (const auto& child : node.children())
            visit(*child);
    }
};

}  // namespace

std::vector<NodeProperty> nodeProperties(const Node& node, PropertyDetail detail) {
    std::vector<NodeProperty> out;
    out.reserve(detail == PropertyDetail::Listing && node.isTensor() ? 5 : 16);
    if (node.isTensor())
        leafProperties(node, detail, out);
    else if (node.isNonTensor())
        nonTensorProperties(node, out);
    else if (node.isError())
        out = {{"error", Value(node.error())}, {"directory", Value(node.directory())}};
    else
        collectionProperties(node, out);
    // How a checkpoint was read (no code run), once, on its root.
    if (!node.parent() && node.store())
        if (std::string note = node.store()->readingNote(); !note.empty())
            out.push_back({"reading", Value(std::move(note))});
    return out;
}

LeafBrief leafBrief(const Node& node) {
    const TensorLeaf& leaf = node.leaf();
    const std::optional<const std::string*> file = fileOf(leaf.storage, partsOf(node));
    return {leaf.dtype,        &leaf.shape,      leaf.dataBytes(),
            leaf.storage.kind, file.has_value(), file ? *file : nullptr};
}

Value statisticsValue(const Node& leaf) {
    const LeafStatistics s = leafStatistics(leaf);
    const auto number = [&](double v) { return s.finite ? Value(v) : Value(); };
    return Value(Value::Object{
        {"min", number(s.min)},
        {"max", number(s.max)},
        {"mean", number(s.mean)},
        {"std", number(s.std)},
        {"nan", Value(s.nans)},
        {"inf", Value(s.infs)},
    });
}

std::string leafSha256(const Node& leaf) {
    // Streamed through the guarded reader: bounded memory whatever the leaf
    // (compressed entries are inflated chunk by chunk), and the entry's CRC
    // checked on the way.
    // OpenSSL's SHA-256: SHA-NI or AVX2 where the CPU has them (3x Qt's,
    // bench_open), in the same pass as the inflating.
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> hash(EVP_MD_CTX_new(),
                                                                 &EVP_MD_CTX_free);
    if (!hash || EVP_DigestInit_ex(hash.get(), EVP_sha256(), nullptr) != 1)
        throw Error::io(formatKeyPath(leaf.keyPath()), "cannot start SHA-256");
    forEachChunk(leaf, 256u << 10, [&](const std::byte* data, std::size_t n) {
        EVP_DigestUpdate(hash.get(), data, n);
    });
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    EVP_DigestFinal_ex(hash.get(), digest, &length);
    static const char hex[] = "0123456789abcdef";
    std::string text;
    for (unsigned int i = 0; i < length; ++i) {
        text += hex[digest[i] >> 4];
        text += hex[digest[i] & 15];
    }
    return text;
}

Value firstValues(const Node& leaf, int count) {
    // Only the first bytes are read (or inflated).
    Value::List values;
    const std::size_t item = itemSize(leaf.leaf().dtype);
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(
        static_cast<std::uint64_t>(std::max(count, 0)), leaf.leaf().nbytes / item));
    std::vector<std::byte> head(n * item);
    if (n) {
        LeafReader reader(leaf);
        std::size_t got = 0;
        while (got < head.size()) {
            const std::size_t r = reader.read(head.data() + got, head.size() - got);
            if (r == 0)
                break;
            got += r;
        }
    }
    for (std::size_t i = 0; i < n; ++i)
        values.push_back(elementValue(head.data() + i * item, leaf.leaf().dtype));
    return Value(std::move(values));
}

Value describe(const TensorDict& td, const DescribeOptions& options) {
    Collector c{options, {}, {}, {}, {}};
    c.visit(td.root());
    Value::Object out{
        {"path", Value(td.path())},
        {"format", Value(td.format())},
        // type(td).__name__, as Python reports it
        {"root_class", Value(td.root().className().substr(td.root().className().rfind('.') + 1))},
        {"batch_size", intsValue(td.root().batchSize())},
        {"nodes", Value(std::move(c.nodes))},
        {"leaves", Value(std::move(c.leaves))},
        {"non_tensor", Value(std::move(c.nonTensor))},
        {"errors", Value(std::move(c.errors))}};
    for (auto& field : datasetFactsValue(td.root()))
        out.push_back(std::move(field));
    return Value(std::move(out));
}

}  // namespace tensordict
