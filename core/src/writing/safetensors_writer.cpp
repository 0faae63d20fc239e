#include "writing/safetensors_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <regex>

#include "formats/safetensors.h"
#include "sources/copy_steps.h"
#include "tensordict/error.h"
#include "tensordict/guarded_read.h"
#include "tensordict/keys.h"
#include "tensordict/worker_threads.h"
#include "writing/atomic_file.h"
#include "writing/progress.h"

namespace tensordict {
namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kPiece = 16u << 20;             // bytes a task copies
constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;  // as the safetensors library refuses
constexpr const char* kIndexName = "model.safetensors.index.json";
constexpr const char* kLoneName = "model.safetensors";

struct Tensor {
    std::string name;  // the dotted key path
    const Node* leaf = nullptr;
};

std::string sysError(const std::string& what) {
    return what + ": " + std::strerror(errno);
}

bool holdsTensor(const Node& node) {
    if (node.isTensor() || node.isError())
        return true;  // an error is refused where it is
    for (const Node* child : node.children())
        if (holdsTensor(*child))
            return true;
    return false;
}

// The tensors of the tree in its order, named by their dotted key paths.
std::vector<Tensor> tensorsOf(const TensorDict& data, const SaveOptions& options) {
    std::vector<Tensor> out;
    std::map<std::string, std::string> named;  // dotted name -> the key it came from
    std::vector<const Node*> pending{&data.root()};
    while (!pending.empty()) {
        const Node* node = pending.back();
        pending.pop_back();
        const std::string keyText = formatKeyPath(node->keyPath());
        // A part not decoded here (a quantized tensor) is no tensor to write:
        // left out and named, as values are; alone, it is refused.
        if (node->isUnread() && node != &data.root()) {
            if (options.skipped)
                options.skipped(keyText);
            continue;
        }
        if (node->isError())
            throw Error(*node->failure());
        if (node->isTensor()) {
            if (node->leaf().isNested)
                throw Error::unsupported(keyText, "a nested tensor, which safetensors cannot hold");
            if (!node->leaf().storage.outsideTarget().empty() && !options.allowOutsideLinks)
                throw Error::denied(keyText, "its file is a symbolic link to " +
                                                 node->leaf().storage.outsideTarget() +
                                                 ", outside the dataset; refusing to copy it "
                                                 "(allow links that leave the dataset to save "
                                                 "it anyway)");
            if (dtypeInfo(node->leaf().dtype).packedBits)
                throw Error::unsupported(keyText,
                                         "a " + std::string(*safetensorsName(node->leaf().dtype)) +
                                             " tensor: writing packed sub-byte floats "
                                             "is not supported");
            if (!safetensorsName(node->leaf().dtype))
                throw Error::unsupported(keyText, "safetensors has no dtype for " +
                                                      std::string(dtypeName(node->leaf().dtype)));
            std::string name;
            for (const std::string& k : node->keyPath())
                name += (name.empty() ? "" : ".") + k;
            if (name.empty())
                name = "tensor";  // a lone tensor saved as a file
            const auto [it, fresh] = named.emplace(name, keyText);
            if (!fresh)
                throw Error::invalid(keyText, "its dotted name \"" + name +
                                                  "\" is also the name of " + it->second +
                                                  ": safetensors keys must differ");
            out.push_back({std::move(name), node});
            continue;
        }
        // A value, or a part that holds no tensor (a list of numbers): told
        // once, as a whole; safetensors holds tensors only.
        const bool branch = node->isCollection() || node->kind() == NodeKind::Container ||
                            node->kind() == NodeKind::Object;
        if (node != &data.root() && (!branch || !holdsTensor(*node))) {
            if (options.skipped)
                options.skipped(keyText);
            continue;
        }
        const std::size_t at = pending.size();
        for (const Node* child : node->children())
            pending.push_back(child);
        std::reverse(pending.begin() + static_cast<std::ptrdiff_t>(at), pending.end());
    }
    return out;
}

// One file's layout, as the safetensors library serializes: by descending
// dtype rank, then name; a compact JSON header with __metadata__ first,
// padded with spaces to 8 bytes.
struct Layout {
    std::string header;                                           // with its 8-byte length in front
    std::vector<std::pair<const Tensor*, std::uint64_t>> places;  // tensor, its offset in the file
    std::uint64_t size = 0;
};

Layout layoutOf(std::vector<const Tensor*> tensors, const std::string& where) {
    std::stable_sort(tensors.begin(), tensors.end(), [](const Tensor* a, const Tensor* b) {
        const int ra = safetensorsRank(a->leaf->leaf().dtype),
                  rb = safetensorsRank(b->leaf->leaf().dtype);
        return ra != rb ? ra > rb : a->name < b->name;
    });
    Value::Object header{{"__metadata__", Value(Value::Object{{"format", Value("pt")}})}};
    std::uint64_t offset = 0;
    std::vector<std::uint64_t> offsets;
    for (const Tensor* t : tensors) {
        const TensorLeaf& l = t->leaf->leaf();
        Value::List shape;
        for (std::int64_t d : l.shape)
            shape.push_back(Value(d));
        header.emplace_back(
            t->name, Value(Value::Object{
                         {"dtype", Value(std::string(*safetensorsName(l.dtype)))},
                         {"shape", Value(std::move(shape))},
                         {"data_offsets",
                          Value(Value::List{Value(static_cast<std::int64_t>(offset)),
                                            Value(static_cast<std::int64_t>(offset + l.nbytes))})},
                     }));
        offsets.push_back(offset);
        offset += l.nbytes;
    }
    std::string json = toJson(Value(std::move(header)), JsonStyle::Compact);
    json.append((8 - json.size() % 8) % 8, ' ');
    if (json.size() > kMaxHeaderBytes)
        throw Error::unsupported(where, "the header would be " + std::to_string(json.size()) +
                                            " bytes, over safetensors' limit of 100 MB (" +
                                            std::to_string(tensors.size()) + " tensors)");
    Layout layout;
    std::uint64_t n = json.size();
    for (int i = 0; i < 8; ++i)
        layout.header.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
    layout.header += json;
    for (std::size_t i = 0; i < tensors.size(); ++i)
        layout.places.emplace_back(tensors[i], layout.header.size() + offsets[i]);
    layout.size = layout.header.size() + offset;
    return layout;
}

// A piece of one tensor's bytes to copy into its file.
struct Piece {
    std::size_t file = 0;
    const Tensor* tensor = nullptr;
    std::uint64_t at = 0;                  // where the tensor starts in the file
    std::uint64_t offset = 0, length = 0;  // of the tensor's bytes
    bool whole = false;                    // read front to back (not by range)
};

// Writes each layout to its path (progress names the file by its name in
// `shown`), every tensor's bytes on `threads` threads.
void writeFiles(const std::vector<std::string>& paths, const std::vector<std::string>& shown,
                const std::vector<Layout>& layouts, int threads, ProgressTracker& progress) {
    std::vector<int> fds(paths.size(), -1);
    const auto closeAll = [&] {
        for (int& fd : fds)
            if (fd >= 0)
                ::close(std::exchange(fd, -1));
    };
    std::vector<Piece> pieces;
    try {
        for (std::size_t f = 0; f < paths.size(); ++f) {
            fds[f] = ::open(paths[f].c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
            if (fds[f] < 0)
                throw Error::io(paths[f], sysError("cannot create"));
            if (::ftruncate(fds[f], static_cast<off_t>(layouts[f].size)) != 0)
                throw Error::io(paths[f], sysError("cannot size"));
            writeAllAt(fds[f], layouts[f].header.data(), layouts[f].header.size(), 0, paths[f]);
            for (const auto& [tensor, at] : layouts[f].places) {
                const std::uint64_t n = tensor->leaf->leaf().nbytes;
                if (!tensor->leaf->readsAnyRange()) {
                    pieces.push_back({f, tensor, at, 0, n, true});
                    continue;
                }
                for (std::uint64_t o = 0; o < n; o += kPiece)
                    pieces.push_back({f, tensor, at, o, std::min(kPiece, n - o), false});
            }
        }
        progress.started(shown.front());
        // A thread's buffer is made when it first copies through one (pieces
        // copied in the kernel need none).
        parallelFor(
            pieces.size(), std::max(threads, 1), [] { return std::vector<std::byte>(); },
            [&](std::vector<std::byte>& buffer, std::size_t i) {
                const Piece& p = pieces[i];
                const Node& leaf = *p.tensor->leaf;
                const auto ensureBuffer = [&buffer] {
                    if (buffer.empty())
                        buffer.resize(kPiece);
                };
                if (p.whole) {
                    ensureBuffer();
                    LeafReader reader(leaf);
                    std::uint64_t done = 0;
                    while (const std::size_t got = reader.read(buffer.data(), buffer.size())) {
                        writeAllAt(fds[p.file], buffer.data(), got, p.at + done, paths[p.file]);
                        done += got;
                        progress.add(got, shown[p.file]);
                        progress.throwIfCancelled(paths[p.file]);
                    }
                    return;
                }
                // By the local file the leaf is one range of (in the kernel, or
                // through its own small buffer); else read and written here.
                if (!leaf.copyInto(p.offset, p.length, fds[p.file], p.at + p.offset)) {
                    ensureBuffer();
                    leaf.readInto(p.offset, buffer.data(), p.length);
                    writeAllAt(fds[p.file], buffer.data(), p.length, p.at + p.offset,
                               paths[p.file]);
                }
                progress.add(p.length, shown[p.file]);
            },
            &progress.cancelToken(), paths.front());
        for (std::size_t f = 0; f < paths.size(); ++f) {
            if (::close(std::exchange(fds[f], -1)) != 0)
                throw Error::io(paths[f], sysError("cannot close"));
            progress.fileDone(shown[f]);
        }
    } catch (...) {
        closeAll();
        throw;
    }
}

// Removes the temporaries of a save that did not finish.
struct Temporaries {
    std::vector<std::string> paths;
    ~Temporaries() {
        for (const std::string& p : paths) {
            std::error_code ec;
            fs::remove(p, ec);
        }
    }
};

void renameInto(const std::string& from, const fs::path& to, bool atomic) {
    if (atomic)
        syncFile(from);
    if (::rename(from.c_str(), to.c_str()) != 0)
        throw Error::io(to.string(), sysError("cannot rename into place"));
}

// "model-00001-of-00004.safetensors", as save_pretrained names shards.
std::string shardName(std::size_t i, std::size_t n) {
    char name[64];
    std::snprintf(name, sizeof name, "model-%05zu-of-%05zu.safetensors", i + 1, n);
    return name;
}

// The index as transformers writes it: json.dumps(indent=2, sort_keys=True) + "\n".
std::string indexJson(std::uint64_t totalSize, const std::map<std::string, std::string>& map) {
    const auto quoted = [](const std::string& s) { return toJson(Value(s), JsonStyle::Python); };
    std::string out = "{\n  \"metadata\": {\n    \"total_size\": " + std::to_string(totalSize) +
                      "\n  },\n  \"weight_map\": {";
    bool first = true;
    for (const auto& [name, shard] : map) {  // std::map: sorted, as sort_keys sorts str keys
        out += (first ? "\n    " : ",\n    ") + quoted(name) + ": " + quoted(shard);
        first = false;
    }
    out += map.empty() ? "}\n}\n" : "\n  }\n}\n";
    return out;
}

}  // namespace

void checkSafetensorsSource(const TensorDict& data, const SaveOptions& options) {
    SaveOptions quiet = options;
    quiet.skipped = nullptr;
    tensorsOf(data, quiet);
}

void saveSafetensorsFile(const TensorDict& data, const fs::path& target,
                         const SaveOptions& options) {
    const std::vector<Tensor> tensors = tensorsOf(data, options);
    std::vector<const Tensor*> all;
    for (const Tensor& t : tensors)
        all.push_back(&t);
    const std::vector<Layout> layouts{layoutOf(all, target.string())};
    ProgressTracker progress(options, layouts[0].size, 1);
    Temporaries temporaries;
    temporaries.paths.push_back(temporarySibling(target));
    writeFiles(temporaries.paths, {target.string()}, layouts, options.numThreads, progress);
    renameInto(temporaries.paths[0], target, options.atomic);
    temporaries.paths.clear();
    if (options.atomic)
        syncDirectoryOf(target);
}

void saveHuggingFaceFolder(const TensorDict& data, const fs::path& target,
                           const SaveOptions& options) {
    if (options.maxShardSize == 0)
        throw Error::invalid(target.string(), "the largest shard size must be more than 0");
    const std::vector<Tensor> tensors = tensorsOf(data, options);
    // huggingface_hub's split_state_dict_into_shards_factory: in state-dict
    // order, a tensor joins the current shard unless it would pass the
    // limit; one larger than the limit is a shard of its own.
    std::vector<std::vector<const Tensor*>> shards;
    std::vector<const Tensor*> current;
    std::uint64_t currentSize = 0, totalSize = 0;
    for (const Tensor& t : tensors) {
        const std::uint64_t n = t.leaf->leaf().nbytes;
        totalSize += n;
        if (n > options.maxShardSize) {
            shards.push_back({&t});
            continue;
        }
        if (currentSize + n > options.maxShardSize) {
            shards.push_back(std::move(current));
            current.clear();
            currentSize = 0;
        }
        current.push_back(&t);
        currentSize += n;
    }
    if (!current.empty() || shards.empty())
        shards.push_back(std::move(current));

    std::error_code ec;
    if (fs::exists(target, ec) && !fs::is_directory(target, ec))
        throw Error::invalid(target.string(), "exists and is not a folder");
    fs::create_directories(target);

    std::vector<std::string> names;
    std::map<std::string, std::string> weightMap;
    std::vector<Layout> layouts;
    std::uint64_t bytes = 0;
    for (std::size_t i = 0; i < shards.size(); ++i) {
        names.push_back(shards.size() == 1 ? kLoneName : shardName(i, shards.size()));
        for (const Tensor* t : shards[i])
            weightMap[t->name] = names.back();
        layouts.push_back(layoutOf(shards[i], (target / names.back()).string()));
        bytes += layouts.back().size;
    }
    ProgressTracker progress(options, bytes, static_cast<int>(names.size()));
    // Every file beside its name first; renamed into place only once all are
    // written, the index last: a failure or a cancel leaves the folder as it was.
    Temporaries temporaries;
    std::vector<std::string> shown;
    for (const std::string& name : names) {
        temporaries.paths.push_back(temporarySibling(target / name));
        shown.push_back((target / name).string());
    }
    writeFiles(temporaries.paths, shown, layouts, options.numThreads, progress);
    if (shards.size() > 1) {
        const std::string index = temporarySibling(target / kIndexName);
        temporaries.paths.push_back(index);
        const std::string text = indexJson(totalSize, weightMap);
        const int fd = ::open(index.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
            throw Error::io(index, sysError("cannot create"));
        try {
            writeAllAt(fd, text.data(), text.size(), 0, index);
        } catch (...) {
            ::close(fd);
            throw;
        }
        ::close(fd);
        names.push_back(kIndexName);
    }
    for (std::size_t i = 0; i < names.size(); ++i)
        renameInto(temporaries.paths[i], target / names[i], options.atomic);
    temporaries.paths.clear();
    // What an earlier save left that this one replaces (as save_pretrained
    // cleans its folder): shards the new index does not name, and the index
    // or lone file of the other layout.
    static const std::regex kShard("model-[0-9]{5}-of-[0-9]{5}\\.safetensors");
    for (const auto& entry : fs::directory_iterator(target, ec)) {
        const std::string name = entry.path().filename().string();
        const bool stale = std::regex_match(name, kShard) ||
                           (shards.size() == 1 && name == kIndexName) ||
                           (shards.size() > 1 && name == kLoneName);
        if (stale && std::find(names.begin(), names.end(), name) == names.end())
            fs::remove(entry.path(), ec);
    }
    if (options.atomic)
        syncDirectoryOf(target / names.front());
}

}  // namespace tensordict
