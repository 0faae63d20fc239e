#include "command_line.h"

#include "document.h"
#include "key_tree_model.h"
#include "tensordict/report.h"

namespace cli {
namespace {

QString keyList(const tensordict::Node& node) {
    tensordict::Value::List keys;
    for (const auto& k : node.keyPath()) keys.emplace_back(k);
    return QString::fromStdString(tensordict::toJson(tensordict::Value(std::move(keys))));
}

void printNode(const tensordict::Node& node, bool sha256, QTextStream& out) {
    using tensordict::NodeKind;
    QString line = keyList(node) + "  " + KeyTreeModel::kindText(node);
    switch (node.kind) {
        case NodeKind::Tensor:
            line += "  " + QString::fromStdString(node.className) + "  shape " + KeyTreeModel::shapeText(node.shape) +
                    "  " + QString::number(node.nbytes) + " bytes  " + KeyTreeModel::storageText(node);
            if (node.storage.kind != tensordict::StorageKind::None)
                line += " " + QString::fromStdString(node.storage.path);
            if (sha256) line += "  sha256 " + QString::fromStdString(tensordict::leafSha256(node));
            break;
        case NodeKind::NonTensorData:
        case NodeKind::NonTensorStack:
            line += "  " + QString::fromStdString(node.className) + "  batch " + KeyTreeModel::shapeText(node.batchSize) +
                    "  " +
                    (node.pickleOpaque ? "<pickle " + QString::fromStdString(node.pickleFile) + ", not unpickled>"
                                       : QString::fromStdString(tensordict::toJson(node.data)));
            break;
        case NodeKind::Error: line += "  " + QString::fromStdString(node.error); break;
        default:
            line += "  " + QString::fromStdString(node.className) + "  batch " + KeyTreeModel::shapeText(node.batchSize);
            if (node.kind == NodeKind::LazyStack)
                line += "  stack_dim " + QString::number(node.stackDim);
            else
                line += "  device " + (node.device ? QString::fromStdString(*node.device) : QString("None"));
            if (!node.attributes.empty())
                line += "  " + QString::fromStdString(tensordict::toJson(tensordict::Value(node.attributes)));
            break;
    }
    out << line << '\n';
    for (const auto& child : node.children) printNode(*child, sha256, out);
}

}  // namespace

int printInfo(const QString& path, bool json, bool sha256, QTextStream& out, QTextStream& err) {
    const Document::LoadResult result = Document::loadNow(path);
    if (!result.tensordict) {
        err << "tdstudio: " << result.error << '\n';
        return 1;
    }
    const tensordict::TensorDict& td = *result.tensordict;
    try {
        if (json) {
            tensordict::DescribeOptions options;
            options.sha256 = sha256;
            out << QString::fromStdString(tensordict::toJson(tensordict::describe(td, options),
                                                             tensordict::JsonStyle::Pretty))
                << '\n';
        } else {
            out << QString::fromStdString(td.path()) << "  ("
                << (td.format() == tensordict::SourceFormat::Archive ? "archive" : "directory") << ")\n";
            printNode(td.root(), sha256, out);
        }
    } catch (const std::exception& e) {
        out.flush();
        err << "tdstudio: " << e.what() << '\n';
        return 1;
    }
    out.flush();
    const auto errors = td.errors();
    for (const auto* e : errors) err << "tdstudio: " << QString::fromStdString(e->error) << '\n';
    return errors.empty() ? 0 : 1;
}

}  // namespace cli
