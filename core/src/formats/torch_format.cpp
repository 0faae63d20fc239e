// torch.save checkpoints (core/FORMAT.md 12): the zip layout of torch 1.6
// and later (NAME/data.pkl, NAME/data/KEY, NAME/version, optionally
// NAME/byteorder), and the earlier stream of pickles followed by the raw
// storages. Both are read by the safe unpickler (python_objects.h): nothing
// in them runs.

#include <cctype>
#include <charconv>
#include <map>

#include "formats/file_stores.h"
#include "formats/python_tree.h"
#include "tensordict/error.h"
#include "values/python_objects.h"

namespace tensordict {
namespace {

using python::Object;
using Type = Object::Type;

// data.pkl of even the largest state dicts is a few MB; this only refuses nonsense.
constexpr std::uint64_t kMaxPickleBytes = 256ull << 20;

constexpr const char* kSafeNote =
    "read by tdstudio's own unpickler: torch's tensors and containers are rebuilt as data, "
    "nothing in the file is run and no module is imported (as torch.load(weights_only=True))";

bool endsWith(const std::string& s, std::string_view tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// ('storage', StorageType, key, location, numel[, view metadata]): the
// persistent id of a storage, as both layouts write it. A storage of a type
// not read here (quantized, say) is kept by name: the tensors over it become
// error nodes, the rest of the file still opens.
struct StorageId {
    // Its elements' type: a dtype read here, or the integers a quantized
    // storage holds; none for a storage type no one here knows.
    std::optional<DType> dtype;
    std::string typeName;  // "torch.FloatStorage"
    std::string key;
    std::string location;
    std::int64_t numel = 0;
    // Legacy views into a root storage: (view key, offset, size).
    struct View {
        std::int64_t offset = 0, size = 0;
    };
    std::optional<View> view;

    // Its tensors are read here (its type is not quantized, say).
    bool readable() const { return python::storageDType(typeName).has_value(); }
};

// Protocol 0 has no binary persistent ids: pickle writes PERSID with the
// tuple's str(), "('storage', <class 'torch.FloatStorage'>, '94', 'cpu', 6,
// None)", which torch.load itself then refuses. Its fields are read back
// from that text.
std::vector<std::string> reprFields(const std::string& text, const std::string& where) {
    std::vector<std::string> fields;
    std::size_t i = 0;
    const auto fail = [&] { throw Error::corrupt(where, "a malformed persistent id: " + text); };
    const auto skipSpaces = [&] {
        while (i < text.size() && text[i] == ' ')
            ++i;
    };
    if (text.empty() || text[0] != '(')
        fail();
    ++i;
    while (true) {
        skipSpaces();
        if (i >= text.size())
            fail();
        if (text[i] == ')')
            break;
        std::string field;
        if (text[i] == '\'') {  // a quoted str (keys, locations: no quotes inside)
            const std::size_t close = text.find('\'', i + 1);
            if (close == std::string::npos)
                fail();
            field = text.substr(i, close + 1 - i);
            i = close + 1;
        } else if (text[i] == '(') {  // a view's tuple, kept whole
            const std::size_t close = text.find(')', i);
            if (close == std::string::npos)
                fail();
            field = text.substr(i, close + 1 - i);
            i = close + 1;
        } else {
            const std::size_t end = text.find_first_of(",)", i);
            if (end == std::string::npos)
                fail();
            field = text.substr(i, end - i);
            while (!field.empty() && field.back() == ' ')
                field.pop_back();
            i = end;
        }
        fields.push_back(std::move(field));
        skipSpaces();
        if (i < text.size() && text[i] == ',')
            ++i;
    }
    return fields;
}

std::string unquoted(const std::string& field) {
    return field.size() >= 2 && field.front() == '\'' ? field.substr(1, field.size() - 2) : field;
}

std::int64_t reprInteger(const std::string& field, const std::string& where) {
    std::int64_t v = 0;
    const auto r = std::from_chars(field.data(), field.data() + field.size(), v);
    if (r.ec != std::errc() || r.ptr != field.data() + field.size())
        throw Error::corrupt(where,
                             "a malformed persistent id: \"" + field + "\" is not an integer");
    return v;
}

StorageId storageIdOfText(const std::string& text, const std::string& where) {
    const std::vector<std::string> f = reprFields(text, where);
    if (f.size() < 5 || unquoted(f[0]) != "storage" || f[1].rfind("<class '", 0) != 0)
        throw Error::corrupt(where, "a persistent id that is not a storage: " + text);
    StorageId id;
    id.typeName = unquoted(f[1].substr(7, f[1].size() - 8));  // <class 'torch.FloatStorage'>
    id.key = unquoted(f[2]);
    id.location = unquoted(f[3]);
    id.numel = reprInteger(f[4], where);
    if (f.size() > 5 && f[5] != "None") {
        const std::vector<std::string> v = reprFields(f[5], where);
        if (v.size() != 3)
            throw Error::corrupt(where, "a malformed storage view: " + f[5]);
        id.view = StorageId::View{reprInteger(v[1], where), reprInteger(v[2], where)};
    }
    return id;
}

StorageId storageIdOfTuple(const Object& pid, const std::string& where) {
    if (pid.type != Type::Tuple || pid.items.size() < 5 || pid.items[0]->type != Type::Str ||
        pid.items[0]->text != "storage")
        throw Error::corrupt(where, "a persistent id that is not a storage");
    const Object& type = *pid.items[1];
    const Object& key = *pid.items[2];
    const Object& location = *pid.items[3];
    const Object& numel = *pid.items[4];
    if (type.type != Type::Global || key.type != Type::Str || location.type != Type::Str ||
        numel.type != Type::Int)
        throw Error::corrupt(where, "a malformed storage id");
    StorageId id;
    id.typeName = type.text;
    id.key = key.text;
    id.location = location.text;
    id.numel = numel.integer;
    if (pid.items.size() > 5 && pid.items[5]->type == Type::Tuple) {
        const auto& v = pid.items[5]->items;
        if (v.size() != 3 || v[1]->type != Type::Int || v[2]->type != Type::Int)
            throw Error::corrupt(where, "a malformed storage view");
        id.view = StorageId::View{v[1]->integer, v[2]->integer};
    }
    return id;
}

StorageId parseStorageId(const Object& pid, const std::string& where) {
    StorageId id =
        pid.type == Type::Str ? storageIdOfText(pid.text, where) : storageIdOfTuple(pid, where);
    id.dtype = python::storageDType(id.typeName);
    if (const auto quantized = python::quantizedStorage(id.typeName))
        id.dtype = quantized->held;
    if (id.numel < 0 ||
        (id.dtype && std::uint64_t(id.numel) > (std::uint64_t(1) << 60) / itemSize(*id.dtype)))
        throw Error::corrupt(where, "storage " + id.key + " has an impossible size");
    return id;
}

Object* storageObject(const StorageId& id, const std::function<Object*()>& make) {
    Object* s = make();
    s->text = id.key;
    s->tensor().numel = id.numel;
    if (id.dtype)  // a quantized storage's too: its bounds are checked
        s->tensor().dtype = *id.dtype;
    if (!id.readable()) {  // the tensors over it say why they are not read
        s->flag = true;
        Object* name = make();
        name->type = Type::Str;
        name->text = id.typeName;
        s->state = name;
    }
    return s;
}

// Whether two ids of one key name one storage as torch.save would: of one
// element type (a torch 2 byte storage, torch.UntypedStorage, is a
// ByteStorage's uint8) and size. torch.save checks no type for an empty or
// a meta storage.
bool sameStorage(const StorageId& a, const StorageId& b) {
    if (a.dtype && b.dtype) {
        const std::uint64_t aBytes = std::uint64_t(a.numel) * itemSize(*a.dtype);
        const std::uint64_t bBytes = std::uint64_t(b.numel) * itemSize(*b.dtype);
        if (aBytes == 0 && bBytes == 0)
            return true;
        return aBytes == bBytes && (*a.dtype == *b.dtype || a.location == "meta");
    }
    return a.typeName == b.typeName && a.numel == b.numel;
}

// "a torch.FloatStorage of 4 elements": how a storage id names its storage.
std::string describe(const StorageId& id) {
    return "a " + id.typeName + " of " + std::to_string(id.numel) + " elements";
}

class TorchZipStore final : public ZipBackedStore {
public:
    TorchZipStore(std::shared_ptr<const ZipContainer> zip, std::string prefix)
        : ZipBackedStore(std::move(zip), "torch"), prefix_(std::move(prefix)) {}

    std::string readingNote() const override { return kSafeNote; }

    std::unique_ptr<Node> buildTree(const std::shared_ptr<const Store>& self) const override {
        checkFormatVersion();
        const std::string pickleName = prefix_ + "data.pkl";
        const std::string bytes = zip().read(pickleName, kMaxPickleBytes);
        bool bigEndian = false;
        if (const auto order = zip().stat(prefix_ + "byteorder")) {
            const std::string text = zip().read(prefix_ + "byteorder", 16);
            if (text != "little" && text != "big")
                throw Error::corrupt(zip().describe(prefix_ + "byteorder"),
                                     "unknown byte order \"" + text + "\"");
            bigEndian = text == "big";
        }
        const std::string where = zip().describe(pickleName);
        std::size_t pos = 0;
        // torch.load reads a storage once, by key, as its first id names it:
        // torch.save never names a key again with another type or size, so
        // the tensors over such a naming are errors (damage; torch.load
        // reads them as the first naming, or fails past its end).
        std::map<std::string, StorageId> firstOfKey;
        std::map<const Object*, std::string> misnamed;
        const python::Pickle pickle = python::decode(
            bytes, &pos, where, [&](const Object& pid, const std::function<Object*()>& make) {
                const StorageId id = parseStorageId(pid, where);
                const auto [first, added] = firstOfKey.emplace(id.key, id);
                if (added || sameStorage(first->second, id))
                    return storageObject(id, make);
                // As torch.load reads it (the first naming): its views are
                // checked against that, then it is refused.
                Object* storage = storageObject(first->second, make);
                misnamed.emplace(storage, "its storage " + id.key + " is named " + describe(id) +
                                              " here, and " + describe(first->second) +
                                              " before: not what torch.save writes (torch.load "
                                              "takes the first)");
                return storage;
            });
        const StorageLocator locate = [&](const Object& storage) {
            if (const auto m = misnamed.find(&storage); m != misnamed.end())
                throw Error::corrupt(where, m->second);
            const std::string entry = prefix_ + "data/" + storage.text;
            std::optional<StorageInfo> info = zip().stat(entry);
            if (!info)
                throw Error::corrupt(zip().describe(entry),
                                     "the checkpoint has no entry for storage " + storage.text);
            info->bigEndian = bigEndian && itemSize(storage.tensor().dtype) > 1;
            return *info;
        };
        // The storages the file holds (torch.save writes none that its pickle does not load).
        const std::string folder = prefix_ + "data/";
        std::vector<std::string> stored;
        for (const std::string& name : zip().entryNames())
            if (name.size() > folder.size() && name.compare(0, folder.size(), folder) == 0 &&
                name.find('/', folder.size()) == std::string::npos)
                stored.push_back(name.substr(folder.size()));
        return buildPythonTree(pickle, self, locate, stored);
    }

private:
    // torch.load reads the file's format version first (".data/version",
    // else "version": "3\n" as torch.save writes it) and refuses a file
    // without one, or of a version it does not read.
    void checkFormatVersion() const {
        std::string name = prefix_ + ".data/version";
        if (!zip().stat(name))
            name = prefix_ + "version";
        if (!zip().stat(name))
            throw Error::corrupt(zip().location(), "the checkpoint has no version record (" + name +
                                                       "), without which torch.load refuses it");
        const std::string text = zip().read(name, kMaxVersionRecordBytes);
        // As C++'s stoull reads it: leading space, a sign, then digits; the
        // rest ignored. A number past 64 bits is out of range for it.
        std::size_t at = text.find_first_not_of(" \t\n\r\f\v");
        const bool negative = at < text.size() && text[at] == '-';
        if (at < text.size() && (text[at] == '+' || text[at] == '-'))
            ++at;
        std::uint64_t version = 0;
        std::size_t digits = 0;
        bool tooLarge = false;
        for (; at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]));
             ++at, ++digits) {
            const std::uint64_t digit = std::uint64_t(text[at] - '0');
            tooLarge = tooLarge || version > (UINT64_MAX - digit) / 10;
            version = version * 10 + digit;
        }
        if (!digits)
            throw Error::corrupt(zip().describe(name),
                                 "the checkpoint's version record is not a "
                                 "number");
        if (negative || tooLarge)
            throw Error::unsupported(zip().describe(name),
                                     "the checkpoint's format version is " +
                                         std::string(negative ? "negative" : "past 64 bits") +
                                         "; torch.load reads versions " +
                                         std::to_string(kMinFormatVersion) + " to " +
                                         std::to_string(kMaxFormatVersion));
        if (version < kMinFormatVersion || version > kMaxFormatVersion)
            throw Error::unsupported(
                zip().describe(name),
                "the checkpoint's format version is " + std::to_string(version) +
                    "; torch.load reads versions " + std::to_string(kMinFormatVersion) + " to " +
                    std::to_string(kMaxFormatVersion) + " (torch.save writes 3)");
    }

    // caffe2/serialize/versions.h: kMinSupportedFileFormatVersion and
    // kMaxSupportedFileFormatVersion (torch 1.13 to 2.x).
    static constexpr std::uint64_t kMinFormatVersion = 1, kMaxFormatVersion = 10;
    // torch reads the whole record, of any size; a sound one is "3\n". A
    // record past 1 MiB is refused here, saying its size.
    static constexpr std::uint64_t kMaxVersionRecordBytes = 1u << 20;

    std::string prefix_;  // "archive/": the folder of data.pkl
};

class TorchCheckpointFormat final : public StoreFormat {
public:
    std::string_view name() const override { return "torch"; }
    int score(const StoreProbe& probe) const override {
        return probe.source && endsWith(zipFirstEntryName(probe.head), "data.pkl") ? 60 : 0;
    }
    std::shared_ptr<const Store> open(const StoreProbe& probe,
                                      const StoreOptions& options) const override {
        const std::string first = zipFirstEntryName(probe.head);
        std::string prefix = first.substr(0, first.size() - std::string_view("data.pkl").size());
        return std::make_shared<TorchZipStore>(
            openZipContainer(probe.source, options.inflateCacheBytes), std::move(prefix));
    }
};

// The legacy layout: pickles of the magic number, the protocol version and
// the system's sizes, then the object, then the list of storage keys, then
// each storage as an 8-byte element count and its raw elements.
// The magic number 0x1950A86A20F9469CFC6C: the file's first pickle, in
// whichever protocol torch.save(pickle_protocol=...) wrote (0-5).
constexpr const char* kLegacyMagicNumber = "119547037146038801333356";

// Whether `head` starts with the magic number pickled in any protocol.
bool startsWithLegacyMagic(const std::string& head) {
    try {
        std::size_t pos = 0;
        const python::Pickle magic = python::decode(head, &pos, "", {});
        return magic.root->type == Type::BigInt && magic.root->text == kLegacyMagicNumber;
    } catch (const Error&) {
        return false;  // not a pickle, or another one
    }
}

class LegacyTorchStore final : public SingleFileStore {
public:
    explicit LegacyTorchStore(std::shared_ptr<const ByteSource> source)
        : SingleFileStore(std::move(source), "torch legacy") {}

    std::string readingNote() const override { return kSafeNote; }

    std::unique_ptr<Node> buildTree(const std::shared_ptr<const Store>& self) const override {
        const std::string& where = file().location();
        // The pickles come first; how long they are shows only while decoding,
        // so a prefix of the file is read, and a longer one if they go on.
        std::uint64_t want = std::min<std::uint64_t>(file().source().size(), 1u << 20);
        while (true) {
            const std::string head = file().readRange(0, want, "the pickles");
            try {
                return parse(head, self);
            } catch (const python::Truncated&) {
                if (want >= file().source().size() || want >= kMaxPickleBytes)
                    throw Error::truncated(
                        where, "the checkpoint ends inside its pickles (truncated file?)");
                want = std::min<std::uint64_t>({file().source().size(), want * 8, kMaxPickleBytes});
            }
        }
    }

private:
    std::unique_ptr<Node> parse(const std::string& bytes,
                                const std::shared_ptr<const Store>& self) const {
        const std::string& where = file().location();
        std::size_t pos = 0;
        const python::PersistentLoad none;
        const python::Pickle magic = python::decode(bytes, &pos, where, none);
        if (magic.root->type != Type::BigInt || magic.root->text != kLegacyMagicNumber)
            throw Error::corrupt(where, "not a torch checkpoint: wrong magic number");
        const python::Pickle protocol = python::decode(bytes, &pos, where, none);
        if (protocol.root->type != Type::Int || protocol.root->integer != 1001)
            throw Error::unsupported(where, "unsupported legacy protocol version");
        const python::Pickle sysInfo = python::decode(bytes, &pos, where, none);
        if (sysInfo.root->type == Type::Dict)
            for (const auto& [k, v] : sysInfo.root->entries)
                if (python::keyText(*k) == "little_endian" && v->type == Type::Bool && !v->flag)
                    throw Error::unsupported(where, "a checkpoint written on a big-endian machine");
        std::map<std::string, StorageId> ids;
        const python::Pickle object = python::decode(
            bytes, &pos, where, [&](const Object& pid, const std::function<Object*()>& make) {
                // ('module', class, source file, source): the legacy layout
                // keeps an nn.Module class's source beside its name;
                // torch.load takes the class, as here.
                if (pid.type == Type::Tuple && pid.items.size() == 4 &&
                    pid.items[0]->type == Type::Str && pid.items[0]->text == "module" &&
                    pid.items[1]->type == Type::Global)
                    return pid.items[1];
                StorageId id = parseStorageId(pid, where);
                ids.emplace(id.key, id);
                if (!id.view)
                    return storageObject(id, make);
                // An old storage view: (view key, offset, size) of a root storage.
                const StorageId::View v = *id.view;
                if (v.offset < 0 || v.size < 0 || v.offset > id.numel ||
                    v.size > id.numel - v.offset)
                    throw Error::corrupt(where, "a malformed storage view");
                Object* s = storageObject(id, make);
                s->tensor().numel = v.size;
                s->integer = v.offset;  // elements into the root storage
                return s;
            });
        const python::Pickle keys = python::decode(bytes, &pos, where, none);
        if (keys.root->type != Type::List)
            throw Error::corrupt(where, "the list of storage keys is missing");
        // Each storage: its element count, then its elements.
        std::map<std::string, std::uint64_t> starts;
        std::uint64_t at = pos;
        for (const Object* key : keys.root->items) {
            const auto id = key->type == Type::Str ? ids.find(key->text) : ids.end();
            if (id == ids.end())
                throw Error::corrupt(where, "a storage key that no tensor names");
            const std::string count = file().readRange(at, 8, "a storage's size");
            std::uint64_t numel = 0;
            for (int i = 0; i < 8; ++i)
                numel |= std::uint64_t(static_cast<unsigned char>(count[i])) << (8 * i);
            if (numel != std::uint64_t(id->second.numel))
                throw Error::corrupt(where, "storage " + key->text + " holds " +
                                                std::to_string(numel) +
                                                " elements where its tensors say " +
                                                std::to_string(id->second.numel));
            starts[key->text] = at + 8;
            const std::size_t item = id->second.dtype ? itemSize(*id->second.dtype) : 0;
            if (item == 0)  // its elements' size is unknown: nothing after it can be found
                break;
            at += 8 + numel * item;
        }
        const StorageLocator locate = [&](const Object& storage) {
            const auto start = starts.find(storage.text);
            if (start == starts.end())
                throw Error::corrupt(where, "storage " + storage.text + " is not in the file");
            StorageInfo info = file().fileInfo();
            info.offset =
                start->second + std::uint64_t(storage.integer) * itemSize(storage.tensor().dtype);
            return info;
        };
        return buildPythonTree(object, self, locate);
    }
};

class LegacyTorchFormat final : public StoreFormat {
public:
    std::string_view name() const override { return "torch legacy"; }
    int score(const StoreProbe& probe) const override {
        return probe.source && startsWithLegacyMagic(probe.head) ? 60 : 0;
    }
    std::shared_ptr<const Store> open(const StoreProbe& probe, const StoreOptions&) const override {
        return std::make_shared<LegacyTorchStore>(probe.source);
    }
};

}  // namespace

std::shared_ptr<const Store> openTorchStream(std::shared_ptr<const ByteSource> source,
                                             const StoreOptions& options) {
    std::string head(static_cast<std::size_t>(std::min<std::uint64_t>(source->size(), 4096)), '\0');
    source->readAt(0, head.data(), head.size());
    const std::string first = zipFirstEntryName(head);
    if (endsWith(first, "data.pkl"))
        return std::make_shared<TorchZipStore>(
            openZipContainer(source, options.inflateCacheBytes),
            first.substr(0, first.size() - std::string_view("data.pkl").size()));
    if (startsWithLegacyMagic(head))
        return std::make_shared<LegacyTorchStore>(std::move(source));
    throw Error::corrupt(source->name(), "not a torch.save stream");
}

std::shared_ptr<const StoreFormat> torchCheckpointFormat() {
    return std::make_shared<TorchCheckpointFormat>();
}

std::shared_ptr<const StoreFormat> legacyTorchFormat() {
    return std::make_shared<LegacyTorchFormat>();
}

}  // namespace tensordict
