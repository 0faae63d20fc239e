// tensordict's consolidated files (core/FORMAT.md 15), as tensordict 0.14's
// TensorDictBase.consolidate(filename=...) writes them (tensordict/base.py,
// _reduce_vals_and_metadata and consolidate) and from_consolidated and
// _reductions._rebuild_tensordict_files_consolidated read them:
//
//   [leaf bytes, each padded to 8 when dtypes are mixed][metadata JSON][int64 LE: its length]
//
// There is no magic number: the trailer is the only sign, read only once no
// format recognised the file's head (StoreProbe::mayReadBeyondHead).

#include <algorithm>

#include "formats/consolidated.h"
#include "formats/file_stores.h"
#include "tensordict/error.h"
#include "tree/node_builder.h"

namespace tensordict {
namespace {

constexpr int kMaxDepth = 256;
constexpr std::uint64_t kMaxMetadataBytes = 256u << 20;

std::int64_t wholeNumber(const Value* v, const std::string& where, const std::string& what) {
    if (!v || !v->isInt() || v->asInt() < 0)
        throw Error::corrupt(where, what + " is not a non-negative integer");
    return v->asInt();
}

std::vector<std::int64_t> dims(const Value* v, const std::string& where, const std::string& what) {
    if (!v || !v->isList())
        throw Error::corrupt(where, what + " is not a list of sizes");
    std::vector<std::int64_t> out;
    for (const Value& d : v->asList())
        out.push_back(wholeNumber(&d, where, what));
    return out;
}

class Builder {
public:
    Builder(const StorageInfo& storage, std::uint64_t storageBytes,
            const std::shared_ptr<const Store>& store, std::string where)
        : storage_(storage), bytes_(storageBytes), store_(store), where_(std::move(where)) {}

    std::unique_ptr<Node> collection(const Value& meta, const std::string& key,
                                     const std::string& at, int depth) {
        if (depth > kMaxDepth)
            throw Error::corrupt(
                where_, "the metadata nests more than " + std::to_string(kMaxDepth) + " levels");
        if (!meta.isObject())
            throw Error::corrupt(at, "its metadata is not a JSON object");
        const Value* cls = meta.find("cls");
        const Value* leaves = meta.find("leaves");
        const Value* nonTensors = meta.find("non_tensors");
        const Value* clsMetadata = meta.find("cls_metadata");
        if (!cls || !cls->isString() || !leaves || !leaves->isObject() || !nonTensors ||
            !nonTensors->isObject() || !clsMetadata || !clsMetadata->isObject())
            throw Error::corrupt(at,
                                 "its metadata needs cls, leaves, non_tensors and "
                                 "cls_metadata");
        auto n = NodeBuilder::create(NodeKind::TensorDict, key);
        NodeBuilder b(*n);
        const std::string& name = cls->asString();
        b.setClass(name, name == "TensorDict" ? "<class 'tensordict._td.TensorDict'>" : "");
        b.setStore(store_);
        std::vector<std::int64_t> batch;
        if (const Value* size = clsMetadata->find("batch_size"); size && size->isList())
            batch = dims(size, at, "cls_metadata's batch_size");
        b.setBatchSize(batch);
        if (const Value* device = clsMetadata->find("device"); device && device->isString())
            b.setDevice(device->asString());

        // In the order Python rebuilds them: non-tensors, leaves, then nested
        // collections. A part that lies is an error node; the rest opens.
        // "file.td: next/reward", as the other formats name a part.
        const std::string inside = at == where_ ? where_ + ": " : at + "/";
        const auto part = [&](const std::string& k, const auto& make) {
            try {
                b.put(make());
            } catch (const Error& e) {
                b.put(NodeBuilder::error(k, e.failure()));
            }
        };
        // (Members by name, not structured bindings: lambdas may not capture those in C++17.)
        for (const auto& member : nonTensors->asObject()) {
            const std::string& k = member.first;
            part(k, [&] { return nonTensor(member.second, k, inside + k, batch); });
        }
        for (const auto& member : leaves->asObject()) {
            const std::string& k = member.first;
            part(k, [&] { return leaf(member.second, k, inside + k); });
        }
        for (const auto& member : meta.asObject()) {
            const std::string& k = member.first;
            if (k == "cls" || k == "leaves" || k == "non_tensors" || k == "cls_metadata" ||
                k == "size" || k.rfind("njt_", 0) == 0)
                continue;
            part(k, [&] { return collection(member.second, k, inside + k, depth + 1); });
        }
        return n;
    }

private:
    std::unique_ptr<Node> nonTensor(const Value& v, const std::string& key, const std::string& at,
                                    const std::vector<std::int64_t>& parentBatch) {
        // (data, batch_size, device); 0.14 and earlier wrote (data, batch_size).
        if (!v.isList() || v.asList().size() < 2)
            throw Error::corrupt(at, "a non-tensor is not [data, batch_size, device]");
        auto n = NodeBuilder::create(NodeKind::NonTensorData, key);
        NodeBuilder b(*n);
        b.setClass("NonTensorData", "<class 'tensordict.tensorclass.NonTensorData'>");
        b.setValue(v.asList()[0]);
        b.setBatchSize(v.asList()[1].isList() ? dims(&v.asList()[1], at, "its batch_size")
                                              : parentBatch);
        b.setStore(store_);
        return n;
    }

    std::unique_ptr<Node> leaf(const Value& v, const std::string& key, const std::string& at) {
        // (dtype, shape, start, stop, pad[, ragged_idx]): the bytes are
        // storage[start:stop], of which the first numel x itemsize are the leaf.
        if (!v.isList() || v.asList().size() < 5 || !v.asList()[0].isString())
            throw Error::corrupt(at, "a leaf is not [dtype, shape, start, stop, pad]");
        const Value::List& f = v.asList();
        if (key.rfind("<NJT", 0) == 0)
            throw Error::unsupported(at,
                                     "a nested (jagged) tensor, which tdstudio does not "
                                     "read from a consolidated tensordict");
        const std::optional<DType> dtype = dtypeFromString(f[0].asString());
        if (!dtype)
            throw Error::unsupported(at, "unknown dtype \"" + f[0].asString() + "\"");
        std::vector<std::int64_t> shape = dims(&f[1], at, "its shape");
        const auto start = static_cast<std::uint64_t>(wholeNumber(&f[2], at, "its start"));
        const auto stop = static_cast<std::uint64_t>(wholeNumber(&f[3], at, "its stop"));
        std::uint64_t numel = 1;
        for (const std::int64_t d : shape)
            if (d && __builtin_mul_overflow(numel, std::uint64_t(d), &numel))
                throw Error::corrupt(at, "its shape overflows");
        for (const std::int64_t d : shape)
            if (!d)
                numel = 0;
        std::uint64_t nbytes = 0;
        if (__builtin_mul_overflow(numel, itemSize(*dtype), &nbytes))
            throw Error::corrupt(at, "its shape overflows");
        if (start > stop || stop > bytes_)
            throw Error::corrupt(at, "its bytes [" + std::to_string(start) + ", " +
                                         std::to_string(stop) + ") are outside the storage of " +
                                         std::to_string(bytes_) + " bytes");
        if (stop - start < nbytes)
            throw Error::corrupt(
                at, "its bytes [" + std::to_string(start) + ", " + std::to_string(stop) +
                        ") hold " + std::to_string(stop - start) + ", but " + f[0].asString() +
                        " x " + std::to_string(numel) + " elements need " + std::to_string(nbytes));
        auto n = NodeBuilder::create(NodeKind::Tensor, key);
        NodeBuilder b(*n);
        TensorLeaf& l = b.leaf();
        l.dtype = *dtype;
        l.shape = std::move(shape);
        l.numel = static_cast<std::int64_t>(numel);
        l.nbytes = nbytes;
        if (numel) {
            l.storage = storage_;
            l.storage.offset += start;
        }
        b.setStore(store_);
        return n;
    }

    const StorageInfo& storage_;
    std::uint64_t bytes_;
    const std::shared_ptr<const Store>& store_;
    std::string where_;
};

class ConsolidatedStore final : public SingleFileStore {
public:
    explicit ConsolidatedStore(std::shared_ptr<const ByteSource> source)
        : SingleFileStore(std::move(source), "consolidated") {}

    std::unique_ptr<Node> buildTree(const std::shared_ptr<const Store>& self) const override {
        const std::string& where = file().location();
        const std::uint64_t size = file().source().size();
        if (size < 8)
            throw Error::corrupt(where, "too short for a consolidated tensordict's trailer");
        const std::uint64_t length =
            littleEndianU64(file().readRange(size - 8, 8, "the metadata length"));
        if (length > size - 8 || length > kMaxMetadataBytes)
            throw Error::corrupt(where, "the trailer gives " + std::to_string(length) +
                                            " bytes of metadata, more than the file holds");
        const std::uint64_t storageBytes = size - 8 - length;
        const Value metadata = parseJson(file().readRange(storageBytes, length, "the metadata"),
                                         where + " (metadata)");
        StorageInfo storage = file().fileInfo();
        auto root = Builder(storage, storageBytes, self, where).collection(metadata, "", where, 0);
        return root;
    }
};

class ConsolidatedFormat final : public StoreFormat {
public:
    std::string_view name() const override { return "consolidated"; }
    int score(const StoreProbe& probe) const override {
        // No magic number: the trailer must give a length that fits, before a
        // JSON object that ends where the trailer starts. Zip and NumPy files,
        // which their magic claims, are not read here; any other format that
        // recognises the file scores higher.
        if (!probe.source || probe.head.size() < 2 || !probe.mayReadBeyondHead)
            return 0;
        const std::string& h = probe.head;
        if (h.compare(0, 4, "PK\x03\x04") == 0 || h.compare(0, 6, "\x93NUMPY") == 0)
            return 0;
        const std::uint64_t size = probe.source->size();
        if (size < 8 + 2)
            return 0;
        try {
            std::string tail(8, '\0');
            probe.source->readAt(size - 8, tail.data(), 8);
            const std::uint64_t length = littleEndianU64(tail);
            if (length < 2 || length > size - 8 || length > kMaxMetadataBytes)
                return 0;
            char first = 0, last = 0;
            probe.source->readAt(size - 8 - length, &first, 1);
            probe.source->readAt(size - 9, &last, 1);
            return first == '{' && last == '}' ? 30 : 0;
        } catch (const Error&) {
            return 0;
        }
    }
    std::shared_ptr<const Store> open(const StoreProbe& probe, const StoreOptions&) const override {
        return std::make_shared<ConsolidatedStore>(probe.source);
    }
};

}  // namespace

std::unique_ptr<Node> buildConsolidatedTree(const Value& metadata, const std::string& key,
                                            const StorageInfo& storage, std::uint64_t storageBytes,
                                            const std::shared_ptr<const Store>& store,
                                            const std::string& where) {
    return Builder(storage, storageBytes, store, where).collection(metadata, key, where, 0);
}

std::shared_ptr<const StoreFormat> consolidatedFormat() {
    return std::make_shared<ConsolidatedFormat>();
}

}  // namespace tensordict
