// The `.metadata` of a DCP directory, read as data (dcp_metadata.h), as
// torch 2.x writes it (torch/distributed/checkpoint/metadata.py,
// filesystem.py, default_planner.py, _nested_dict.py).

#include "formats/dcp_metadata.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "formats/dcp_transforms.h"
#include "tensordict/keys.h"
#include "values/python_objects.h"

namespace tensordict {
namespace {

using python::Object;
using Type = Object::Type;

constexpr std::string_view kMetadataModule = "torch.distributed.checkpoint.metadata.";
// The classes a .metadata holds; anything else is refused, never rebuilt.
constexpr std::string_view kKnownClasses[] = {
    "torch.distributed.checkpoint.metadata.Metadata",
    "torch.distributed.checkpoint.metadata.TensorStorageMetadata",
    "torch.distributed.checkpoint.metadata.BytesStorageMetadata",
    "torch.distributed.checkpoint.metadata.ChunkStorageMetadata",
    "torch.distributed.checkpoint.metadata.TensorProperties",
    "torch.distributed.checkpoint.metadata.MetadataIndex",
    "torch.distributed.checkpoint.metadata.StorageMeta",
    "torch.distributed.checkpoint.metadata._MEM_FORMAT_ENCODING",
    "torch.distributed.checkpoint.filesystem._StorageInfo",
    // torch 2.3 and earlier: TensorProperties and its enum where ShardedTensor keeps them.
    "torch.distributed._shard.sharded_tensor.metadata.TensorProperties",
    "torch.distributed._shard.sharded_tensor.metadata.MEM_FORMAT_ENCODING",
    // StorageMeta's checkpoint_id, a path (3.13 moved the class to pathlib._local).
    "pathlib.PosixPath",
    "pathlib.WindowsPath",
    "pathlib._local.PosixPath",
    "pathlib._local.WindowsPath",
};

bool isKnownClass(const std::string& name) {
    return std::find(std::begin(kKnownClasses), std::end(kKnownClasses), name) !=
           std::end(kKnownClasses);
}

// A dataclass's fields: BUILD's state dict, or the slots dict of (None, slots).
const Object* fieldsOf(const Object* o) {
    if (!o || o->type != Type::Instance || !o->state)
        return nullptr;
    const Object* s = o->state;
    if (s->type == Type::Tuple && s->items.size() == 2 && s->items[1]->type == Type::Dict)
        return s->items[1];
    return s->type == Type::Dict ? s : nullptr;
}

const Object* field(const Object* o, std::string_view name) {
    const Object* fields = fieldsOf(o);
    if (!fields)
        return nullptr;
    for (const auto& [k, v] : fields->entries)
        if (k->type == Type::Str && k->text == name)
            return v;
    return nullptr;
}

bool isA(const Object* o, std::string_view cls) {
    return o && o->type == Type::Instance &&
           o->text.size() == kMetadataModule.size() + cls.size() &&
           o->text.compare(0, kMetadataModule.size(), kMetadataModule) == 0 &&
           o->text.compare(kMetadataModule.size(), cls.size(), cls) == 0;
}

class Reader {
public:
    explicit Reader(std::string where) : where_(std::move(where)) {}

    [[noreturn]] void fail(const std::string& reason) const {
        throw Error::corrupt(where_, reason);
    }

    std::vector<std::int64_t> ints(const Object* o, const std::string& what) const {
        if (!o || (o->type != Type::Tuple && o->type != Type::List))
            fail(what + " is not a tuple of integers");
        std::vector<std::int64_t> v;
        v.reserve(o->items.size());
        for (const Object* e : o->items) {
            if (e->type != Type::Int || e->integer < 0)
                fail(what + " holds something other than a non-negative integer");
            v.push_back(e->integer);
        }
        return v;
    }

    std::int64_t integer(const Object* o, const std::string& what) const {
        if (!o || o->type != Type::Int || o->integer < 0)
            fail(what + " is not a non-negative integer");
        return o->integer;
    }

    const std::string& text(const Object* o, const std::string& what) const {
        if (!o || o->type != Type::Str)
            fail(what + " is not a string");
        return o->text;
    }

private:
    std::string where_;
};

// Where a chunk or byte item's stream is (a _StorageInfo).
struct StreamPlace {
    std::string file;
    std::size_t fileIndex = 0;  // of StreamPlaces::files
    std::uint64_t offset = 0, length = 0;
    // What the stream was written through ("stream.zstd/1"), to undo in this order.
    std::vector<std::string> transforms;
};

// FileSystemWriter(serialization_format=SAFETENSORS) records a chunk as
// exactly its tensor's bytes, at the start of its file's safetensors data;
// a torch.save stream is always longer than the data it holds.
bool isSafetensorsChunk(const StreamPlace& place, std::uint64_t tensorBytes) {
    return place.transforms.empty() && place.length == tensorBytes;
}

// The streams of one fqn's chunks (a byte item's: one, at no offsets),
// sorted by their offsets: a tensor's chunks are found by a binary search
// among its own, with no key made and no node allocated per chunk.
class FqnStreams {
public:
    void add(std::vector<std::int64_t> offsets, StreamPlace place) {
        entries_.push_back({std::move(offsets), std::move(place)});
    }
    // Sorts; of chunks named twice the last holds, as in the dict Python reads.
    void settle() {
        std::stable_sort(entries_.begin(), entries_.end(),
                         [](const Entry& a, const Entry& b) { return a.offsets < b.offsets; });
        std::vector<Entry> kept;
        kept.reserve(entries_.size());
        for (Entry& e : entries_) {
            if (!kept.empty() && kept.back().offsets == e.offsets)
                kept.back() = std::move(e);
            else
                kept.push_back(std::move(e));
        }
        entries_ = std::move(kept);
    }
    const StreamPlace* find(const std::vector<std::int64_t>& offsets) const {
        const auto it = std::lower_bound(
            entries_.begin(), entries_.end(), offsets,
            [](const Entry& e, const std::vector<std::int64_t>& o) { return e.offsets < o; });
        return it != entries_.end() && it->offsets == offsets ? &it->place : nullptr;
    }

private:
    struct Entry {
        std::vector<std::int64_t> offsets;
        StreamPlace place;
    };
    std::vector<Entry> entries_;
};

// Every stream's place (storage_data: MetadataIndex -> _StorageInfo), by
// fqn, and the files that hold them, in the order first named.
struct StreamPlaces {
    std::unordered_map<std::string, FqnStreams> byFqn;
    std::vector<std::string> files;

    // The streams of `fqn`, or nullptr when storage_data names none.
    const FqnStreams* of(const std::string& fqn) const {
        const auto it = byFqn.find(fqn);
        return it == byFqn.end() ? nullptr : &it->second;
    }
};

StreamPlaces readStreamPlaces(const Object* storageData, const Reader& r) {
    StreamPlaces places;
    if (!storageData || storageData->type != Type::Dict)
        return places;
    std::map<std::string, std::size_t> fileIndex;
    for (const auto& [k, v] : storageData->entries) {
        if (!isA(k, "MetadataIndex"))
            r.fail("a storage_data key that is not a MetadataIndex");
        const std::string& fqn = r.text(field(k, "fqn"), "a MetadataIndex's fqn");
        std::vector<std::int64_t> offsets;
        if (const Object* o = field(k, "offset"); o && o->type != Type::None)
            offsets = r.ints(o, "a MetadataIndex's offset");
        if (!v || v->type != Type::Instance ||
            v->text != "torch.distributed.checkpoint.filesystem._StorageInfo")
            r.fail("the storage of \"" + fqn + "\" is not a _StorageInfo");
        StreamPlace place;
        place.file = r.text(field(v, "relative_path"), "a _StorageInfo's relative_path");
        place.offset = std::uint64_t(r.integer(field(v, "offset"), "a _StorageInfo's offset"));
        place.length = std::uint64_t(r.integer(field(v, "length"), "a _StorageInfo's length"));
        if (const Object* d = field(v, "transform_descriptors");
            d && (d->type == Type::List || d->type == Type::Tuple))
            for (const Object* t : d->items)
                place.transforms.push_back(r.text(t, "a transform descriptor of \"" + fqn + "\""));
        if (place.file.empty() || place.file.find('/') != std::string::npos || place.file == "." ||
            place.file == "..")
            r.fail("the stream of \"" + fqn + "\" is in \"" + place.file +
                   "\", not a file of the checkpoint's directory");
        const auto file = fileIndex.emplace(place.file, places.files.size());
        if (file.second)
            places.files.push_back(place.file);
        place.fileIndex = file.first->second;
        places.byFqn[fqn].add(std::move(offsets), std::move(place));
    }
    for (auto& [fqn, streams] : places.byFqn)
        streams.settle();
    return places;
}

// Keys as the planner flattened them (planner_data): fqn -> path elements.
std::map<std::string, std::vector<std::string>> plannerPaths(const Object* plannerData) {
    std::map<std::string, std::vector<std::string>> paths;
    if (!plannerData || plannerData->type != Type::Dict)
        return paths;
    for (const auto& [k, v] : plannerData->entries) {
        if (k->type != Type::Str || (v->type != Type::Tuple && v->type != Type::List))
            continue;
        std::vector<std::string> path;
        for (const Object* e : v->items)
            path.push_back(python::keyText(*e));
        if (!path.empty())
            paths[k->text] = std::move(path);
    }
    return paths;
}

// The elements of a box of `sizes`, or -1 when they would pass 2^62.
std::int64_t elementsOf(const std::vector<std::int64_t>& sizes) {
    std::int64_t numel = 1;
    for (std::int64_t s : sizes)
        numel = numel < 0 || (s && numel > (std::int64_t(1) << 62) / s) ? -1 : numel * s;
    return numel;
}

// Reads state_dict_metadata's entries, each with its streams, recording
// every stream it finds in the facts (one item after another).
class ItemReader {
public:
    ItemReader(const Reader& r, const StreamPlaces& places, DcpFacts& facts, std::string location)
        : r_(r), places_(places), facts_(facts), location_(std::move(location)) {}

    // The stream of the last item's chunk at `offsets` (a byte item: none),
    // if storage_data has one. `limit`: what it may decode to, if it was
    // written through transforms; `tensorBytes`: a chunk's numel x element size.
    const StreamPlace* place(const FqnStreams* streams, const std::vector<std::int64_t>& offsets,
                             std::uint64_t limit, std::optional<std::uint64_t> tensorBytes) {
        const StreamPlace* place = streams ? streams->find(offsets) : nullptr;
        if (!place)
            return nullptr;
        facts_.streams.push_back({facts_.items.size() - 1, place->fileIndex, place->offset,
                                  place->length, place->transforms, limit,
                                  tensorBytes && isSafetensorsChunk(*place, *tensorBytes)});
        return place;
    }

    // A transform no reader here knows: why the item cannot be read.
    std::optional<Failure> unknownTransform(const StreamPlace& place,
                                            const std::string& fqn) const {
        try {
            checkStreamTransforms(place.transforms, location_ + ":" + fqn);
        } catch (const Error& e) {
            return e.failure();
        }
        return std::nullopt;
    }

    // A TensorStorageMetadata: the tensor and where each chunk's stream is,
    // or why it cannot be read (the metadata is read on past it).
    std::variant<DcpTensor, Failure> tensor(const std::string& fqn, const Object* v) {
        DcpTensor t;
        t.fqn = fqn;
        const Object* properties = field(v, "properties");
        // TensorProperties pickles its state as a tuple (dtype, layout,
        // requires_grad, memory format, pin_memory).
        const Object* state =
            properties && properties->type == Type::Instance ? properties->state : nullptr;
        const Object* dtype = state && state->type == Type::Tuple && !state->items.empty()
                                  ? state->items[0]
                                  : field(properties, "dtype");
        const std::optional<DType> type =
            dtype && dtype->type == Type::Global ? dtypeFromString(dtype->text) : std::nullopt;
        t.shape = r_.ints(field(v, "size"), "the size of \"" + fqn + "\"");
        t.numel = elementsOf(t.shape);
        const Object* chunks = field(v, "chunks");
        if (!chunks || chunks->type != Type::List)
            r_.fail("\"" + fqn + "\" has no list of chunks");
        std::string problem =
            !type
                ? "a dtype tdstudio does not know (" +
                      (dtype && dtype->type == Type::Global ? dtype->text : std::string("?")) + ")"
            : t.numel < 0 ? std::string("an impossible size")
                          : std::string();
        ErrorKind problemKind = ErrorKind::Corrupt;
        if (type)
            t.dtype = *type;
        if (std::uint64_t tensorBytes = 0;
            problem.empty() &&
            __builtin_mul_overflow(std::uint64_t(t.numel), itemSize(t.dtype), &tensorBytes))
            problem = "an impossible size";
        const FqnStreams* streams = places_.of(fqn);
        for (const Object* c : chunks->items) {
            if (!isA(c, "ChunkStorageMetadata"))
                r_.fail("a chunk of \"" + fqn + "\" is not a ChunkStorageMetadata");
            DcpChunk chunk;
            chunk.offsets = r_.ints(field(c, "offsets"), "a chunk's offsets");
            chunk.sizes = r_.ints(field(c, "sizes"), "a chunk's sizes");
            chunk.numel = elementsOf(chunk.sizes);
            // Its bytes, unless its size is impossible (before any rule compares them).
            std::uint64_t bytes = 0;
            if (chunk.numel >= 0 &&
                __builtin_mul_overflow(std::uint64_t(chunk.numel), itemSize(t.dtype), &bytes)) {
                chunk.numel = -1;
                bytes = 0;
            }
            const StreamPlace* at =
                place(streams, chunk.offsets,
                      std::max(bytes, bytes + kDcpStreamRecordsBytes),  // never below its bytes
                      chunk.numel < 0 ? std::nullopt : std::optional(bytes));
            if (!at) {
                if (problem.empty())
                    problem = "no file holds its chunk at " + formatShape(chunk.offsets) +
                              " (no storage_data)";
                continue;
            }
            if (const auto unknown = unknownTransform(*at, fqn); unknown && problem.empty()) {
                problem = unknown->reason;
                problemKind = unknown->kind;
            }
            chunk.transforms = at->transforms;
            chunk.file = at->fileIndex;
            chunk.offset = at->offset;
            chunk.length = at->length;
            chunk.inSafetensors = chunk.numel >= 0 && isSafetensorsChunk(*at, bytes);
            if (chunk.numel < 0 && problem.empty())
                problem = "a chunk of an impossible size";
            t.chunks.push_back(std::move(chunk));
        }
        if (problem.empty())
            problem = tilingProblem(t.whole(), t.boxes());
        if (!problem.empty())
            return Failure{problemKind, location_ + ":" + fqn, problem};
        return t;
    }

private:
    const Reader& r_;
    const StreamPlaces& places_;
    DcpFacts& facts_;
    const std::string location_;
};

}  // namespace

DcpMetadata readDcpMetadata(std::string_view bytes, const std::string& where,
                            const std::string& location) {
    std::size_t pos = 0;
    const python::Pickle pickle = python::decode(bytes, &pos, where, {});
    // Only the classes DCP writes, rebuilt as data; anything else is refused.
    for (const Object& o : pickle.objects)
        if (o.type == Type::Instance && !isKnownClass(o.text))
            throw Error::unsupported(where, "the metadata names " + o.text +
                                                ", which torch.distributed.checkpoint never "
                                                "writes; it is refused (nothing was run)");
    const Reader r(where);
    const Object* metadata = pickle.root;
    if (!isA(metadata, "Metadata"))
        r.fail("not a torch.distributed.checkpoint Metadata");
    const Object* stateDict = field(metadata, "state_dict_metadata");
    if (!stateDict || stateDict->type != Type::Dict)
        r.fail("the metadata has no state_dict_metadata");
    const StreamPlaces places = readStreamPlaces(field(metadata, "storage_data"), r);
    const auto paths = plannerPaths(field(metadata, "planner_data"));

    DcpMetadata out;
    out.facts.files = places.files;
    ItemReader reader(r, places, out.facts, location);
    for (const auto& [k, v] : stateDict->entries) {
        DcpEntry entry;
        entry.fqn = r.text(k, "a state_dict_metadata key");
        const auto path = paths.find(entry.fqn);
        entry.path = path != paths.end() ? path->second : std::vector<std::string>{entry.fqn};
        out.facts.items.push_back({entry.fqn, entry.path});
        if (isA(v, "BytesStorageMetadata")) {
            const StreamPlace* place =
                reader.place(places.of(entry.fqn), {}, kDcpMaxByteItemBytes, std::nullopt);
            if (!place)
                entry.content =
                    Failure{ErrorKind::Corrupt, where,
                            "no file holds the byte item \"" + entry.fqn + "\" (no storage_data)"};
            else if (const auto unknown = reader.unknownTransform(*place, entry.fqn))
                entry.content = *unknown;
            else
                entry.content =
                    DcpStream{place->fileIndex, place->offset, place->length, place->transforms};
        } else if (isA(v, "TensorStorageMetadata")) {
            std::variant<DcpTensor, Failure> read = reader.tensor(entry.fqn, v);
            if (Failure* failure = std::get_if<Failure>(&read))
                entry.content = std::move(*failure);
            else
                entry.content = std::move(std::get<DcpTensor>(read));
        } else {
            r.fail("\"" + entry.fqn + "\" is neither a tensor nor a byte item");
        }
        out.entries.push_back(std::move(entry));
    }
    return out;
}

}  // namespace tensordict
