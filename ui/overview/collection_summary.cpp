#include "collection_summary.h"

#include <QCoreApplication>
#include <QRegularExpression>
#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "node_text.h"
#include "tensordict/store.h"

using tensordict::CancelToken;
using tensordict::Node;
using tensordict::NodeKind;
using tensordict::StorageKind;

namespace {

QString tr(const char* text) {
    return QCoreApplication::translate("CollectionSummary", text);
}

QStringList keyPathOf(const Node& node) {
    QStringList path;
    for (const std::string& key : node.keyPath())
        path << QString::fromStdString(key);
    return path;
}

// f(child) for each of the file's own keys of `node`: the children of a
// group of dotted keys (made for display) are the collection's own.
template <typename F>
void forEachKey(const Node& node, const F& f) {
    for (const Node* child : node.children()) {
        if (child->isKeyGroup())
            forEachKey(*child, f);
        else
            f(*child);
    }
}

// Keeps the `top` largest entries seen, largest first.
class Largest {
public:
    explicit Largest(int top) : top_(static_cast<std::size_t>(std::max(0, top))) {}
    bool wants(std::uint64_t bytes) const {
        return top_ > 0 && (entries_.size() < top_ || bytes > entries_.back().second);
    }
    void add(const Node* node, std::uint64_t bytes) {
        if (!wants(bytes))
            return;
        auto at = std::upper_bound(entries_.begin(), entries_.end(), bytes,
                                   [](std::uint64_t b, const auto& e) { return b > e.second; });
        entries_.insert(at, {node, bytes});
        if (entries_.size() > top_)
            entries_.pop_back();
    }
    const std::vector<std::pair<const Node*, std::uint64_t>>& entries() const { return entries_; }

private:
    std::size_t top_;
    std::vector<std::pair<const Node*, std::uint64_t>> entries_;
};

struct Walk {
    CollectionSummary& summary;
    const CancelToken& cancel;
    Largest leaves;
    std::map<QString, CollectionSummary::DTypeBytes> dtypes;
    std::map<std::pair<StorageKind, int>, CollectionSummary::StorageBytes> storage;
    std::map<QString, CollectionSummary::FileBytes> files;

    // `bytes` of the leaf being walked are in `location`: a file, or a
    // stream inside one ("FILE@OFFSET", a DCP byte item's), counted as the file.
    // `name`: as shown, the file's base name unless said (a path in the store's folder).
    CollectionSummary::FileBytes& inFile(QString location, std::uint64_t bytes, QString name = {}) {
        static const QRegularExpression kStreamSuffix(QStringLiteral("@[0-9]+$"));
        location.remove(kStreamSuffix);
        name.remove(kStreamSuffix);
        auto& f = files[location];
        if (f.location.isEmpty()) {
            f.location = location;
            f.name = name.isEmpty() ? location.mid(location.lastIndexOf('/') + 1) : name;
        }
        f.bytes += bytes;
        return f;
    }

    // The files a leaf's bytes are in: its chunks' (a DCP tensor), or its
    // store's own file (a shard of a model, the archive, the folder).
    void countFiles(const Node& node) {
        const auto& store = node.store();
        if (!store)
            return;
        const tensordict::Value::List parts = store->container().leafParts(node.leaf().storage);
        if (parts.empty()) {
            ++inFile(QString::fromStdString(store->container().location()), node.leaf().dataBytes())
                  .leaves;
            return;
        }
        std::set<CollectionSummary::FileBytes*> touched;  // a leaf counts once a file
        for (const tensordict::Value& part : parts) {
            std::uint64_t elements = 1;
            if (const tensordict::Value* sizes = part.find("sizes"))
                for (const tensordict::Value& d : sizes->asList())
                    elements *= static_cast<std::uint64_t>(std::max<std::int64_t>(0, d.asInt()));
            const tensordict::Value* file = part.find("file");
            // Parts name their files within the store's folder.
            if (file && file->isString()) {
                const QString name = QString::fromStdString(file->asString());
                touched.insert(
                    &inFile(QString::fromStdString(store->container().location()) + '/' + name,
                            tensordict::storedBytes(node.leaf().dtype, elements), name));
            }
        }
        for (CollectionSummary::FileBytes* f : touched)
            ++f->leaves;
    }
    std::int64_t visited = 0;

    void problem(const Node& node, const QString& text) {
        ++summary.problemCount;
        if (summary.problems.size() < std::size_t(CollectionSummary::kMaxProblems))
            summary.problems.push_back({keyPathOf(node), text});
    }

    bool cancelled() {
        // Checked now and then: an atomic load per node would be cheap too, but not free.
        if (++visited % 4096 == 0 && cancel.isCancelled())
            summary.cancelled = true;
        return summary.cancelled;
    }

    void leaf(const Node& node) {
        ++summary.leaves;
        leaves.add(&node, node.leaf().dataBytes());
        const std::string_view full = tensordict::dtypeName(node.leaf().dtype);
        QString name = QString::fromUtf8(full.data(), static_cast<qsizetype>(full.size()));
        name.remove(QStringLiteral("torch."));
        auto& d = dtypes[name];
        d.dtype = name;
        d.bytes += node.leaf().dataBytes();
        ++d.leaves;

        const StorageKind kind = node.leaf().storage.kind;
        const int method =
            kind == StorageKind::CompressedEntry ? node.leaf().storage.zipMethod : -1;
        auto& s = storage[{kind, method}];
        s.kind = kind;
        if (s.name.isEmpty()) {
            s.name = nodetext::storageText(node);
            s.name.remove(tr(", linked from outside the dataset"));
        }
        s.bytes += node.leaf().dataBytes();
        // Bytes on disk: the file, or the archive entry as stored (compressed or not).
        s.storedBytes += node.leaf().storage.storedSize;
        ++s.leaves;
        countFiles(node);

        if (!node.leaf().storage.outsideTarget().empty())
            problem(node, tr("linked from outside the dataset: %1")
                              .arg(QString::fromStdString(node.leaf().storage.outsideTarget())));
        if (const std::string warning = node.integrityWarning(); !warning.empty())
            problem(node, QString::fromStdString(warning));
    }

    // Tensor bytes under `node`.
    std::uint64_t visit(const Node& node) {
        if (cancelled())
            return 0;
        switch (node.kind()) {
            case NodeKind::Tensor:
                leaf(node);
                return node.leaf().dataBytes();
            case NodeKind::NonTensorData:
            case NodeKind::NonTensorStack:
                ++summary.nonTensors;
                return 0;
            case NodeKind::Error:
                problem(node, QString::fromStdString(node.error()));
                return 0;
            default:
                ++summary.collections;
                break;
        }
        std::uint64_t bytes = 0;
        forEachKey(node, [&](const Node& child) {
            ++summary.keys;
            bytes += visit(child);
        });
        return bytes;
    }
};

CollectionSummary::Entry entryFor(const Node& node, std::uint64_t bytes, const Node& collection) {
    CollectionSummary::Entry e;
    e.keyPath = keyPathOf(node);
    // The path below the collection, as a Python index would read it (the
    // file's keys: groups of dotted keys are the view's, not the file's).
    std::ptrdiff_t depth = 0;  // the collection's own keys from the root
    for (const Node* n = &collection; n && n->parent(); n = n->parent())
        depth += n->isKeyGroup() ? 0 : 1;
    const std::vector<std::string> full = node.keyPath();
    const std::vector<std::string> relative(full.begin() + depth, full.end());
    e.label = relative.size() == 1 ? nodetext::displayKey(relative.front())
                                   : nodetext::keyPathText(relative);
    e.kind = nodetext::kindText(node);
    e.bytes = bytes;
    return e;
}

}  // namespace

namespace {

QString valueText(const tensordict::Value& v) {
    return QString::fromStdString(tensordict::toJson(v));
}

QString parametersText(const tensordict::Value::Object& parameters) {
    QStringList out;
    for (const auto& [name, value] : parameters)
        out << QString::fromStdString(name) + " " + valueText(value);
    return out.isEmpty() ? QString() : " (" + out.join(", ") + ")";
}

// The facts of a replay buffer's or a stack's root, a line each.
void describeDataset(const Node& root, CollectionSummary& summary) {
    const auto& store = root.store();
    if (root.parent() || !store)
        return;
    if (const auto facts = tensordict::replayBufferFacts(*store)) {
        QStringList& lines = summary.datasetFacts;
        lines
            << QObject::tr("TorchRL replay buffer (%1)").arg(QString::fromStdString(facts->layout));
        lines << (facts->valid ? QObject::tr("%1 valid of %2 rows (capacity)")
                                     .arg(*facts->valid)
                                     .arg(facts->capacity)
                               : QObject::tr("capacity %1 rows; fill level unknown (no "
                                             "storage_metadata.json)")
                                     .arg(facts->capacity));
        QString writer =
            QString::fromStdString(facts->writer) + parametersText(facts->writerParameters);
        if (facts->cursor)
            writer += QObject::tr(", cursor %1").arg(*facts->cursor);
        if (facts->writeCount)
            writer += QObject::tr(", write_count %1").arg(*facts->writeCount);
        lines << QObject::tr("writer: %1").arg(writer);
        lines << QObject::tr("sampler: %1")
                     .arg(QString::fromStdString(facts->sampler) +
                          parametersText(facts->samplerParameters));
        lines << (facts->shownRows == facts->valid.value_or(-1)
                      ? QObject::tr("showing the valid rows, %1")
                      : QObject::tr("showing every row of the storage, %1"))
                     .arg(!facts->wrapped() ? QObject::tr("oldest first (as stored: it never "
                                                          "wrapped)")
                          : facts->firstShownRow == facts->oldestRow
                              ? QObject::tr("oldest first (from storage row %1)")
                                    .arg(facts->oldestRow)
                              : QObject::tr("in storage order"));
        for (std::size_t i = 0; i < facts->pickledFiles.size(); ++i)
            lines << QObject::tr("%1 (pickled, read as data, never run): %2")
                         .arg(QString::fromStdString(facts->pickledFiles[i]),
                              QString::fromStdString(facts->pickledContents[i]));
        try {
            summary.episodes = tensordict::episodesOf(root);
        } catch (const std::exception& e) {
            summary.episodeError = QString::fromUtf8(e.what());
        }
        return;
    }
    if (const auto facts = tensordict::stackFacts(*store)) {
        QStringList chunks;
        for (const tensordict::StackChunk& c : facts->chunks)
            chunks << QString("%1 (%2)").arg(QString::fromStdString(c.name)).arg(c.rows);
        summary.datasetFacts << QObject::tr("A stack of %1 chunks along the first dimension")
                                    .arg(facts->chunks.size())
                             << chunks.join(", ");
    }
}

}  // namespace

CollectionSummary summarizeCollection(const Node& collection, int top, const CancelToken& cancel) {
    CollectionSummary summary;
    summary.keyPath = keyPathOf(collection);
    summary.className = QString::fromStdString(collection.className());
    summary.batchSize = collection.batchSize();
    summary.hasBatchSize = collection.kind() != NodeKind::Container &&
                           collection.kind() != NodeKind::Object && !collection.isKeyGroup();
    summary.kind = nodetext::kindText(collection);

    Walk walk{summary, cancel, Largest(top), {}, {}, {}, 0};
    Largest children(top);
    forEachKey(collection, [&](const Node& child) {
        if (summary.cancelled)
            return;
        ++summary.keys;
        ++summary.ownKeys;
        const std::uint64_t bytes = walk.visit(child);
        summary.totalBytes += bytes;
        children.add(&child, bytes);
    });
    if (summary.cancelled)
        return summary;
    describeDataset(collection, summary);
    for (const auto& [node, bytes] : children.entries())
        summary.largestChildren.push_back(entryFor(*node, bytes, collection));
    for (const auto& [node, bytes] : walk.leaves.entries())
        summary.largestLeaves.push_back(entryFor(*node, bytes, collection));
    for (auto& [name, d] : walk.dtypes)
        summary.byDType.push_back(std::move(d));
    for (auto& [key, s] : walk.storage)
        summary.byStorage.push_back(std::move(s));
    if (walk.files.size() > 1)
        for (auto& [location, f] : walk.files)
            summary.byFile.push_back(std::move(f));
    // Largest first; ties in name order, so the order is the same every time.
    std::stable_sort(summary.byDType.begin(), summary.byDType.end(),
                     [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
    std::stable_sort(summary.byStorage.begin(), summary.byStorage.end(),
                     [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
    std::stable_sort(summary.byFile.begin(), summary.byFile.end(),
                     [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
    return summary;
}
