#include "command_line.h"

#include "document.h"
#include "key_tree_model.h"
#include "tensordict/report.h"
#include "tensordict/save.h"

#include <QElapsedTimer>

namespace cli {
namespace {

// The node's key path as a JSON list: ["a", "b"]. `parentKeys` is the
// parent's list without its closing bracket, so each line costs one key.
std::string keyList(const std::string& parentKeys, const tensordict::Node& node) {
    if (!node.parent)
        return "[";
    return parentKeys + (parentKeys.size() > 1 ? ", " : "") +
           tensordict::toJson(tensordict::Value(node.key));
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
    text += tensordict::kindName(node.kind);
    switch (node.kind) {
        case NodeKind::Tensor:
            text += "  " + node.className + "  shape ";
            appendShape(text, node.shape);
            text += "  " + std::to_string(node.nbytes) + " bytes  " +
                    KeyTreeModel::storageText(node).toStdString();
            if (node.storage.kind != tensordict::StorageKind::None)
                text += " " + node.storage.path;
            if (sha256) {
                text += "  sha256 " + tensordict::leafSha256(node);
                if (const std::string warning = node.integrityWarning(); !warning.empty())
                    text += "  WARNING " + warning;
            }
            break;
        case NodeKind::NonTensorData:
        case NodeKind::NonTensorStack:
            text += "  " + node.className + "  batch ";
            appendShape(text, node.batchSize);
            text += "  ";
            text += node.pickleOpaque ? "<pickle " + node.pickleFile + ", not unpickled>"
                                      : tensordict::toJson(node.data);
            break;
        case NodeKind::Error:
            text += "  " + node.error;
            break;
        default:
            text += "  " + node.className + "  batch ";
            appendShape(text, node.batchSize);
            if (node.kind == NodeKind::LazyStack)
                text += "  stack_dim " + std::to_string(node.stackDim);
            else
                text += "  device " + node.device.value_or("None");
            if (!node.attributes.empty())
                text += "  " + tensordict::toJson(tensordict::Value(node.attributes));
            break;
    }
    text += '\n';
    if (text.size() > (64u << 10)) {
        out << QString::fromStdString(text);
        text.clear();
    }
    for (const auto& child : node.children)
        printNode(*child, sha256, keys, text, out);
}

// Problems found while reading leaves in full (CRC-32 mismatches): the
// data was shown, with a warning naming the entry.
void reportIntegrityWarnings(const tensordict::Node& node, QTextStream& err) {
    if (const std::string warning = node.integrityWarning(); !warning.empty())
        err << "tdstudio: warning: " << QString::fromStdString(node.storage.container) << ':'
            << QString::fromStdString(node.storage.path) << ": " << QString::fromStdString(warning)
            << '\n';
    for (const auto& child : node.children)
        reportIntegrityWarnings(*child, err);
}

}  // namespace

int save(const SaveRequest& request, QTextStream& err) {
    tensordict::SaveOptions options;
    if (!request.compression.isEmpty()) {
        const auto method = tensordict::zipMethodFromName(request.compression.toStdString());
        if (!method) {
            err << "tdstudio: unknown compression \"" << request.compression
                << "\" (stored, deflate, bzip2, lzma)\n";
            return 1;
        }
        options.compression = *method;
    }
    if (request.archive)
        options.archive = true;
    options.compressionLevel = request.level;
    options.numThreads = request.threads;
    options.atomic = request.atomic;
    options.robustKey = request.robustKey;
    options.allowOutsideLinks = request.allowOutsideLinks;
    options.copyExisting = true;  // converting means copying out of the source
    QElapsedTimer clock;
    clock.start();
    options.progress = [&err, &clock](const tensordict::SaveProgress& p) {
        const double percent =
            p.bytesTotal ? 100.0 * double(p.bytesDone) / double(p.bytesTotal) : 100.0;
        const double seconds = std::max(1e-3, clock.elapsed() / 1000.0);
        err << QString("\r%1%  %2 / %3  files %4/%5  %6/s  %7")
                   .arg(percent, 5, 'f', 1)
                   .arg(KeyTreeModel::byteSizeText(p.bytesDone),
                        KeyTreeModel::byteSizeText(p.bytesTotal))
                   .arg(p.filesDone)
                   .arg(p.filesTotal)
                   .arg(KeyTreeModel::byteSizeText(
                       static_cast<std::uint64_t>(double(p.bytesDone) / seconds)))
                   .arg(QString::fromStdString(p.currentPath).left(60))
            << "\x1b[K";
        err.flush();
    };
    try {
        tensordict::LoadOptions loadOptions;
        tensordict::TensorDict source = tensordict::load(request.source.toStdString(), loadOptions);
        if (!request.keys.isEmpty()) {
            std::vector<std::vector<std::string>> paths;
            for (const QString& key : request.keys) {
                std::vector<std::string> path;
                if (key.startsWith('[')) {
                    const tensordict::Value v = tensordict::parseJson(key.toStdString(), "--key");
                    if (!v.isList())
                        throw tensordict::Error("--key", "expected a JSON list of keys");
                    for (const auto& k : v.asList()) {
                        if (!k.isString())
                            throw tensordict::Error("--key", "keys must be strings");
                        path.push_back(k.asString());
                    }
                } else {
                    for (const QString& part : key.split('/'))
                        path.push_back(part.toStdString());
                }
                paths.push_back(std::move(path));
            }
            source = tensordict::select(source, paths);
        }
        const tensordict::TensorDict saved =
            tensordict::save(source, request.destination.toStdString(), options);
        err << "\rsaved " << QString::fromStdString(saved.path()) << " in "
            << clock.elapsed() / 1000.0 << " s\x1b[K\n";
        return 0;
    } catch (const std::exception& e) {
        err << "\ntdstudio: " << e.what() << '\n';
        return 1;
    }
}

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
            options.firstValues = 16;
            out << QString::fromStdString(tensordict::toJson(tensordict::describe(td, options),
                                                             tensordict::JsonStyle::Pretty))
                << '\n';
        } else {
            out << QString::fromStdString(td.path()) << "  ("
                << (td.format() == tensordict::SourceFormat::Archive ? "archive" : "directory")
                << ")\n";
            std::string text;
            printNode(td.root(), sha256, {}, text, out);
            out << QString::fromStdString(text);
        }
    } catch (const std::exception& e) {
        out.flush();
        err << "tdstudio: " << e.what() << '\n';
        return 1;
    }
    out.flush();
    reportIntegrityWarnings(td.root(), err);
    const auto errors = td.errors();
    for (const auto* e : errors)
        err << "tdstudio: " << QString::fromStdString(e->error) << '\n';
    return errors.empty() ? 0 : 1;
}

}  // namespace cli
