// Hugging Face safetensors (core/FORMAT.md 14): an 8-byte little-endian
// header size, a JSON header naming each tensor's dtype, shape and
// data_offsets (relative to the data after the header), then the data. The
// header is checked before any tensor is shown: in bounds, no overlaps, and
// each tensor's bytes exactly its dtype x shape.

#include <algorithm>

#include "../node_builder.h"
#include "file_stores.h"
#include "safetensors.h"
#include "tensordict/error.h"

namespace tensordict {
namespace {

constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;  // as the safetensors library refuses

std::uint64_t wholeNumber(const Value& v, const std::string& where, const std::string& what) {
    if (!v.isInt() || v.asInt() < 0)
        throw Error::corrupt(where, what + " is not a non-negative integer");
    return static_cast<std::uint64_t>(v.asInt());
}

class SafetensorsStore final : public SingleFileStore {
public:
    explicit SafetensorsStore(std::shared_ptr<const ByteSource> source)
        : SingleFileStore(std::move(source), "safetensors") {}

    std::string dtypeNameInFile(DType dtype) const override {
        const std::optional<std::string_view> name = safetensorsName(dtype);
        return name ? std::string(*name) : Store::dtypeNameInFile(dtype);
    }

    std::unique_ptr<Node> buildTree(const std::shared_ptr<const Store>& self) const override {
        const std::string& where = location();
        const std::uint64_t headerSize = littleEndianU64(readRange(0, 8, "the header size"));
        if (headerSize > kMaxHeaderBytes)
            throw Error::corrupt(where, "the safetensors header is " + std::to_string(headerSize) +
                                            " bytes, over the limit of 100 MB");
        const Value header = parseJson(readRange(8, headerSize, "the header"), where);
        if (!header.isObject())
            throw Error::corrupt(where, "the safetensors header is not a JSON object");
        const std::uint64_t dataStart = 8 + headerSize;
        const std::uint64_t dataSize = source().size() - dataStart;

        auto root = NodeBuilder::create(NodeKind::Container, "");
        NodeBuilder(*root).setClass("dict", {});
        NodeBuilder(*root).setStore(self);
        struct Span {
            std::uint64_t begin, end;
            std::string key;
        };
        std::vector<Span> spans;
        for (const auto& [key, entry] : header.asObject()) {
            if (key == "__metadata__") {
                if (!entry.isObject())
                    throw Error::corrupt(where, "__metadata__ is not a JSON object");
                NodeBuilder(*root).collection().attributes = entry.asObject();
                continue;
            }
            const std::string at = where + ": tensor \"" + key + "\"";
            if (!entry.isObject())
                throw Error::corrupt(at, "its header entry is not an object");
            const Value* dtype = entry.find("dtype");
            const Value* shape = entry.find("shape");
            const Value* offsets = entry.find("data_offsets");
            if (!dtype || !dtype->isString() || !shape || !shape->isList() || !offsets ||
                !offsets->isList() || offsets->asList().size() != 2)
                throw Error::corrupt(at, "needs dtype, shape and data_offsets [begin, end]");
            const std::optional<DType> type = safetensorsDType(dtype->asString());
            if (!type)
                throw Error::unsupported(at, "unsupported dtype \"" + dtype->asString() + "\"");
            std::vector<std::int64_t> dims;
            std::uint64_t numel = 1;
            for (const Value& d : shape->asList()) {
                const std::uint64_t n = wholeNumber(d, at, "a dimension");
                if (n && numel > (std::uint64_t(1) << 60) / n)
                    throw Error::corrupt(at, "its size overflows");
                numel *= n;
                dims.push_back(static_cast<std::int64_t>(n));
            }
            const std::uint64_t begin = wholeNumber(offsets->asList()[0], at, "data_offsets");
            const std::uint64_t end = wholeNumber(offsets->asList()[1], at, "data_offsets");
            if (begin > end || end > dataSize)
                throw Error::corrupt(at, "data_offsets [" + std::to_string(begin) + ", " +
                                             std::to_string(end) + "] are outside the " +
                                             std::to_string(dataSize) + " bytes of data");
            if (end - begin != numel * itemSize(*type))
                throw Error::corrupt(at, "data_offsets span " + std::to_string(end - begin) +
                                             " bytes, but " + dtype->asString() + " x " +
                                             std::to_string(numel) + " elements need " +
                                             std::to_string(numel * itemSize(*type)));
            spans.push_back({begin, end, key});

            auto n = NodeBuilder::create(NodeKind::Tensor, key);
            NodeBuilder b(*n);
            TensorLeaf& leaf = b.leaf();
            leaf.dtype = *type;
            leaf.shape = std::move(dims);
            leaf.numel = static_cast<std::int64_t>(numel);
            leaf.nbytes = end - begin;
            if (numel) {
                leaf.storage = fileInfo();
                leaf.storage.offset = dataStart + begin;
            }
            b.setStore(self);
            NodeBuilder(*root).put(std::move(n));
        }
        std::sort(spans.begin(), spans.end(),
                  [](const Span& a, const Span& b) { return a.begin < b.begin; });
        for (std::size_t i = 1; i < spans.size(); ++i)
            if (spans[i].begin < spans[i - 1].end)
                throw Error::corrupt(where, "tensors \"" + spans[i - 1].key + "\" and \"" +
                                                spans[i].key + "\" overlap in the data");
        return root;
    }
};

class SafetensorsFormat final : public StoreFormat {
public:
    std::string_view name() const override { return "safetensors"; }
    int score(const StoreProbe& probe) const override {
        // A header that lies about its size is then refused with a reason.
        return probe.source && probe.head.size() >= 9 && probe.head[8] == '{' ? 55 : 0;
    }
    std::shared_ptr<const Store> open(const StoreProbe& probe, const StoreOptions&) const override {
        return std::make_shared<SafetensorsStore>(probe.source);
    }
};

}  // namespace

std::shared_ptr<const StoreFormat> safetensorsFormat() {
    return std::make_shared<SafetensorsFormat>();
}

}  // namespace tensordict
