// The registry of container formats (by content), opening a location
// through its transport (sources/transports.cpp) and the format that reads
// it, and what every Store shares.

#include <algorithm>
#include <cstring>
#include <mutex>
#include <vector>

#include "containers/builtin_stores.h"
#include "tensordict/error.h"
#include "tensordict/guarded_read.h"

namespace tensordict {
namespace {

struct Registry {
    std::mutex mutex;
    std::vector<std::shared_ptr<const StoreFormat>> formats;

    Registry() {
        formats.push_back(directoryFormat());
        formats.push_back(archiveFormat());
        formats.push_back(torchCheckpointFormat());
        formats.push_back(legacyTorchFormat());
        formats.push_back(npyFormat());
        formats.push_back(npzFormat());
        formats.push_back(safetensorsFormat());
        formats.push_back(consolidatedFormat());
        formats.push_back(shardedFormat());
        formats.push_back(modelFolderFormat());
        formats.push_back(dcpFormat());
        formats.push_back(replayBufferFormat());
        formats.push_back(stackFormat());
    }
};

Registry& registry() {
    static Registry instance;
    return instance;
}

// What a file that no format reads looks like, from its first bytes.
std::string describeContent(const StoreProbe& probe) {
    if (probe.info.kind == SourceInfo::Kind::Directory)
        return "a folder with no meta.json";
    const std::string& h = probe.head;
    const auto starts = [&](std::string_view magic) {
        return h.compare(0, magic.size(), magic) == 0;
    };
    if (probe.info.size == 0)
        return "an empty file";
    if (starts("\x1f\x8b"))
        return "a gzip stream (unpack it first)";
    if (starts("BZh"))
        return "a bzip2 stream (unpack it first)";
    if (starts("\xfd"
               "7zXZ"))
        return "an xz stream (unpack it first)";
    if (starts("7z\xbc\xaf"))
        return "a 7-Zip archive";
    if (starts("\x89HDF"))
        return "an HDF5 file";
    if (h.size() > 262 && h.compare(257, 5, "ustar") == 0)
        return "a tar archive (unpack it first)";
    if (h.size() >= 2 && static_cast<unsigned char>(h[0]) == 0x80 &&
        static_cast<unsigned char>(h[1]) <= 5)
        return "a Python pickle (protocol " + std::to_string(int(h[1])) +
               ") that is not a torch.save checkpoint";
    // Text: printable ASCII or UTF-8 (bytes >= 0x80), line breaks and tabs.
    const std::size_t n = std::min<std::size_t>(h.size(), 512);
    const bool text = std::all_of(h.begin(), h.begin() + static_cast<long>(n), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return u >= 0x20 || c == '\n' || c == '\r' || c == '\t';
    });
    if (text) {
        const std::size_t end = std::min(h.find_first_of("\r\n"), h.size());
        return "text (\"" + h.substr(0, std::min<std::size_t>(end, 60)) + (end > 60 ? "…" : "") +
               "\")";
    }
    static const char* hex = "0123456789abcdef";
    std::string first;
    for (std::size_t i = 0; i < std::min<std::size_t>(h.size(), 8); ++i) {
        const auto b = static_cast<unsigned char>(h[i]);
        first += hex[b >> 4];
        first += hex[b & 15];
    }
    return "binary data of an unknown kind (its first bytes are 0x" + first + ")";
}

}  // namespace

void registerStoreFormat(std::shared_ptr<const StoreFormat> format) {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto& list = r.formats;
    list.erase(std::remove_if(list.begin(), list.end(),
                              [&](const auto& f) { return f->name() == format->name(); }),
               list.end());
    list.push_back(std::move(format));
}

std::shared_ptr<const Store> openStore(const std::string& location, const StoreOptions& options) {
    StoreProbe probe;
    probe.location = location;
    probe.transport = transportFor(location, options.transport);
    probe.shardOpensModel = options.shardOpensModel;
    probe.info = probe.transport->stat(location);
    switch (probe.info.kind) {
        case SourceInfo::Kind::Missing:
            throw Error::notFound(location, probe.info.missing.empty() ? "No such file or directory"
                                                                       : probe.info.missing);
        case SourceInfo::Kind::Other:
            throw Error::unsupported(location, "neither a directory nor a regular file");
        case SourceInfo::Kind::File: {
            probe.source = probe.transport->open(location);
            probe.head.resize(
                static_cast<std::size_t>(std::min<std::uint64_t>(4096, probe.source->size())));
            probe.source->readAt(0, probe.head.data(), probe.head.size());
            break;
        }
        case SourceInfo::Kind::Directory:
            break;
    }
    std::vector<std::shared_ptr<const StoreFormat>> formats;
    {
        Registry& r = registry();
        std::lock_guard<std::mutex> lock(r.mutex);
        formats = r.formats;
    }
    std::shared_ptr<const StoreFormat> best;
    int bestScore = 0;
    for (const bool beyondTheHead : {false, true}) {
        probe.mayReadBeyondHead = beyondTheHead;
        for (const auto& format : formats) {
            const int score = format->score(probe);
            if (score > bestScore)
                best = format, bestScore = score;
        }
        if (best)
            break;
    }
    if (!best)
        throw Error::unsupported(
            location,
            "none of the formats tdstudio opens (tensordict memmap directories and "
            ".tdz archives, torch.save checkpoints, safetensors, NumPy .npy and "
            ".npz, consolidated tensordicts, sharded models): it looks like " +
                describeContent(probe));
    return best->open(probe, options);
}

std::vector<Failure> Store::failuresBesideTheTree() const {
    std::lock_guard<std::mutex> lock(besideMutex_);
    return beside_;
}

void Store::keepFailureBesideTheTree(const Failure& failure) const {
    std::lock_guard<std::mutex> lock(besideMutex_);
    // A tree built again finds it again.
    const auto same = [&](const Failure& f) {
        return f.kind == failure.kind && f.where == failure.where && f.reason == failure.reason;
    };
    if (std::none_of(beside_.begin(), beside_.end(), same))
        beside_.push_back(failure);
}

std::unique_ptr<Node> Store::buildTree(const std::shared_ptr<const Store>&) const {
    return nullptr;
}

LeafBytes Container::leafBytesRange(const StorageInfo& info, std::uint64_t offset,
                                    std::uint64_t length, std::size_t alignment) const {
    // All of the file, once: a reader going through it part by part must
    // not inflate a longer prefix for every part.
    const LeafBytes whole = leafBytes(info, std::max(offset + length, info.size), alignment);
    return {std::shared_ptr<std::byte>(whole.data, whole.data.get() + offset),
            static_cast<std::size_t>(length)};
}

void Container::readLeafRange(const StorageInfo& info, std::uint64_t offset, std::byte* out,
                              std::size_t n) const {
    const LeafBytes part = leafBytesRange(info, offset, n, 1);
    // A mapping of a file cut short meanwhile faults: a change, not a crash.
    if (!tryGuardedCopy(out, part.data.get(), n))
        throw Error::changed(describe(info.path));
}

void Container::reportIntegrityProblem(const StorageInfo& info, const std::string& message) const {
    std::lock_guard<std::mutex> lock(problemsMutex_);
    problems_[info.path] = message;
    hasProblems_.store(true, std::memory_order_release);
}

std::string Container::integrityProblem(const StorageInfo& info) const {
    if (!hasProblems_.load(std::memory_order_acquire))
        return {};
    std::lock_guard<std::mutex> lock(problemsMutex_);
    const auto it = problems_.find(info.path);
    return it == problems_.end() ? std::string() : it->second;
}

std::string joinPath(const std::string& dir, const std::string& name) {
    return dir.empty() ? name : dir + "/" + name;
}

}  // namespace tensordict
