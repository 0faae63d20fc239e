#include "tensordict/report.h"

#include "tensordict/guarded_read.h"

#include <QCryptographicHash>

#include "tensordict/element.h"
#include "tensordict/error.h"

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

struct Collector {
    const DescribeOptions& options;
    Value::List nodes, leaves, nonTensor, errors;

    void visit(const Node& node) {
        switch (node.kind()) {
            case NodeKind::TensorDict:
            case NodeKind::TensorClass:
            case NodeKind::View:
            case NodeKind::LazyStack:
                addNode(node);
                break;
            case NodeKind::Tensor:
                addLeaf(node);
                break;
            case NodeKind::NonTensorData:
            case NodeKind::NonTensorStack:
                addNonTensor(node);
                break;
            case NodeKind::Error:
                errors.emplace_back(
                    Value::Object{{"key", keyValue(node)}, {"error", Value(node.error())}});
                break;
        }
        for (const auto& child : node.children())
            visit(*child);
    }

    void addNode(const Node& node) {
        Value::Object o{{"key", keyValue(node)}, {"class", Value(node.className())}};
        if (node.kind() == NodeKind::TensorClass)
            o.emplace_back("is_tensorclass", Value(true));
        o.emplace_back("batch_size", intsValue(node.batchSize()));
        if (node.kind() == NodeKind::LazyStack)
            o.emplace_back("stack_dim", Value(std::int64_t{node.collection().stackDim}));
        else
            o.emplace_back("device", node.device() ? Value(*node.device()) : Value());
        if (node.kind() == NodeKind::TensorClass || node.kind() == NodeKind::View) {
            o.emplace_back(
                node.kind() == NodeKind::TensorClass ? "non_tensor_fields" : "attributes",
                Value(node.collection().attributes));
        }
        nodes.emplace_back(std::move(o));
    }

    void addLeaf(const Node& leaf) {
        Value::Object o{{"key", keyValue(leaf)},
                        {"dtype", Value(std::string(dtypeName(leaf.leaf().dtype)))},
                        {"shape", intsValue(leaf.leaf().shape)},
                        {"numel", Value(leaf.leaf().numel)},
                        {"nbytes", Value(static_cast<std::int64_t>(leaf.leaf().nbytes))}};
        if (leaf.leaf().isNested) {
            o.emplace_back("is_nested", Value(true));
            Value::List shapes;
            for (const auto& s : leaf.leaf().nestedShapes)
                shapes.push_back(intsValue(s));
            o.emplace_back("nested_shapes", Value(std::move(shapes)));
        }
        if (options.sha256) {
            o.emplace_back("sha256", Value(leafSha256(leaf)));
            if (const std::string warning = leaf.integrityWarning(); !warning.empty())
                o.emplace_back("warning", Value(warning));
        }
        if (options.firstValues > 0)
            o.emplace_back("first_values", firstValues(leaf, options.firstValues));
        o.emplace_back("storage", Value(std::string(storageKindName(leaf.leaf().storage.kind))));
        if (leaf.leaf().storage.kind == StorageKind::None) {
            o.emplace_back("file", Value());
        } else {
            o.emplace_back("file", Value(leaf.leaf().storage.path));
            o.emplace_back("file_size", Value(static_cast<std::int64_t>(leaf.leaf().storage.size)));
            if (leaf.leaf().storage.kind != StorageKind::File) {
                o.emplace_back("zip_method", Value(zipMethodName(leaf.leaf().storage.zipMethod)));
                std::optional<std::uint64_t> offset;
                try {
                    offset = leaf.payloadOffset();
                } catch (const Error&) {
                    // Reported when the leaf's bytes are read.
                }
                o.emplace_back("payload_offset",
                               offset ? Value(static_cast<std::int64_t>(*offset)) : Value());
            }
        }
        leaves.emplace_back(std::move(o));
    }

    void addNonTensor(const Node& node) {
        Value::Object o{{"key", keyValue(node)},
                        {"class", Value(node.className())},
                        {"batch_size", intsValue(node.batchSize())},
                        {"data", node.value()}};
        if (!node.nonTensor().pickleFile.empty()) {
            o.emplace_back("pickle", Value(node.nonTensor().pickleFile));
            o.emplace_back("pickle_opaque", Value(node.nonTensor().pickleOpaque));
        }
        nonTensor.emplace_back(std::move(o));
    }
};

}  // namespace

std::string leafSha256(const Node& leaf) {
    // Streamed through the guarded reader: bounded memory whatever the leaf
    // (compressed entries are inflated chunk by chunk), and the entry's CRC
    // checked on the way.
    QCryptographicHash hash(QCryptographicHash::Sha256);
    forEachChunk(leaf, 4u << 20, [&](const std::byte* data, std::size_t n) {
        hash.addData(
            QByteArrayView(reinterpret_cast<const char*>(data), static_cast<qsizetype>(n)));
    });
    return hash.result().toHex().toStdString();
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
    return Value(std::move(out));
}

}  // namespace tensordict
