#include "node_properties.h"

#include <QLocale>

#include "node_text.h"
#include "tensordict/report.h"

using tensordict::Node;
using tensordict::Value;

namespace nodetext {
namespace {

std::vector<std::int64_t> ints(const Value& v) {
    std::vector<std::int64_t> out;
    for (const Value& i : v.asList())
        out.push_back(i.asInt());
    return out;
}

QString text(const Value& v) {
    return v.isString() ? QString::fromStdString(v.asString())
                        : QString::fromStdString(tensordict::toJson(v));
}

QString json(const Value& v) {
    return QString::fromStdString(tensordict::toJson(v, tensordict::JsonStyle::Pretty));
}

QString bytesText(std::int64_t n) {
    return byteSizeText(static_cast<std::uint64_t>(n)) +
           (n >= 1024 ? QString(" (%1 bytes)").arg(QLocale().toString(qlonglong(n))) : QString());
}

// A DCP tensor's chunks, a line each: its file and bytes, and the block of
// the tensor it holds.
QStringList chunkLines(const Value& chunks) {
    QStringList lines;
    for (const Value& c : chunks.asList()) {
        QStringList block;
        const Value::List& offsets = c.find("offsets")->asList();
        const Value::List& sizes = c.find("sizes")->asList();
        for (std::size_t d = 0; d < offsets.size() && d < sizes.size(); ++d)
            block << QString("%1:%2")
                         .arg(offsets[d].asInt())
                         .arg(offsets[d].asInt() + sizes[d].asInt());
        const std::int64_t at = c.find("offset")->asInt();
        // A chunk in its file's safetensors data: where that data starts.
        const Value* serialization = c.find("serialization");
        QString line =
            serialization ? tr("[%1] in %2, in the %3 data from byte %4")
                                .arg(block.join(", "), text(*c.find("file")), text(*serialization),
                                     QLocale().toString(qlonglong(at)))
                          : tr("[%1] in %2, bytes %3 to %4")
                                .arg(block.join(", "), text(*c.find("file")),
                                     QLocale().toString(qlonglong(at)),
                                     QLocale().toString(qlonglong(at + c.find("length")->asInt())));
        if (const Value* transforms = c.find("transform_descriptors")) {
            QStringList names;  // what the stream was written through: "stream.zstd/1"
            for (const Value& d : transforms->asList())
                names << text(d);
            line += tr(", through %1").arg(names.join(", "));
        }
        lines << line;
    }
    return lines;
}

PropertyRow shortRow(const tensordict::NodeProperty& p, QString label, QString text,
                     bool isLocation = false) {
    return PropertyRow{std::string(p.name), std::move(label), std::move(text), false, isLocation};
}

PropertyRow longRow(const tensordict::NodeProperty& p, QString label, QString text) {
    return PropertyRow{std::string(p.name), std::move(label), std::move(text), true, false};
}

// Each group of properties below reads those it names and gives nullopt
// for the others (and for those it does not show).

// What a node is: its class, batch, device, keys; a tensor's dtype and size.
std::optional<PropertyRow> whatRow(const Node& node, const tensordict::NodeProperty& p) {
    const Value& v = p.value;
    const std::string_view n = p.name;
    if (n == "class")
        return shortRow(p, tr("Class"), text(v));
    if (n == "batch_size")
        return shortRow(p, tr("Batch size"), shapeText(ints(v)));
    if (n == "device")
        return shortRow(p, node.isTensor() ? tr("Saved from device") : tr("Device"),
                        v.isNull() ? tr("none") : text(v));
    if (n == "stack_dim")
        return shortRow(p, tr("Stack dim"), text(v));
    if (n == "keys")
        return shortRow(p, tr("Keys"), QLocale().toString(qlonglong(v.asInt())));
    if (n == "directory")
        return shortRow(p, tr("Directory"), v.asString().empty() ? tr("(top level)") : text(v),
                        true);
    if (n == "non_tensor_fields")
        return v.asObject().empty() ? std::nullopt
                                    : std::optional(longRow(p, tr("Non-tensor fields"), json(v)));
    if (n == "attributes")
        return v.asObject().empty() ? std::nullopt
                                    : std::optional(longRow(p, tr("Attributes"), json(v)));
    if (n == "dtype")
        return shortRow(p, tr("DType"), text(v));
    if (n == "shape")
        return shortRow(p, tr("Shape"), shapeText(ints(v)));
    if (n == "nested_shapes")
        return shortRow(p, tr("Nested parts"), QString::number(v.asList().size()));
    if (n == "numel")
        return shortRow(p, tr("Elements"), QLocale().toString(qlonglong(v.asInt())));
    if (n == "nbytes")
        return shortRow(p, tr("Size"), bytesText(v.asInt()));
    if (n == "storage")
        return shortRow(p, tr("Storage"), storageText(node), true);
    return std::nullopt;
}

// Where a leaf's bytes are: its file or archive entry, and how they lie there.
std::optional<PropertyRow> whereRow(const Node& node, const tensordict::NodeProperty& p) {
    const Value& v = p.value;
    const std::string_view n = p.name;
    const tensordict::StorageInfo* storage = node.isTensor() ? &node.leaf().storage : nullptr;
    const bool archive = storage && (storage->kind == tensordict::StorageKind::StoredEntry ||
                                     storage->kind == tensordict::StorageKind::CompressedEntry);
    // A leaf that is a byte range of a file holding more (a checkpoint, a
    // safetensors or numpy file), not a memmap directory's file of its own.
    const bool inContainerFile =
        storage && storage->kind == tensordict::StorageKind::File && !storage->isPlain();
    if (n == "file")
        return v.isNull() || inContainerFile  // the "File" row is the location's
                   ? std::nullopt
                   : std::optional(
                         shortRow(p, archive ? tr("Archive entry") : tr("File"), text(v), true));
    if (n == "file_size") {
        if (inContainerFile)
            return shortRow(p, tr("File size"), bytesText(v.asInt()), true);
        // Only a leaf that is the first bytes of its own file can have a surplus.
        return storage->isPlain() && v.asInt() > std::int64_t(node.leaf().nbytes)
                   ? std::optional(
                         shortRow(p, tr("File size"),
                                  tr("%1 (longer than needed; the first %2 bytes are used)")
                                      .arg(v.asInt())
                                      .arg(node.leaf().nbytes),
                                  true))
                   : std::nullopt;
    }
    if (n == "location")
        return shortRow(p,
                        archive           ? tr("Archive")
                        : inContainerFile ? tr("File")
                                          : tr("Directory"),
                        text(v), true);
    if (n == "zip_method")
        return shortRow(p, tr("Compression"), text(v), true);
    if (n == "stored_size")
        return shortRow(p, tr("Stored size"), byteSizeText(static_cast<std::uint64_t>(v.asInt())),
                        true);
    if (n == "payload_offset")
        return v.isNull() ? std::nullopt  // payload_offset_error says why
                          : std::optional(shortRow(
                                p, tr("Payload offset"),
                                QString("%1 (%2)").arg(v.asInt()).arg(
                                    v.asInt() % 64 == 0 ? tr("64-byte aligned") : tr("unaligned")),
                                true));
    if (n == "payload_offset_error")
        return shortRow(p, tr("Payload offset"), tr("unreadable: %1").arg(text(v)), true);
    if (n == "outside_target")
        return shortRow(p, tr("Linked from outside"),
                        tr("%1 (a symbolic link out of the dataset: saving it is refused unless "
                           "allowed)")
                            .arg(text(v)),
                        true);
    if (n == "byte_offset")
        return shortRow(
            p, tr("Bytes in file"),
            tr("%1 to %2")
                .arg(QLocale().toString(qlonglong(v.asInt())),
                     QLocale().toString(qlonglong(v.asInt() + std::int64_t(node.leaf().nbytes)))),
            true);
    if (n == "strides")
        return shortRow(p, tr("Strides"),
                        tr("%1 (a view: read into C order)").arg(shapeText(ints(v))), true);
    if (n == "byte_order")
        return shortRow(p, tr("Byte order"), tr("big-endian (read as little-endian)"), true);
    if (n == "chunks") {
        const QStringList lines = chunkLines(v);
        return PropertyRow{std::string(p.name),
                           lines.size() == 1 ? tr("Chunk") : tr("Chunks (%1)").arg(lines.size()),
                           lines.join('\n'), true, true};
    }
    return std::nullopt;
}

// What a non-tensor holds, and how a node was read (or why it could not be).
std::optional<PropertyRow> contentRow(const Node& node, const tensordict::NodeProperty& p) {
    const Value& v = p.value;
    const std::string_view n = p.name;
    if (n == "data")
        return longRow(p, tr("Value"),
                       node.nonTensor().pickleOpaque
                           ? tr("<pickled Python object in %1: not shown, never unpickled>")
                                 .arg(QString::fromStdString(node.nonTensor().pickleFile))
                           : json(v));
    if (n == "pickle")
        return shortRow(p, tr("Pickle sidecar"),
                        text(v) + (node.nonTensor().pickleOpaque
                                       ? tr(" (holds Python objects; never unpickled)")
                                       : tr(" (plain data, decoded safely)")),
                        true);
    if (n == "error")
        return longRow(p, tr("Error"), text(v));
    if (n == "never_rebuilt")
        return longRow(p, tr("Object"),
                       tr("a Python object, shown by its class and what it holds; it was never "
                          "rebuilt and none of its code ran"));
    if (n == "reading")
        return longRow(p, tr("Read safely"), text(v));
    return std::nullopt;
}

// How each property reads, by its name; nullopt for those not shown
// (is_tensorclass, is_nested, pickle_opaque: told by the rows above).
std::optional<PropertyRow> row(const Node& node, const tensordict::NodeProperty& p) {
    if (std::optional<PropertyRow> r = whatRow(node, p))
        return r;
    if (std::optional<PropertyRow> r = whereRow(node, p))
        return r;
    return contentRow(node, p);
}

}  // namespace

std::vector<PropertyRow> propertyRows(const Node& node, bool readPayloadOffset) {
    std::vector<PropertyRow> rows;
    for (const tensordict::NodeProperty& p : tensordict::nodeProperties(
             node, readPayloadOffset ? tensordict::PropertyDetail::All
                                     : tensordict::PropertyDetail::WithoutReads))
        if (auto r = row(node, p))
            rows.push_back(std::move(*r));
    return rows;
}

}  // namespace nodetext
