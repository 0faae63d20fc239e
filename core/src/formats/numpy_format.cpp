// NumPy's .npy (versions 1.0, 2.0, 3.0) and .npz files (a zip of .npy
// members, stored or deflated): core/FORMAT.md 13. An array is a leaf over
// the file's data; Fortran order and big-endian elements are views that
// readers see in C order, little-endian.

#include <cctype>

#include "formats/file_stores.h"
#include "tensordict/error.h"
#include "tree/node_builder.h"

namespace tensordict {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
// NumPy itself writes headers of a few hundred bytes; this refuses nonsense.
constexpr std::uint64_t kMaxHeaderBytes = 1u << 20;

struct ArrayHeader {
    DType dtype = DType::UInt8;
    bool bigEndian = false;
    bool fortranOrder = false;
    std::vector<std::int64_t> shape;
    std::uint64_t dataOffset = 0;  // from the start of the .npy
    std::string descr;
};

// The header's Python dict literal: {'descr': '<f4', 'fortran_order': False, 'shape': (5, 7), }
class HeaderParser {
public:
    HeaderParser(std::string_view text, const std::string& where) : s_(text), where_(where) {}

    void parse(ArrayHeader& h) {
        bool haveDescr = false, haveOrder = false, haveShape = false;
        expect('{');
        while (!peek('}')) {
            const std::string key = string();
            expect(':');
            if (key == "descr") {
                if (peek('['))
                    fail("structured dtypes (a list of fields) are not supported");
                h.descr = string();
                haveDescr = true;
            } else if (key == "fortran_order") {
                h.fortranOrder = boolean();
                haveOrder = true;
            } else if (key == "shape") {
                h.shape = tuple();
                haveShape = true;
            } else {
                fail("unknown header key \"" + key + "\"");
            }
            if (!peek('}'))
                expect(',');
        }
        if (!haveDescr || !haveOrder || !haveShape)
            fail("the header lacks descr, fortran_order or shape");
    }

private:
    [[noreturn]] void fail(const std::string& why) const {
        throw Error::corrupt(where_, "malformed .npy header: " + why);
    }
    void space() {
        while (at_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[at_])))
            ++at_;
    }
    bool peek(char c) {
        space();
        return at_ < s_.size() && s_[at_] == c;
    }
    void expect(char c) {
        if (!peek(c))
            fail(std::string("expected '") + c + "'");
        ++at_;
    }
    std::string string() {
        space();
        if (at_ >= s_.size() || (s_[at_] != '\'' && s_[at_] != '"'))
            fail("expected a string");
        const char quote = s_[at_++];
        const std::size_t end = s_.find(quote, at_);
        if (end == std::string_view::npos)
            fail("an unterminated string");
        std::string out(s_.substr(at_, end - at_));
        at_ = end + 1;
        return out;
    }
    bool boolean() {
        space();
        if (s_.compare(at_, 4, "True") == 0)
            return at_ += 4, true;
        if (s_.compare(at_, 5, "False") == 0)
            return at_ += 5, false;
        fail("expected True or False");
    }
    std::vector<std::int64_t> tuple() {
        std::vector<std::int64_t> dims;
        expect('(');
        while (!peek(')')) {
            space();
            std::int64_t v = 0;
            std::size_t digits = 0;
            while (at_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[at_]))) {
                if (v > (std::int64_t(1) << 56))
                    fail("a dimension too large");
                v = v * 10 + (s_[at_++] - '0');
                ++digits;
            }
            if (!digits)
                fail("expected a dimension");
            if (at_ < s_.size() && s_[at_] == 'L')
                ++at_;  // Python 2's long
            dims.push_back(v);
            if (!peek(')'))
                expect(',');
            if (dims.size() > 64)
                fail("more than 64 dimensions");
        }
        ++at_;
        return dims;
    }

    std::string_view s_;
    std::size_t at_ = 0;
    const std::string& where_;
};

// numpy's dtype string ('<f4', '|u1', '>i8') as a dtype and byte order.
void readDescr(ArrayHeader& h, const std::string& where) {
    const std::string& d = h.descr;
    if (d.size() < 3 || (d[0] != '<' && d[0] != '>' && d[0] != '|' && d[0] != '='))
        throw Error::unsupported(where, "unsupported array dtype \"" + d + "\"");
    const std::string code = d.substr(1);
    struct Entry {
        std::string_view code;
        DType dtype;
    };
    static constexpr Entry kTable[] = {
        {"b1", DType::Bool},      {"u1", DType::UInt8},       {"i1", DType::Int8},
        {"i2", DType::Int16},     {"i4", DType::Int32},       {"i8", DType::Int64},
        {"u2", DType::UInt16},    {"u4", DType::UInt32},      {"u8", DType::UInt64},
        {"f2", DType::Float16},   {"f4", DType::Float32},     {"f8", DType::Float64},
        {"c8", DType::Complex64}, {"c16", DType::Complex128},
    };
    for (const Entry& e : kTable)
        if (e.code == code) {
            h.dtype = e.dtype;
            h.bigEndian = d[0] == '>' && itemSize(e.dtype) > 1;
            return;
        }
    if (code[0] == 'O')
        throw Error::unsupported(
            where,
            "an array of Python objects (dtype 'O'), which only pickle can load: "
            "not opened, since that would run code");
    throw Error::unsupported(where, "unsupported array dtype \"" + d + "\"");
}

// Parses the header at the start of `head` (the file's first bytes). Throws
// Error naming `where`; `needMore` is set when the header goes past `head`.
ArrayHeader parseHeader(const std::string& head, const std::string& where, std::uint64_t* needed) {
    if (head.size() < 10 || head.compare(0, kMagic.size(), kMagic) != 0)
        throw Error::corrupt(where, "not a .npy file (no \\x93NUMPY magic)");
    const int major = static_cast<unsigned char>(head[6]);
    std::uint64_t length = 0, start = 0;
    if (major == 1) {
        length = static_cast<unsigned char>(head[8]) | unsigned(static_cast<unsigned char>(head[9]))
                                                           << 8;
        start = 10;
    } else if (major == 2 || major == 3) {
        if (head.size() < 12)
            throw Error::truncated(where, "the .npy header is truncated");
        for (int i = 0; i < 4; ++i)
            length |= std::uint64_t(static_cast<unsigned char>(head[8 + i])) << (8 * i);
        start = 12;
    } else {
        throw Error::unsupported(where, "unsupported .npy version " + std::to_string(major));
    }
    if (length > kMaxHeaderBytes)
        throw Error::corrupt(where, "a .npy header of " + std::to_string(length) + " bytes");
    *needed = start + length;
    if (head.size() < start + length)
        return {};
    ArrayHeader h;
    // Version 3.0 is UTF-8, the others latin-1: the keys and values read are ASCII either way.
    HeaderParser(std::string_view(head).substr(start, length), where).parse(h);
    readDescr(h, where);
    h.dataOffset = start + length;
    return h;
}

// The array as a leaf over `file` (its storage), checked against the file's size.
std::unique_ptr<Node> arrayLeaf(const ArrayHeader& h, std::string key, StorageInfo file,
                                const std::shared_ptr<const Store>& store,
                                const std::string& where) {
    auto n = NodeBuilder::create(NodeKind::Tensor, std::move(key));
    NodeBuilder b(*n);
    TensorLeaf& leaf = b.leaf();
    leaf.dtype = h.dtype;
    leaf.shape = h.shape;
    std::uint64_t numel = 1;
    const std::uint64_t maxElements = (std::uint64_t(1) << 62) / itemSize(h.dtype);
    for (std::int64_t d : h.shape) {
        if (d && numel > maxElements / std::uint64_t(d))
            throw Error::corrupt(where, "the array's size overflows");
        numel *= std::uint64_t(d);
    }
    leaf.numel = static_cast<std::int64_t>(numel);
    leaf.nbytes = numel * itemSize(h.dtype);
    if (file.size < h.dataOffset || file.size - h.dataOffset < leaf.nbytes)
        throw Error::truncated(
            where, "the array needs " + std::to_string(leaf.nbytes) + " bytes of data, " +
                       "but the file holds " +
                       std::to_string(file.size > h.dataOffset ? file.size - h.dataOffset : 0) +
                       " (truncated file?)");
    if (numel) {
        leaf.storage = std::move(file);
        leaf.storage.offset = h.dataOffset;
        leaf.storage.bigEndian = h.bigEndian;
        if (h.fortranOrder && h.shape.size() > 1) {
            std::int64_t step = 1;
            leaf.storage.strides.resize(h.shape.size());
            for (std::size_t d = 0; d < h.shape.size(); ++d) {
                leaf.storage.strides[d] = step;
                step *= std::max<std::int64_t>(h.shape[d], 1);
            }
        }
    }
    b.setStore(store);
    return n;
}

class NpyStore final : public SingleFileStore {
public:
    explicit NpyStore(std::shared_ptr<const ByteSource> source)
        : SingleFileStore(std::move(source), "npy") {}

    std::unique_ptr<Node> buildTree(const std::shared_ptr<const Store>& self) const override {
        std::uint64_t needed = 0;
        std::string head = file().readRange(
            0, std::min<std::uint64_t>(file().source().size(), 4096), "the header");
        ArrayHeader h = parseHeader(head, file().location(), &needed);
        if (needed > head.size()) {
            head = file().readRange(0, needed, "the header");
            h = parseHeader(head, file().location(), &needed);
        }
        // One bare array: the root is the leaf, with the empty key path.
        return arrayLeaf(h, "", file().fileInfo(), self, file().location());
    }
};

class NpzStore final : public ZipBackedStore {
public:
    explicit NpzStore(std::shared_ptr<const ZipContainer> zip)
        : ZipBackedStore(std::move(zip), "npz") {}

    std::unique_ptr<Node> buildTree(const std::shared_ptr<const Store>& self) const override {
        auto root = NodeBuilder::create(NodeKind::Container, "");
        NodeBuilder(*root).setClass("dict", {});
        NodeBuilder(*root).setStore(self);
        for (const std::string& name : zip().entryNames()) {
            // numpy.load names each member by its file name without ".npy".
            const bool npy = name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0;
            const std::string key = npy ? name.substr(0, name.size() - 4) : name;
            const std::string where = zip().describe(name);
            try {
                if (!npy)
                    throw Error::corrupt(where, "not a .npy member");
                const StorageInfo entry = *zip().stat(name);
                std::uint64_t needed = 0;
                std::string head = entryPrefix(entry, 4096);
                ArrayHeader h = parseHeader(head, where, &needed);
                if (needed > head.size()) {
                    head = entryPrefix(entry, needed);
                    h = parseHeader(head, where, &needed);
                    if (needed > head.size())
                        throw Error::truncated(
                            where, "the member ends inside its .npy header (truncated)");
                }
                NodeBuilder(*root).append(arrayLeaf(h, key, entry, self, where));
            } catch (const Error& e) {
                NodeBuilder(*root).append(NodeBuilder::error(key, e.failure()));
            }
        }
        return root;
    }
};

class NpyFormat final : public StoreFormat {
public:
    std::string_view name() const override { return "npy"; }
    int score(const StoreProbe& probe) const override {
        return probe.source && probe.head.compare(0, kMagic.size(), kMagic) == 0 ? 60 : 0;
    }
    std::shared_ptr<const Store> open(const StoreProbe& probe, const StoreOptions&) const override {
        return std::make_shared<NpyStore>(probe.source);
    }
};

class NpzFormat final : public StoreFormat {
public:
    std::string_view name() const override { return "npz"; }
    int score(const StoreProbe& probe) const override {
        const std::string first = zipFirstEntryName(probe.head);
        return probe.source && first.size() > 4 && first.compare(first.size() - 4, 4, ".npy") == 0
                   ? 60
                   : 0;
    }
    std::shared_ptr<const Store> open(const StoreProbe& probe,
                                      const StoreOptions& options) const override {
        return std::make_shared<NpzStore>(
            openZipContainer(probe.source, options.inflateCacheBytes));
    }
};

}  // namespace

std::shared_ptr<const StoreFormat> npyFormat() {
    return std::make_shared<NpyFormat>();
}

std::shared_ptr<const StoreFormat> npzFormat() {
    return std::make_shared<NpzFormat>();
}

}  // namespace tensordict
