// Hugging Face safetensors (core/FORMAT.md 14): an 8-byte little-endian
// header size, a JSON header naming each tensor's dtype, shape and
// data_offsets (relative to the data after the header), then the data. The
// header is checked before any tensor is shown: in bounds, no overlaps, and
// each tensor's bytes exactly its dtype x shape. Packed sub-byte tensors
// (F4, F6_*) are unpacked, one code a byte, as they are read.

#include <algorithm>
#include <cstring>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "sources/mapping.h"
#include "values/json_members.h"
#include "values/plain_json.h"

#include "formats/file_stores.h"
#include "formats/safetensors.h"
#include "tensordict/error.h"
#include "tree/node_builder.h"

namespace tensordict {
namespace {

constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;  // as the safetensors library refuses

// `where()` names the value's place, made only for the error.
template <class Where>
std::uint64_t wholeNumber(const Value& v, const Where& where, const char* what) {
    if (!v.isInt() || v.asInt() < 0)
        throw Error::corrupt(where(), std::string(what) + " is not a non-negative integer");
    return static_cast<std::uint64_t>(v.asInt());
}

// A tensor's header entry, checked: in bounds of the data, and exactly
// its dtype x shape.
struct TensorEntry {
    DType dtype;
    std::vector<std::int64_t> shape;
    std::uint64_t numel, begin, end;
};

// A tensor's place in the header, made only to refuse it.
struct EntryPlace {
    const std::string& where;
    const std::string& name;
    std::string operator()() const { return where + ": tensor \"" + name + "\""; }
};

// The checks of an entry, in the order the header's fields are read: its
// dtype, each dimension as it comes, then its data_offsets.
TensorEntry startEntry(std::string_view dtypeName, const EntryPlace& at) {
    const std::optional<DType> type = safetensorsDType(dtypeName);
    if (!type)
        throw Error::unsupported(at(), "unsupported dtype \"" + std::string(dtypeName) + "\"");
    return TensorEntry{*type, {}, 1, 0, 0};
}

void addDimension(TensorEntry& t, std::uint64_t n, const EntryPlace& at) {
    if (n && t.numel > (std::uint64_t(1) << 60) / n)
        throw Error::corrupt(at(), "its size overflows");
    t.numel *= n;
    t.shape.push_back(static_cast<std::int64_t>(n));
}

TensorEntry finishEntry(TensorEntry t, std::string_view dtypeName, std::uint64_t begin,
                        std::uint64_t end, std::uint64_t dataSize, const EntryPlace& at) {
    t.begin = begin;
    t.end = end;
    if (t.begin > t.end || t.end > dataSize)
        throw Error::corrupt(at(), "data_offsets [" + std::to_string(t.begin) + ", " +
                                       std::to_string(t.end) + "] are outside the " +
                                       std::to_string(dataSize) + " bytes of data");
    // Packed dtypes take numel x bits / 8 bytes, in whole bytes (the
    // library's MisalignedSlice otherwise).
    const int bits = dtypeInfo(t.dtype).packedBits;
    if (bits && t.numel * std::uint64_t(bits) % 8 != 0)
        throw Error::corrupt(at(), std::to_string(t.numel) + " elements of " +
                                       std::string(dtypeName) + " do not fill whole bytes (" +
                                       std::to_string(bits) + " bits each)");
    const std::uint64_t need =
        bits ? t.numel * std::uint64_t(bits) / 8 : t.numel * itemSize(t.dtype);
    if (t.end - t.begin != need)
        throw Error::corrupt(at(), "data_offsets span " + std::to_string(t.end - t.begin) +
                                       " bytes, but " + std::string(dtypeName) + " x " +
                                       std::to_string(t.numel) + " elements need " +
                                       std::to_string(need));
    return t;
}

// An entry as the general JSON reader gives it: any JSON at all.
TensorEntry tensorEntry(const std::string& name, const Value& entry, std::uint64_t dataSize,
                        const std::string& where) {
    const EntryPlace at{where, name};
    if (!entry.isObject())
        throw Error::corrupt(at(), "its header entry is not an object");
    // The library refuses a field given twice (serde's "duplicate field").
    std::unordered_set<std::string_view> fields;
    for (const auto& field : entry.asObject())
        if (!fields.insert(field.first).second)
            throw Error::corrupt(at(), "its header entry gives \"" + field.first + "\" twice");
    const Value* dtype = entry.find("dtype");
    const Value* shape = entry.find("shape");
    const Value* offsets = entry.find("data_offsets");
    if (!dtype || !dtype->isString() || !shape || !shape->isList() || !offsets ||
        !offsets->isList() || offsets->asList().size() != 2)
        throw Error::corrupt(at(), "needs dtype, shape and data_offsets [begin, end]");
    TensorEntry t = startEntry(dtype->asString(), at);
    t.shape.reserve(shape->asList().size());
    for (const Value& d : shape->asList())
        addDimension(t, wholeNumber(d, at, "a dimension"), at);
    const std::uint64_t begin = wholeNumber(offsets->asList()[0], at, "data_offsets");
    const std::uint64_t end = wholeNumber(offsets->asList()[1], at, "data_offsets");
    return finishEntry(std::move(t), dtype->asString(), begin, end, dataSize, at);
}

// A list of whole numbers, each handed to `add` (false: no more fit), in a
// plain text; false, the list partly read, when it is anything else.
template <class Add>
bool readWholeNumbers(PlainJsonReader& json, Add&& add) {
    if (!json.take('['))
        return false;
    if (json.take(']'))
        return true;
    do {
        const char c = json.peek();
        if (c < '0' || c > '9' || !add(static_cast<std::uint64_t>(json.integer())))
            return false;
    } while (json.take(','));
    return json.take(']');
}

// An entry of a plain header read as it stands, with no Value made: an
// object of dtype (a string), shape (whole numbers) and data_offsets (two
// whole numbers), once each, in any order, as every writer writes it.
// nullopt, the reader back where it was, for any other entry: the general
// reading above then reads it, or refuses it, as it would in any header.
std::optional<TensorEntry> plainTensorEntry(const std::string& name, PlainJsonReader& json,
                                            std::uint64_t dataSize, const std::string& where) {
    const char* const start = json.position();
    std::string_view dtype;
    std::vector<std::uint64_t> shape;
    std::uint64_t offsets[2] = {0, 0};
    enum : unsigned { kDtype = 1, kShape = 2, kOffsets = 4, kAll = 7, kOther = 8 };
    unsigned seen = 0;
    const auto field = [&](const std::string& key) -> unsigned {
        if (key == "dtype" && !(seen & kDtype) && json.peek() == '"') {
            dtype = json.string();
            return kDtype;
        }
        if (key == "shape" && !(seen & kShape))
            return readWholeNumbers(json, [&](std::uint64_t n) { return shape.push_back(n), true; })
                       ? kShape
                       : kOther;
        std::size_t count = 0;
        if (key == "data_offsets" && !(seen & kOffsets))
            return readWholeNumbers(json,
                                    [&](std::uint64_t n) {
                                        return count < 2 && (offsets[count++] = n, true);
                                    }) &&
                           count == 2
                       ? kOffsets
                       : kOther;
        return kOther;
    };
    const bool isObject = json.members([&](std::string key, PlainJsonReader&) {
        const char* const value = json.position();
        const unsigned got = seen & kOther ? kOther : field(key);
        if (got == kOther) {  // read past it whole
            json.rewind(value);
            json.value();
        }
        seen |= got;
    });
    if (!isObject || seen != kAll) {
        json.rewind(start);
        return std::nullopt;
    }
    const EntryPlace at{where, name};
    TensorEntry t = startEntry(dtype, at);
    t.shape.reserve(shape.size());
    for (const std::uint64_t n : shape)
        addDimension(t, n, at);
    return finishEntry(std::move(t), dtype, offsets[0], offsets[1], dataSize, at);
}

// The keys of two members of a header (by their places in it), read again
// to name tensors that overlap: the nodes keep no record of their places.
std::pair<std::string, std::string> memberKeys(const std::string& header, const std::string& where,
                                               std::size_t first, std::size_t second) {
    std::pair<std::string, std::string> keys;
    std::size_t member = 0;
    JsonMembers handlers;
    handlers.member = [&](std::string key, Value) {
        if (member == first)
            keys.first = key;
        if (member == second)
            keys.second = key;
        ++member;
    };
    parseJsonMembers(header, where, handlers);
    return keys;
}

// The codes of elements [first, first + n) of a packed tensor whose file
// bytes start at `packed` (the bytes of whole groups holding those
// elements), one a byte. F4: two a byte, element 0 in the low nibble (as
// torch's float4_e2m1fn_x2). F6: a little-endian bit stream, element i in
// bits [6i, 6i + 6) (FORMAT.md 14.2).
void unpackCodes(int bits, const std::uint8_t* packed, std::uint64_t first, std::size_t n,
                 std::uint8_t* out) {
    const std::uint64_t groupElements = bits == 4 ? 2 : 4;
    const std::uint64_t base = first / groupElements * groupElements;
    for (std::size_t k = 0; k < n; ++k) {
        const std::uint64_t i = first + k - base;  // within the bytes read
        const std::uint64_t bit = i * std::uint64_t(bits);
        const std::uint64_t byte = bit / 8, shift = bit % 8;
        unsigned v = packed[byte] >> shift;
        if (shift + std::uint64_t(bits) > 8)
            v |= unsigned(packed[byte + 1]) << (8 - shift);
        out[k] = static_cast<std::uint8_t>(v & ((1u << bits) - 1));
    }
}

// A packed tensor of a safetensors file, read as its codes one a byte: the
// leaf's bytes are the unpacked codes (numel of them), each range read
// from the packed bytes that hold it. Everything else is the file's.
class PackedCodes final : public Container {
public:
    PackedCodes(std::shared_ptr<const SingleFile> file, std::uint64_t offset, DType dtype,
                std::uint64_t numel)
        : file_(std::move(file)),
          offset_(offset),
          bits_(dtypeInfo(dtype).packedBits),
          numel_(numel) {}

    const std::string& location() const override { return file_->location(); }
    std::string describe(const std::string& rel) const override { return file_->describe(rel); }
    std::optional<StorageInfo> stat(const std::string& rel) const override {
        return file_->stat(rel);
    }
    bool hasDirectory(const std::string& rel) const override { return file_->hasDirectory(rel); }
    std::string read(const std::string& rel, std::uint64_t cap) const override {
        return file_->read(rel, cap);
    }

    LeafBytes leafBytes(const StorageInfo& info, std::uint64_t nbytes,
                        std::size_t alignment) const override {
        return leafBytesRange(info, 0, nbytes, alignment);
    }
    bool readsInPlace(const StorageInfo&) const override { return false; }
    LeafBytes leafBytesRange(const StorageInfo& info, std::uint64_t offset, std::uint64_t length,
                             std::size_t) const override {
        LeafBytes out = allocateOwnedBuffer(length);
        readLeafRange(info, offset, out.data.get(), static_cast<std::size_t>(length));
        return out;
    }
    void readLeafRange(const StorageInfo&, std::uint64_t offset, std::byte* out,
                       std::size_t n) const override {
        if (offset > numel_ || n > numel_ - offset)
            throw Error::invalid(location(), "codes " + std::to_string(offset) + " to " +
                                                 std::to_string(offset + n) + " are past the " +
                                                 std::to_string(numel_) + " of a packed tensor");
        if (n == 0)
            return;
        // Whole groups (F4: 2 codes in 1 byte; F6: 4 codes in 3 bytes).
        const std::uint64_t groupElements = bits_ == 4 ? 2 : 4, groupBytes = bits_ == 4 ? 1 : 3;
        const std::uint64_t firstGroup = offset / groupElements;
        const std::uint64_t endGroup = (offset + n + groupElements - 1) / groupElements;
        std::vector<std::uint8_t> packed(
            static_cast<std::size_t>((endGroup - firstGroup) * groupBytes) + 1, 0);
        file_->source().readOnce(offset_ + firstGroup * groupBytes, packed.data(),
                                 packed.size() - 1);
        unpackCodes(bits_, packed.data(), offset, n, reinterpret_cast<std::uint8_t*>(out));
    }
    // Where the packed bytes start in the file (the leaf's own offset stays 0:
    // its bytes are the codes this container unpacks, not a range of the file).
    std::optional<std::uint64_t> payloadOffset(const StorageInfo&) const override {
        return offset_;
    }

private:
    const std::shared_ptr<const SingleFile> file_;
    const std::uint64_t offset_;
    const int bits_;
    const std::uint64_t numel_;
};

class SafetensorsStore final : public Store {
public:
    // `leaves` reads the leaves when they are not ranges of the file (a
    // packed tensor's codes).
    explicit SafetensorsStore(std::shared_ptr<const SingleFile> file,
                              std::shared_ptr<const Container> leaves = nullptr)
        : Store(leaves ? std::move(leaves) : file), file_(std::move(file)) {}

    std::string_view format() const override { return "safetensors"; }

    std::string dtypeNameInFile(DType dtype) const override {
        const std::optional<std::string_view> name = safetensorsName(dtype);
        return name ? std::string(*name) : Store::dtypeNameInFile(dtype);
    }

    std::unique_ptr<Node> buildTree(const std::shared_ptr<const Store>& self) const override {
        // A packed tensor's store reads its codes, not the file's tensors.
        if (&container() != file_.get())
            return nullptr;
        const std::string& where = file_->location();
        const std::uint64_t headerSize = littleEndianU64(file_->readRange(0, 8, "the header size"));
        if (headerSize > kMaxHeaderBytes)
            throw Error::corrupt(where, "the safetensors header is " + std::to_string(headerSize) +
                                            " bytes, over the limit of 100 MB");
        const std::string header = file_->readRange(8, headerSize, "the header");
        const std::uint64_t dataStart = 8 + headerSize;
        const std::uint64_t dataSize = file_->source().size() - dataStart;

        auto root = NodeBuilder::create(NodeKind::Container, "");
        NodeBuilder(*root).setClass("dict", {});
        NodeBuilder(*root).setStore(self);
        struct Span {
            std::uint64_t begin, end;
            std::size_t member;  // the tensor's place among the header's members
        };
        std::vector<Span> spans;
        const StorageInfo file = file_->fileInfo();
        std::size_t members = 0;
        bool metadataSeen = false;
        const auto addMetadata = [&](Value metadata) {
            // Given once, a map of str to str (or null), or the library
            // refuses the file (serde's duplicate field).
            if (std::exchange(metadataSeen, true))
                throw Error::corrupt(where, "__metadata__ is given twice");
            if (metadata.isNull())
                return;
            if (!metadata.isObject())
                throw Error::corrupt(where, "__metadata__ is not a JSON object");
            for (const auto& [key, value] : metadata.asObject())
                if (!value.isString())
                    throw Error::corrupt(where, "__metadata__'s \"" + key + "\" is not a string");
            NodeBuilder(*root).collection().attributes = std::move(metadata.asObject());
        };
        // A name given twice is the last one's, as the library reads it (its
        // first's bytes are then covered by no tensor).
        std::unordered_map<std::string, std::size_t> spanOfName;
        std::string namedTwice;  // the first such name, to explain a hole
        const auto addTensor = [&](std::string key, TensorEntry t, std::size_t member) {
            const auto [named, added] = spanOfName.emplace(key, spans.size());
            if (added)
                spans.push_back({t.begin, t.end, member});
            else
                spans[named->second] = {t.begin, t.end, member};
            if (!added && namedTwice.empty())
                namedTwice = key;
            auto n = NodeBuilder::create(NodeKind::Tensor, std::move(key));
            NodeBuilder b(*n);
            TensorLeaf& leaf = b.leaf();
            leaf.dtype = t.dtype;
            leaf.shape = std::move(t.shape);
            leaf.numel = static_cast<std::int64_t>(t.numel);
            leaf.nbytes = t.end - t.begin;
            if (t.numel) {
                leaf.storage = file;
                leaf.storage.offset = dataStart + t.begin;
            }
            b.setStore(self);
            if (dtypeInfo(t.dtype).packedBits && t.numel) {
                // One code a byte, read through a store of its own; the
                // packed bytes are what the file stores of it.
                leaf.nbytes = t.numel;
                leaf.storage.offset = 0;
                leaf.storage.storedSize = t.end - t.begin;
                b.setStore(std::make_shared<SafetensorsStore>(
                    file_,
                    std::make_shared<PackedCodes>(file_, dataStart + t.begin, t.dtype, t.numel)));
            }
            NodeBuilder(*root).put(std::move(n));
        };
        const auto addMember = [&](std::string key, Value entry) {
            const std::size_t member = members++;
            if (key == "__metadata__")
                return addMetadata(std::move(entry));
            TensorEntry t = tensorEntry(key, entry, dataSize, where);
            addTensor(std::move(key), std::move(t), member);
        };
        // Each member as it is read: a header of thousands of tensors is
        // never held whole. A plain header (every writer's) is read with
        // no Value made for a tensor's entry.
        bool isObject = false;
        if (isPlainJson(header)) {
            isObject = readPlainMembers(header, [&](std::string key, PlainJsonReader& json) {
                if (key != "__metadata__")
                    if (auto t = plainTensorEntry(key, json, dataSize, where))
                        return addTensor(std::move(key), std::move(*t), members++);
                addMember(std::move(key), json.value());
            });
        } else {
            JsonMembers handlers;
            handlers.member = addMember;
            isObject = parseJsonMembers(header, where, handlers);
        }
        if (!isObject)
            throw Error::corrupt(where, "the safetensors header is not a JSON object");
        // By start, then end, as safetensors' validate(), which then needs
        // the tensors to cover the data exactly, in order: no overlap, no
        // byte that is no tensor's (a hole could hide another file), none
        // past the last. An empty tensor where the next starts comes first.
        std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
            return std::tie(a.begin, a.end) < std::tie(b.begin, b.end);
        });
        std::uint64_t covered = 0;
        for (std::size_t i = 0; i < spans.size(); ++i) {
            if (spans[i].begin < covered) {
                const auto names = memberKeys(header, where, spans[i - 1].member, spans[i].member);
                throw Error::corrupt(where, "tensors \"" + names.first + "\" and \"" +
                                                names.second + "\" overlap in the data");
            }
            if (spans[i].begin > covered)
                throw Error::corrupt(
                    where, "bytes [" + std::to_string(covered) + ", " +
                               std::to_string(spans[i].begin) +
                               ") of the data belong to no tensor" +
                               (namedTwice.empty() ? std::string()
                                                   : " (the header names \"" + namedTwice +
                                                         "\" twice; the last is read)"));
            covered = spans[i].end;
        }
        if (covered != dataSize)
            throw Error::corrupt(where, "the file holds " + std::to_string(dataSize - covered) +
                                            " bytes past its last tensor's data");
        return root;
    }

private:
    std::shared_ptr<const SingleFile> file_;
};

class SafetensorsFormat final : public StoreFormat {
public:
    std::string_view name() const override { return "safetensors"; }
    int score(const StoreProbe& probe) const override {
        // A header that lies about its size is then refused with a reason.
        return probe.source && probe.head.size() >= 9 && probe.head[8] == '{' ? 55 : 0;
    }
    std::shared_ptr<const Store> open(const StoreProbe& probe, const StoreOptions&) const override {
        return openSafetensorsStore(probe.source);
    }
};

}  // namespace

std::shared_ptr<const Store> openSafetensorsStore(std::shared_ptr<const ByteSource> source) {
    return std::make_shared<SafetensorsStore>(std::make_shared<SingleFile>(std::move(source)));
}

std::shared_ptr<const StoreFormat> safetensorsFormat() {
    return std::make_shared<SafetensorsFormat>();
}

}  // namespace tensordict
