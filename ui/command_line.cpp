#include "command_line.h"

#include "document.h"
#include "key_tree_model.h"
#include "tensordict/report.h"
#include "tensordict/save.h"

#include <QElapsedTimer>

namespace cli {
namespace {

QString keyList(const tensordict::Node& node) {
    tensordict::Value::List keys;
    for (const auto& k : node.keyPath())
        keys.emplace_back(k);
    return QString::fromStdString(tensordict::toJson(tensordict::Value(std::move(keys))));
}

void printNode(const tensordict::Node& node, bool sha256, QTextStream& out) {
    using tensordict::NodeKind;
    QString line = keyList(node) + "  " + KeyTreeModel::kindText(node);
    switch (node.kind) {
        case NodeKind::Tensor:
            line += "  " + QString::fromStdString(node.className) + "  shape " +
                    KeyTreeModel::shapeText(node.shape) + "  " + QString::number(node.nbytes) +
                    " bytes  " + KeyTreeModel::storageText(node);
            if (node.storage.kind != tensordict::StorageKind::None)
                line += " " + QString::fromStdString(node.storage.path);
            if (sha256)
                line += "  sha256 " + QString::fromStdString(tensordict::leafSha256(node));
            break;
        case NodeKind::NonTensorData:
        case NodeKind::NonTensorStack:
            line += "  " + QString::fromStdString(node.className) + "  batch " +
                    KeyTreeModel::shapeText(node.batchSize) + "  " +
                    (node.pickleOpaque
                         ? "<pickle " + QString::fromStdString(node.pickleFile) + ", not unpickled>"
                         : QString::fromStdString(tensordict::toJson(node.data)));
            break;
        case NodeKind::Error:
            line += "  " + QString::fromStdString(node.error);
            break;
        default:
            line += "  " + QString::fromStdString(node.className) + "  batch " +
                    KeyTreeModel::shapeText(node.batchSize);
            if (node.kind == NodeKind::LazyStack)
                line += "  stack_dim " + QString::number(node.stackDim);
            else
                line += "  device " +
                        (node.device ? QString::fromStdString(*node.device) : QString("None"));
            if (!node.attributes.empty())
                line += "  " + QString::fromStdString(
                                   tensordict::toJson(tensordict::Value(node.attributes)));
            break;
    }
    out << line << '\n';
    for (const auto& child : node.children)
        printNode(*child, sha256, out);
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
            printNode(td.root(), sha256, out);
        }
    } catch (const std::exception& e) {
        out.flush();
        err << "tdstudio: " << e.what() << '\n';
        return 1;
    }
    out.flush();
    const auto errors = td.errors();
    for (const auto* e : errors)
        err << "tdstudio: " << QString::fromStdString(e->error) << '\n';
    return errors.empty() ? 0 : 1;
}

}  // namespace cli
