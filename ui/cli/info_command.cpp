#include "info_command.h"

#include "load_settings.h"

#include <optional>

#include "node_text.h"
#include "tensordict/report.h"
#include "tensordict/store.h"

namespace cli {
namespace {

// The node's key path as a JSON list: ["a", "b"]. `parentKeys` is the
// parent's list without its closing bracket, so each line costs one key.
std::string keyList(const std::string& parentKeys, const tensordict::Node& node) {
    if (!node.parent())
        return "[";
    return parentKeys + (parentKeys.size() > 1 ? ", " : "") +
           tensordict::toJson(tensordict::Value(node.key()));
}

void appendShape(std::string& line, const std::vector<std::int64_t>& shape) {
    line += '[';
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i)
            line += ", ";
        line += std::to_string(shape[i]);
    }
    line += ']';
}

// One line per node, built as UTF-8 (10,000 leaves print in a few ms).
void printNode(const tensordict::Node& node, bool sha256, const std::string& parentKeys,
               std::string& text, QTextStream& out) {
    using tensordict::NodeKind;
    const std::string keys = keyList(parentKeys, node);
    text += keys;
    text += "]  ";
    text += tensordict::kindName(node.kind());
    switch (node.kind()) {
        case NodeKind::Tensor:
            text += "  " + std::string(tensordict::dtypeName(node.leaf().dtype)) + "  shape ";
            appendShape(text, node.leaf().shape);
            text += "  " + std::to_string(node.leaf().nbytes) + " bytes  " +
                    nodetext::storageText(node).toStdString();
            if (node.leaf().storage.kind != tensordict::StorageKind::None)
                text += " " + node.leaf().storage.path;
            if (sha256) {
                text += "  sha256 " + tensordict::leafSha256(node);
                if (const std::string warning = node.integrityWarning(); !warning.empty())
                    text += "  WARNING " + warning;
            }
            break;
        case NodeKind::NonTensorData:
        case NodeKind::NonTensorStack:
            text += "  " + node.className() + "  batch ";
            appendShape(text, node.batchSize());
            text += "  ";
            text += node.nonTensor().pickleOpaque
                        ? "<pickle " + node.nonTensor().pickleFile + ", not unpickled>"
                        : tensordict::toJson(node.value());
            break;
        case NodeKind::Error:
            text += "  " + node.error();
            break;
        default:
            text += "  " + node.className() + "  batch ";
            appendShape(text, node.batchSize());
            if (node.kind() == NodeKind::LazyStack)
                text += "  stack_dim " + std::to_string(node.collection().stackDim);
            else
                text += "  device " + node.device().value_or("None");
            if (!node.collection().attributes.empty())
                text += "  " + tensordict::toJson(tensordict::Value(node.collection().attributes));
            break;
    }
    text += '\n';
    if (text.size() > (64u << 10)) {
        out << QString::fromStdString(text);
        text.clear();
    }
    for (const auto& child : node.children())
        printNode(*child, sha256, keys, text, out);
}

// Problems found while reading leaves in full (CRC-32 mismatches): the
// data was shown, with a warning naming the entry.
void reportIntegrityWarnings(const tensordict::Node& node, QTextStream& err) {
    if (const std::string warning = node.integrityWarning(); !warning.empty())
        err << "tdstudio: warning: "
            << QString::fromStdString(node.store()
                                          ? node.store()->describe(node.leaf().storage.path)
                                          : node.leaf().storage.path)
            << ": " << QString::fromStdString(warning) << '\n';
    for (const auto& child : node.children())
        reportIntegrityWarnings(*child, err);
}

}  // namespace

int printInfo(const InfoRequest& request, QTextStream& out, QTextStream& err) {
    std::optional<tensordict::TensorDict> loaded;
    try {
        loaded.emplace(tensordict::load(request.path.toStdString(),
                                        loadOptionsFromSettings(/*tolerant=*/true)));
    } catch (const std::exception& e) {
        err << "tdstudio: " << QString::fromUtf8(e.what()) << '\n';
        return 1;
    }
    const tensordict::TensorDict& td = *loaded;
    try {
        if (request.json) {
            tensordict::DescribeOptions options;
            options.sha256 = request.sha256;
            options.firstValues = 16;
            out << QString::fromStdString(tensordict::toJson(tensordict::describe(td, options),
                                                             tensordict::JsonStyle::Pretty))
                << '\n';
        } else {
            out << QString::fromStdString(td.path()) << "  (" << QString::fromStdString(td.format())
                << ")\n";
            std::string text;
            printNode(td.root(), request.sha256, {}, text, out);
            out << QString::fromStdString(text);
        }
    } catch (const std::exception& e) {
        out.flush();
        err << "tdstudio: " << QString::fromUtf8(e.what()) << '\n';
        return 1;
    }
    out.flush();
    reportIntegrityWarnings(td.root(), err);
    const auto errors = td.errors();
    for (const auto* e : errors)
        err << "tdstudio: " << QString::fromStdString(e->error()) << '\n';
    return errors.empty() ? 0 : 1;
}

}  // namespace cli
