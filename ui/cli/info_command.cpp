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

void appendInts(std::string& line, const tensordict::Value& list) {
    line += '[';
    for (std::size_t i = 0; i < list.asList().size(); ++i) {
        if (i)
            line += ", ";
        line += std::to_string(list.asList()[i].asInt());
    }
    line += ']';
}

// The listing's part of a node's properties (tensordict::nodeProperties()):
// what a line says of each, in the properties' order.
void appendBrief(std::string& line, const tensordict::Node& node,
                 const tensordict::NodeProperty& p) {
    const tensordict::Value& v = p.value;
    const std::string_view n = p.name;
    if (n == "dtype" || n == "class" || n == "error") {
        line += "  " + v.asString();
    } else if (n == "shape" || n == "batch_size") {
        line += n == "shape" ? "  shape " : "  batch ";
        appendInts(line, v);
    } else if (n == "nbytes") {
        line += "  " + std::to_string(v.asInt()) + " bytes";
    } else if (n == "stack_dim") {
        line += "  stack_dim " + std::to_string(v.asInt());
    } else if (n == "device" && !node.isTensor()) {
        line += "  device " + (v.isNull() ? std::string("None") : v.asString());
    } else if (n == "storage") {
        line += "  " + nodetext::storageText(node).toStdString();
    } else if (n == "file" && !v.isNull()) {
        line += " " + v.asString();
    } else if (n == "data") {
        line += node.nonTensor().pickleOpaque
                    ? "  <pickle " + node.nonTensor().pickleFile + ", not unpickled>"
                    : "  " + tensordict::toJson(v);
    } else if ((n == "non_tensor_fields" || n == "attributes") && !v.asObject().empty()) {
        line += "  " + tensordict::toJson(v);
    }
}

// One line per node, built as UTF-8 (10,000 leaves print in a few ms).
void printNode(const tensordict::Node& node, const InfoRequest& request,
               const std::string& parentKeys, std::string& text, QTextStream& out) {
    const std::string keys = keyList(parentKeys, node);
    text += keys;
    text += "]  ";
    text += tensordict::kindName(node.kind());
    for (const tensordict::NodeProperty& p : tensordict::nodeProperties(node, false))
        appendBrief(text, node, p);
    if (request.stats && node.isTensor()) {
        const tensordict::Value stats = tensordict::statisticsValue(node);
        for (const auto& [name, value] : stats.asObject())
            text += "  " + name + " " + tensordict::toJson(value);
    }
    if (request.sha256 && node.isTensor()) {
        text += "  sha256 " + tensordict::leafSha256(node);
        if (const std::string warning = node.integrityWarning(); !warning.empty())
            text += "  WARNING " + warning;
    }
    text += '\n';
    if (text.size() > (64u << 10)) {
        out << QString::fromStdString(text);
        text.clear();
    }
    for (const auto& child : node.children())
        printNode(*child, request, keys, text, out);
}

// Problems found while reading leaves in full (CRC-32 mismatches): the
// data was shown, with a warning naming the entry.
void reportIntegrityWarnings(const tensordict::Node& node, QTextStream& err) {
    if (const std::string warning = node.integrityWarning(); !warning.empty())
        err << "tdstudio: warning: " << QString::fromStdString(node.fileName()) << ": "
            << QString::fromStdString(warning) << '\n';
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
            options.stats = request.stats;
            options.firstValues = 16;
            out << QString::fromStdString(
                       tensordict::toStrictJson(tensordict::describe(td, options)))
                << '\n';
        } else {
            out << QString::fromStdString(td.path()) << "  (" << QString::fromStdString(td.format())
                << ")\n";
            std::string text;
            printNode(td.root(), request, {}, text, out);
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
