// NumPy's .npy (versions 1.0, 2.0, 3.0) and .npz files (a zip of .npy
// members, stored or deflated): core/FORMAT.md 13. An array is a leaf over
// the file's data; Fortran order and big-endian elements are views that
// readers see in C order, little-endian.

#include <algorithm>
#include <cctype>
#include <functional>
#include <optional>

#include "formats/file_stores.h"
#include "formats/numpy_descr.h"
#include "tensordict/error.h"
#include "tensordict/keys.h"
#include "tree/node_builder.h"
#include "tree/strides.h"
#include "values/python_objects.h"

namespace tensordict {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
// NumPy itself writes headers of a few hundred bytes; this refuses nonsense.
constexpr std::uint64_t kMaxHeaderBytes = 1u << 20;

}  // namespace

std::optional<DescrCode> parseDescrCode(std::string_view d) {
    DescrCode out;
    char order = 0;
    if (!d.empty() && std::string_view("<>=|").find(d[0]) != std::string_view::npos) {
        order = d[0];
        out.bigEndian = order == '>';
        d.remove_prefix(1);
    }
    if (d.empty())
        return std::nullopt;
    char kind = d[0];
    std::string_view rest = d.substr(1);
    const bool ordered = order == '<' || order == '>';
    // A datetime's unit, "[ns]" or "[10ms]", after its optional size.
    if (kind == 'M' || kind == 'm') {
        // As np.save writes them, with a unit or without ("<m8": generic).
        out.canonical = ordered && !rest.empty() && rest[0] == '8';
        if (!rest.empty() && rest[0] == '8')
            rest.remove_prefix(1);
        if (!rest.empty()) {
            if (rest.front() != '[' || rest.back() != ']')
                return std::nullopt;
            std::string_view unit = rest.substr(1, rest.size() - 2);
            while (!unit.empty() && std::isdigit(static_cast<unsigned char>(unit[0])))
                unit.remove_prefix(1);
            static constexpr std::string_view kUnits[] = {
                "Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as", "generic"};
            if (std::find(std::begin(kUnits), std::end(kUnits), unit) == std::end(kUnits))
                return std::nullopt;
        }
        out.notRead = kind == 'M' ? "datetimes" : "timedeltas";
        out.itemBytes = 8;
        return out;
    }
    std::uint64_t size = 0;
    if (rest.empty()) {
        // One-letter codes name a kind and its size at once.
        struct Letter {
            char letter, kind;
            std::uint64_t size;
        };
        static constexpr Letter kLetters[] = {
            {'?', 'b', 1}, {'b', 'i', 1},  {'B', 'u', 1}, {'h', 'i', 2},  {'H', 'u', 2},
            {'i', 'i', 4}, {'I', 'u', 4},  {'l', 'i', 8}, {'L', 'u', 8},  {'q', 'i', 8},
            {'Q', 'u', 8}, {'p', 'i', 8},  {'P', 'u', 8}, {'e', 'f', 2},  {'f', 'f', 4},
            {'d', 'f', 8}, {'g', 'f', 16}, {'F', 'c', 8}, {'D', 'c', 16}, {'G', 'c', 32},
            {'c', 'S', 1}, {'O', 'O', 8},  {'S', 'S', 0}, {'a', 'S', 0},  {'U', 'U', 0},
            {'V', 'V', 0},
        };
        const auto* letter = std::find_if(std::begin(kLetters), std::end(kLetters),
                                          [&](const Letter& l) { return l.letter == kind; });
        if (letter == std::end(kLetters))
            return std::nullopt;
        out.canonical = kind == 'O' && order == '|';  // "|O", as np.save writes it
        kind = letter->kind;
        size = letter->size;
    } else {
        // NumPy before 1.10 wrote objects as "|O8".
        out.canonical =
            kind == 'S' || kind == 'V' || kind == 'O' ? order == '|' : ordered && kind != 'a';
        if (rest.size() > 12)
            return std::nullopt;
        for (char c : rest) {
            if (!std::isdigit(static_cast<unsigned char>(c)))
                return std::nullopt;
            size = size * 10 + std::uint64_t(c - '0');
        }
        if (kind == 'a')
            kind = 'S';
    }
    struct Read {
        char kind;
        std::uint64_t size;
        DType dtype;
    };
    static constexpr Read kRead[] = {
        {'b', 1, DType::Bool},      {'i', 1, DType::Int8},        {'i', 2, DType::Int16},
        {'i', 4, DType::Int32},     {'i', 8, DType::Int64},       {'u', 1, DType::UInt8},
        {'u', 2, DType::UInt16},    {'u', 4, DType::UInt32},      {'u', 8, DType::UInt64},
        {'f', 2, DType::Float16},   {'f', 4, DType::Float32},     {'f', 8, DType::Float64},
        {'c', 8, DType::Complex64}, {'c', 16, DType::Complex128},
    };
    for (const Read& r : kRead)
        if (r.kind == kind && r.size == size) {
            out.dtype = r.dtype;
            out.bigEndian = out.bigEndian && size > 1;
            return out;
        }
    if (kind == 'f' && size == 16)
        out.notRead = "128-bit floats (long double)";
    else if (kind == 'c' && size == 32)
        out.notRead = "256-bit complex numbers (long double)";
    else if (kind == 'S')
        out.notRead = "byte strings";
    else if (kind == 'U')
        out.notRead = "Unicode strings", size *= 4;
    else if (kind == 'V')
        out.notRead = "raw bytes (void)";
    else if (kind == 'O' && size == 8)
        out.notRead =
            "Python objects, which only pickle can load (not opened, since that would "
            "run code)";
    else
        return std::nullopt;
    if (kind != 'O')
        out.itemBytes = size;
    return out;
}

namespace {

struct ArrayHeader {
    DType dtype = DType::UInt8;
    bool bigEndian = false;
    bool fortranOrder = false;
    std::vector<std::int64_t> shape;
    std::uint64_t dataOffset = 0;  // from the start of the .npy
    std::string descr;
    // An array NumPy reads and tdstudio does not: what it holds, and its
    // item size (none where its data is a pickle).
    std::string notRead;
    std::optional<std::uint64_t> notReadItemBytes;
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
                if (peek('[')) {  // a record array: a list of fields
                    const std::size_t start = at_;
                    h.notReadItemBytes = fields(0);
                    h.descr = std::string(s_.substr(start, at_ - start));
                    h.notRead = "records";
                } else {
                    h.descr = string();
                }
                haveDescr = true;
            } else if (key == "fortran_order") {
                h.fortranOrder = boolean();
                haveOrder = true;
            } else if (key == "shape") {
                h.shape = tuple(true);
                haveShape = true;
            } else {
                fail("unknown header key \"" + key + "\"");
            }
            if (!peek('}'))
                expect(',');
        }
        if (!haveDescr || !haveOrder || !haveShape)
            fail("the header lacks descr, fortran_order or shape");
        // NumPy reads the header as one Python literal: nothing may follow it.
        ++at_;
        space();
        if (at_ != s_.size())
            fail("text after the dict");
    }

private:
    // A structured dtype's fields, [('a', '<f4'), (('title', 'b'), '<i8', (2,)),
    // ('c', [...])], as dtype.descr lists them (padding too): their item
    // size, or none if a field holds Python objects.
    std::optional<std::uint64_t> fields(int depth) {
        if (depth > 32)
            fail("fields nested too deeply");
        std::optional<std::uint64_t> total = 0;
        expect('[');
        while (!peek(']')) {
            expect('(');
            if (peek('(')) {  // (title, name)
                ++at_;
                string();
                expect(',');
                string();
                expect(')');
            } else {
                string();
            }
            expect(',');
            std::optional<std::uint64_t> item;
            if (peek('[')) {
                item = fields(depth + 1);
            } else {
                const std::string descr = string();
                const std::optional<DescrCode> code = parseDescrCode(descr);
                if (!code || (!code->dtype && !code->canonical))
                    fail("\"" + descr + "\" is not a field dtype np.save writes");
                item = code->dtype ? std::optional<std::uint64_t>(itemSize(*code->dtype))
                                   : code->itemBytes;
            }
            if (peek(',')) {
                ++at_;
                if (!peek(')'))
                    for (std::int64_t d : tuple())
                        if (item && __builtin_mul_overflow(*item, std::uint64_t(d), &*item))
                            fail("a field too large");
            }
            expect(')');
            if (!item)
                total.reset();
            else if (total && __builtin_add_overflow(*total, *item, &*total))
                fail("a record too large");
            if (!peek(']'))
                expect(',');
        }
        ++at_;
        return total;
    }

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
    // A tuple of Python ints: "(5, 7)", "(5,)", "()". The array's shape must
    // be one (NumPy refuses "(5)", the int 5); a field's may be an int.
    std::vector<std::int64_t> tuple(bool arrayShape = false) {
        std::vector<std::int64_t> dims;
        expect('(');
        bool comma = false;
        while (!peek(')')) {
            space();
            std::int64_t v = 0;
            std::size_t digits = 0;
            const std::size_t first = at_;
            while (at_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[at_]))) {
                if (v > (std::int64_t(1) << 56))
                    fail("a dimension too large");
                v = v * 10 + (s_[at_++] - '0');
                ++digits;
            }
            if (!digits)
                fail("expected a dimension");
            if (s_[first] == '0' && v != 0)  // Python 3 has no "012"
                fail("a dimension with a leading zero");
            if (at_ < s_.size() && s_[at_] == 'L')
                ++at_;  // Python 2's long
            dims.push_back(v);
            if (!peek(')'))
                expect(','), comma = true;
            if (dims.size() > 64)
                fail("more than 64 dimensions");
        }
        ++at_;
        if (arrayShape && dims.size() == 1 && !comma)
            fail("the shape is an int, not a tuple");
        return dims;
    }

    std::string_view s_;
    std::size_t at_ = 0;
    const std::string& where_;
};

// The header's descr as a dtype and byte order, or as an array not read here.
void readDescr(ArrayHeader& h, const std::string& where) {
    if (!h.notRead.empty())
        return;  // records
    const std::optional<DescrCode> code = parseDescrCode(h.descr);
    if (!code)
        throw Error::corrupt(where, "\"" + h.descr + "\" is not a NumPy dtype");
    if (code->dtype) {
        h.dtype = *code->dtype;
        h.bigEndian = code->bigEndian;
    } else if (!code->canonical) {
        throw Error::unsupported(where, "an array of " + code->notRead + " in the dtype \"" +
                                            h.descr +
                                            "\", a spelling np.save never writes; tdstudio cannot "
                                            "tell it from a damaged dtype");
    } else {
        h.notRead = code->notRead;
        h.notReadItemBytes = code->itemBytes;
    }
}

// Parses the header at the start of `head` (the file's first bytes). Throws
// Error naming `where`; `needMore` is set when the header goes past `head`.
ArrayHeader parseHeader(const std::string& head, const std::string& where, std::uint64_t* needed) {
    if (head.size() < 10 || head.compare(0, kMagic.size(), kMagic) != 0)
        throw Error::corrupt(where, "not a .npy file (no \\x93NUMPY magic)");
    const int major = static_cast<unsigned char>(head[6]);
    const int minor = static_cast<unsigned char>(head[7]);
    if (minor != 0 && major >= 1 && major <= 3)  // NumPy has only 1.0, 2.0 and 3.0
        throw Error::unsupported(where, "unsupported .npy version " + std::to_string(major) + "." +
                                            std::to_string(minor));
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

// The most of an object array's pickle that is decoded to check it: as
// many bytes as the decoder takes objects (one an opcode at most), so a
// sound pickle is never refused for its size. A larger one is not checked.
constexpr std::uint64_t kMaxObjectPickleBytes = std::uint64_t(4) << 20;

// An array of Python objects holds numpy's pickle of the array after its
// header (np.save with allow_pickle). With no size to check, its pickle is
// decoded to its STOP instead, running nothing, so that one cut short or
// garbled is found. `read(n)` gives the .npy's first n bytes.
void checkObjectPickle(const ArrayHeader& h, std::uint64_t fileSize,
                       const std::function<std::string(std::uint64_t)>& read,
                       const std::string& where) {
    if (!h.notRead.empty() && !h.notReadItemBytes && fileSize <= kMaxObjectPickleBytes) {
        const std::string bytes = read(fileSize);
        std::size_t pos = h.dataOffset;
        try {
            (void)python::decode(bytes, &pos, where, {});
        } catch (const Error& e) {  // of its kind (a cut pickle is truncated), saying what it is
            throw Error(
                {e.kind(), where, "the pickle of an array of Python objects: " + e.reason()});
        }
    }
}

// The array as a leaf over `file` (its storage), checked against the file's size.
std::unique_ptr<Node> arrayLeaf(const ArrayHeader& h, std::string key, StorageInfo file,
                                const std::shared_ptr<const Store>& store,
                                const std::string& where) {
    const bool read = h.notRead.empty();
    // Object arrays hold a pickle, whose length says nothing of the shape.
    const std::uint64_t item = read ? itemSize(h.dtype) : h.notReadItemBytes.value_or(0);
    std::uint64_t numel = 1;
    const std::uint64_t maxElements = (std::uint64_t(1) << 62) / std::max<std::uint64_t>(item, 1);
    for (std::int64_t d : h.shape) {
        if (d && numel > maxElements / std::uint64_t(d))
            throw Error::corrupt(where, "the array's size overflows");
        numel *= std::uint64_t(d);
    }
    const std::uint64_t nbytes = numel * item;
    if (file.size < h.dataOffset || file.size - h.dataOffset < nbytes)
        throw Error::truncated(
            where, "the array needs " + std::to_string(nbytes) + " bytes of data, " +
                       "but the file holds " +
                       std::to_string(file.size > h.dataOffset ? file.size - h.dataOffset : 0) +
                       " (truncated file?)");
    if (!read)
        throw Error::notReadHere(
            where, "an array of " + h.notRead + " (dtype " + h.descr + ", shape " +
                       formatShape(h.shape) + "), which NumPy reads and tdstudio does not decode" +
                       (!h.notReadItemBytes && file.size > kMaxObjectPickleBytes
                            ? "; its pickle, over 4 MiB, was not checked either"
                            : ""));
    auto n = NodeBuilder::create(NodeKind::Tensor, std::move(key));
    NodeBuilder b(*n);
    TensorLeaf& leaf = b.leaf();
    leaf.dtype = h.dtype;
    leaf.shape = h.shape;
    leaf.numel = static_cast<std::int64_t>(numel);
    leaf.nbytes = nbytes;
    if (numel) {
        leaf.storage = std::move(file);
        leaf.storage.offset = h.dataOffset;
        leaf.storage.bigEndian = h.bigEndian;
        if (h.fortranOrder && h.shape.size() > 1)
            leaf.storage.strides = fStrides(h.shape);
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
        const std::uint64_t size = file().source().size();
        checkObjectPickle(
            h, size, [&](std::uint64_t n) { return file().readRange(0, n, "the objects' pickle"); },
            file().location());
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
                const StorageInfo entry = *zip().stat(name);
                std::string head = entryPrefix(entry, 4096);
                // numpy.load reads any member that starts with the magic as an
                // array, whatever its name, and gives another's raw bytes: other
                // data beside the arrays. One named .npy without it is damage.
                const bool magic = head.compare(0, kMagic.size(), kMagic) == 0;
                if (!npy && !magic)
                    throw Error::notReadHere(where, "a member that is not a .npy array (" +
                                                        std::to_string(entry.size) +
                                                        " bytes): numpy.load gives its raw "
                                                        "bytes, which tdstudio does not show");
                if (!magic)
                    throw Error::corrupt(where,
                                         "named .npy, but no .npy array (no \\x93NUMPY magic): "
                                         "numpy.load gives its raw bytes under this key, where "
                                         "np.savez wrote an array");
                std::uint64_t needed = 0;
                ArrayHeader h = parseHeader(head, where, &needed);
                if (needed > head.size()) {
                    head = entryPrefix(entry, needed);
                    h = parseHeader(head, where, &needed);
                    if (needed > head.size())
                        throw Error::truncated(
                            where, "the member ends inside its .npy header (truncated)");
                }
                checkObjectPickle(
                    h, entry.size, [&](std::uint64_t n) { return entryPrefix(entry, n); }, where);
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
        if (!probe.source)
            return 0;
        const std::string first = zipFirstEntryName(probe.head);
        if (first.size() > 4 && first.compare(first.size() - 4, 4, ".npy") == 0)
            return 60;
        // A zip named .npz whose first member is no array, or that has none
        // (np.savez of nothing): above a zip that is no tensordict archive.
        const bool zip = probe.head.compare(0, 4, "PK\x03\x04") == 0 ||
                         probe.head.compare(0, 4, "PK\x05\x06") == 0;
        std::string suffix = probe.location.substr(probe.location.size() -
                                                   std::min<std::size_t>(4, probe.location.size()));
        std::transform(suffix.begin(), suffix.end(), suffix.begin(),
                       [](unsigned char c) { return char(std::tolower(c)); });
        return zip && suffix == ".npz" ? 55 : 0;
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
