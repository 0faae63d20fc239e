#include "formats/row_runs.h"

#include <algorithm>
#include <functional>

#include "sources/copy_steps.h"
#include "sources/mapping.h"
#include "tensordict/error.h"
#include "tensordict/keys.h"
#include "tree/node_builder.h"

namespace tensordict {
namespace {

// A copy of a subtree read from another store (a non-tensor, an error).
std::unique_ptr<Node> deepCopy(const Node& from) {
    auto copy = NodeBuilder::shallowCopy(from);
    for (const Node* child : from.children())
        NodeBuilder(*copy).append(deepCopy(*child));
    return copy;
}

std::string pathText(const std::vector<std::string>& path) {
    return path.empty() ? "the root" : "\"" + formatKeyPath(path) + "\"";
}

}  // namespace

std::unique_ptr<Node> RowRunStore::gatherTree(const std::shared_ptr<const Store>& self,
                                              const std::vector<TensorDict>& trees,
                                              const std::vector<std::string>& names,
                                              const std::vector<RowRange>& ranges) const {
    for (const TensorDict& tree : trees)
        keep(tree);
    // The rows a node of each tree has: its first batch dimension.
    const auto rowsOf = [](const Node& node) -> std::int64_t {
        if (node.isTensor())
            return node.leaf().shape.empty() ? -1 : node.leaf().shape[0];
        return node.batchSize().empty() ? -1 : node.batchSize()[0];
    };
    const std::function<std::unique_ptr<Node>(const std::vector<const Node*>&,
                                              const std::vector<std::string>&)>
        build = [&](const std::vector<const Node*>& nodes,
                    const std::vector<std::string>& path) -> std::unique_ptr<Node> {
        const Node& first = *nodes[0];
        const std::string key = path.empty() ? std::string() : path.back();
        if (first.isError())
            return deepCopy(first);
        for (std::size_t i = 1; i < nodes.size(); ++i) {
            if (!nodes[i])
                return NodeBuilder::error(
                    key, {ErrorKind::Corrupt, names[i],
                          pathText(path) + " is in " + names[0] + " but not here"});
            if (nodes[i]->isError())  // a part that could not be read: its own failure
                return deepCopy(*nodes[i]);
            if (nodes[i]->kind() != first.kind())
                return NodeBuilder::error(
                    key, {ErrorKind::Corrupt, names[i],
                          pathText(path) + " is not of the kind it is in " + names[0]});
        }
        if (first.isNonTensor())
            return deepCopy(first);
        // Rows of each range, in order.
        std::vector<RowRun> runs;
        std::int64_t rows = 0;
        for (const RowRange& r : ranges) {
            const Node& node = *nodes[r.tree];
            const std::int64_t available = rowsOf(node);
            if (available < 0)
                return NodeBuilder::error(
                    key, {ErrorKind::Unsupported, names[r.tree],
                          pathText(path) + " has no first dimension to gather rows along"});
            const std::int64_t count = r.count < 0 ? available - r.first : r.count;
            runs.push_back({&node, r.first, count});
            rows += count;
        }
        if (first.isTensor()) {
            try {
                return rowLeaf(self, key, formatKeyPath(path), runs);
            } catch (const Error& e) {
                return NodeBuilder::error(key, e.failure());
            }
        }
        auto node = NodeBuilder::shallowCopy(first);
        NodeBuilder b(*node);
        std::vector<std::int64_t> batch = first.batchSize();
        batch[0] = rows;
        b.setBatchSize(std::move(batch));
        b.setStore(self);
        for (const Node* child : first.children()) {
            std::vector<const Node*> matching;
            for (const Node* n : nodes)
                matching.push_back(n->child(child->key()));
            std::vector<std::string> childPath = path;
            childPath.push_back(child->key());
            b.append(build(matching, childPath));
        }
        // Keys the first tree does not have.
        for (std::size_t i = 1; i < nodes.size(); ++i)
            for (const Node* child : nodes[i]->children())
                if (!first.child(child->key()) && !b.child(child->key())) {
                    std::vector<std::string> childPath = path;
                    childPath.push_back(child->key());
                    b.append(NodeBuilder::error(
                        child->key(), {ErrorKind::Corrupt, names[i],
                                       pathText(childPath) + " is here but not in " + names[0]}));
                }
        return node;
    };
    std::vector<const Node*> roots;
    for (const TensorDict& tree : trees)
        roots.push_back(&tree.root());
    return build(roots, {});
}

std::string RowRunStore::describe(const std::string& rel) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return gathered_.count(rel) ? location() + ":" + rel : FolderContainer::describe(rel);
}

std::optional<StorageInfo> RowRunStore::stat(const std::string& rel) const {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (const auto it = gathered_.find(rel); it != gathered_.end()) {
            StorageInfo s;
            s.kind = StorageKind::Chunks;
            s.path = rel;
            s.size = s.storedSize = it->second->size;
            return s;
        }
    }
    return FolderContainer::stat(rel);
}

void RowRunStore::keep(TensorDict tree) const {
    std::lock_guard<std::mutex> lock(mutex_);
    kept_.push_back(std::move(tree));
}

std::unique_ptr<Node> RowRunStore::rowLeaf(const std::shared_ptr<const Store>& self,
                                           const std::string& key, const std::string& rel,
                                           std::vector<RowRun> runs) const {
    if (runs.empty())
        throw Error::invalid(describe(rel), "a leaf of no rows' runs");
    const TensorLeaf& model = runs.front().leaf->leaf();
    if (model.shape.empty())
        throw Error::corrupt(runs.front().leaf->fileName(),
                             "a tensor of no dimension has no rows to gather");
    const std::vector<std::int64_t> rowShape(model.shape.begin() + 1, model.shape.end());
    const auto tooLarge = [&] {
        return Error::corrupt(runs.front().leaf->fileName(),
                              "a shape of " + formatShape(model.shape) + " is past any size");
    };
    std::int64_t rowElements = 1;
    for (const std::int64_t d : rowShape)
        if (__builtin_mul_overflow(rowElements, d, &rowElements))
            throw tooLarge();
    std::int64_t rowBytes = 0;
    if (__builtin_mul_overflow(rowElements, std::int64_t(itemSize(model.dtype)), &rowBytes))
        throw tooLarge();
    std::int64_t rows = 0;
    for (const RowRun& run : runs) {
        const TensorLeaf& l = run.leaf->leaf();
        const std::vector<std::int64_t> shape(l.shape.begin() + (l.shape.empty() ? 0 : 1),
                                              l.shape.end());
        if (l.dtype != model.dtype || l.shape.empty() || shape != rowShape || l.isNested)
            throw Error::corrupt(run.leaf->fileName(),
                                 "a " + std::string(dtypeName(l.dtype)) + " tensor of shape " +
                                     formatShape(l.shape) + " cannot be gathered with a " +
                                     std::string(dtypeName(model.dtype)) + " tensor of shape " +
                                     formatShape(model.shape));
        if (run.first < 0 || run.count < 0 || run.first > l.shape[0] ||
            run.count > l.shape[0] - run.first)
            throw Error::corrupt(run.leaf->fileName(),
                                 "rows " + std::to_string(run.first) + " to " +
                                     std::to_string(run.first + run.count) + " are past its " +
                                     std::to_string(l.shape[0]) + " rows");
        rows += run.count;  // each at most its leaf's rows: no overflow
    }
    std::int64_t size = 0, numel = 0;
    if (__builtin_mul_overflow(rows, rowBytes, &size) ||
        __builtin_mul_overflow(rows, rowElements, &numel))
        throw tooLarge();

    auto g = std::make_shared<Gathered>();
    g->rowBytes = std::uint64_t(rowBytes);
    g->size = std::uint64_t(size);
    g->runs = std::move(runs);

    auto node = NodeBuilder::create(NodeKind::Tensor, key);
    NodeBuilder b(*node);
    b.setStore(self);
    TensorLeaf& l = b.leaf();
    l.dtype = model.dtype;
    l.shape = rowShape;
    l.shape.insert(l.shape.begin(), rows);
    l.numel = numel;
    l.nbytes = g->size;
    l.storage.kind = StorageKind::Chunks;
    l.storage.path = rel;
    l.storage.size = l.storage.storedSize = g->size;
    std::lock_guard<std::mutex> lock(mutex_);
    if (!gathered_.emplace(rel, std::move(g)).second)
        throw Error::invalid(location() + ":" + rel, "two leaves would be stored as one");
    return node;
}

std::shared_ptr<const RowRunStore::Gathered> RowRunStore::gatheredOf(
    const StorageInfo& info) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = gathered_.find(info.path);
    if (it == gathered_.end())
        throw Error::notFound(location() + ":" + info.path, "not a leaf of this store");
    return it->second;
}

void RowRunStore::gather(const Gathered& g, std::uint64_t offset, std::byte* out,
                         std::size_t n) const {
    if (offset > g.size || n > g.size - offset)
        throw Error::invalid(location(), "bytes " + std::to_string(offset) + " to " +
                                             std::to_string(offset + n) + " are past the leaf's " +
                                             std::to_string(g.size));
    std::uint64_t start = 0;  // where the run's rows start in the gathered leaf
    for (const RowRun& run : g.runs) {
        const std::uint64_t length = std::uint64_t(run.count) * g.rowBytes;
        const std::uint64_t from = std::max(offset, start);
        const std::uint64_t to = std::min<std::uint64_t>(offset + n, start + length);
        if (from < to)
            run.leaf->readInto(std::uint64_t(run.first) * g.rowBytes + (from - start),
                               out + (from - offset), static_cast<std::size_t>(to - from));
        start += length;
    }
}

LeafBytes RowRunStore::leafBytes(const StorageInfo& info, std::uint64_t nbytes,
                                 std::size_t alignment) const {
    const auto held = gatheredOf(info);
    const Gathered& g = *held;
    // One run from the first row: the leaf's own bytes, mapped where it maps.
    if (g.runs.size() == 1 && g.runs[0].first == 0) {
        LeafBytes whole = g.runs[0].leaf->bytes();
        // The run's rows only: the leaf goes on past them (rows not valid).
        if (whole.size >= nbytes &&
            reinterpret_cast<std::uintptr_t>(whole.data.get()) % alignment == 0)
            return {whole.data, static_cast<std::size_t>(std::min<std::uint64_t>(nbytes, g.size))};
    }
    LeafBytes out = allocateOwnedBuffer(static_cast<std::size_t>(nbytes));
    gather(g, 0, out.data.get(), static_cast<std::size_t>(std::min(nbytes, g.size)));
    return out;
}

bool RowRunStore::readsInPlace(const StorageInfo& info) const {
    const auto held = gatheredOf(info);
    const Gathered& g = *held;
    if (g.runs.size() != 1 || g.runs[0].first != 0)
        return false;
    const StorageKind kind = g.runs[0].leaf->leaf().storage.kind;
    return (kind == StorageKind::File || kind == StorageKind::StoredEntry) &&
           !g.runs[0].leaf->hasRandomAccess();
}

LeafBytes RowRunStore::leafBytesRange(const StorageInfo& info, std::uint64_t offset,
                                      std::uint64_t length, std::size_t) const {
    LeafBytes out = allocateOwnedBuffer(static_cast<std::size_t>(length));
    gather(*gatheredOf(info), offset, out.data.get(), static_cast<std::size_t>(length));
    return out;
}

void RowRunStore::readLeafRange(const StorageInfo& info, std::uint64_t offset, std::byte* out,
                                std::size_t n) const {
    gather(*gatheredOf(info), offset, out, n);
}

bool RowRunStore::copyLeafRangeTo(const StorageInfo& info, std::uint64_t offset, std::size_t n,
                                  int fd, std::uint64_t at) const {
    const auto held = gatheredOf(info);
    const Gathered& g = *held;
    if (offset > g.size || n > g.size - offset)
        return false;
    std::uint64_t start = 0;
    bool wroteAny = false;
    for (const RowRun& run : g.runs) {
        const std::uint64_t runStart = start;
        start += std::uint64_t(run.count) * g.rowBytes;
        const std::uint64_t from = std::max(offset, runStart);
        const std::uint64_t to = std::min<std::uint64_t>(offset + n, start);
        if (from >= to)
            continue;
        const std::uint64_t source = std::uint64_t(run.first) * g.rowBytes + (from - runStart);
        const auto bytes = static_cast<std::size_t>(to - from);
        const std::uint64_t place = at + (from - offset);
        if (run.leaf->copyInto(source, bytes, fd, place)) {
            wroteAny = true;
            continue;
        }
        if (!wroteAny)
            return false;  // nothing written: the caller reads and writes
        // A later run that cannot be copied in the kernel: read and written here.
        std::vector<std::byte> buffer;
        const Node& leaf = *run.leaf;
        copyInSteps([&leaf](std::uint64_t from, std::byte* out,
                            std::size_t count) { leaf.readInto(from, out, count); },
                    source, bytes, fd, place, buffer, describe(info.path), kAnySourceCopyStep);
    }
    return true;
}

Value::List RowRunStore::leafParts(const StorageInfo& info) const {
    const auto held = gatheredOf(info);
    const Gathered& g = *held;
    Value::List parts;
    std::int64_t row = 0;
    for (const RowRun& run : g.runs) {
        const TensorLeaf& l = run.leaf->leaf();
        Value::List offsets{Value(row)}, sizes{Value(run.count)};
        for (std::size_t d = 1; d < l.shape.size(); ++d) {
            offsets.push_back(Value(std::int64_t(0)));
            sizes.push_back(Value(l.shape[d]));
        }
        const std::uint64_t offset = l.storage.offset + std::uint64_t(run.first) * g.rowBytes;
        // Named within the store's folder, as parts are.
        std::string file = run.leaf->fileName();
        if (file.compare(0, location().size() + 1, location() + "/") == 0)
            file.erase(0, location().size() + 1);
        parts.push_back(Value(Value::Object{
            {"file", Value(file)},
            {"offset", Value(static_cast<std::int64_t>(offset))},
            {"length", Value(static_cast<std::int64_t>(std::uint64_t(run.count) * g.rowBytes))},
            {"offsets", Value(std::move(offsets))},
            {"sizes", Value(std::move(sizes))},
        }));
        row += run.count;
    }
    return parts;
}

}  // namespace tensordict
