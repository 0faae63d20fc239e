// Verifying a tensordict (check.h).
//
// An archive is checked in two passes over its bytes: the structure (the
// central directory, every local header against it, data descriptors,
// overlaps, names, alignment), then every entry's data once, on all
// threads, against its CRC-32 (stored entries in chunks whose CRCs are
// combined, compressed ones inflated as they are read). A directory's leaf
// files are read once too. Then the tree is loaded through a store that
// records every file the loader looks at: what it could not read is an
// error, every file or entry it never looked at an orphan.
//
// The kinds of problem (Problem::kind):
//   error    central_directory   the end records or the central directory cannot be read
//   error    local_header        a local header is missing or disagrees with the directory
//   error    data_descriptor     a data descriptor disagrees with the directory
//   error    overlap             an entry's bytes overlap another entry's or the directory
//   error    duplicate_name      two entries of one name
//   error    unsafe_name         a name that leaves the archive's root ("/x", "../x")
//   error    encrypted           an encrypted entry (tensordict never writes one)
//   error    unsupported_method  a compression method that cannot be read
//   error    crc_mismatch        an entry's data does not match its CRC-32
//   error    corrupt_stream      a compressed entry that cannot be inflated
//   error    size_mismatch       an entry that inflates to another size than recorded
//   error    read_error          a file that could not be read, or changed while read
//   error    missing_meta_json   a node's meta.json is missing
//   error    missing_file        a leaf's file or entry is missing
//   error    short_file          a leaf's file holds fewer bytes than its shape needs
//   error    unreadable          a part the loader could not read for another reason
//   error    duplicate_key       a key named twice in one meta.json (one value is lost)
//   error    chunks              a DCP tensor whose chunks leave gaps, overlap or do not match
//   warning  unaligned_payload   a stored .memmap payload off a 64-byte boundary (copied to load)
//   warning  stale_tail          a leaf's file is longer than its shape needs
//   warning  orphan              a file or entry that no meta.json names
//   warning  main_class          a class of __main__, which loads nowhere else (#1051)
//   warning  pickle_sidecar      a pickle that would need code to load (#1763)
//   warning  outside_link        a leaf file reached through a link out of the dataset (#1762)
//   warning  stale_temporary     the temporary of an interrupted save beside the dataset
//   warning  access_index        a deflate entry's access points that do not fit it (ignored)

#include "tensordict/check.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "access_index.h"
#include "atomic_file.h"
#include "builtin_stores.h"
#include "codec.h"
#include "formats/dcp.h"
#include "formats/dcp_transforms.h"
#include "formats/file_stores.h"
#include "formats/python_objects.h"
#include "formats/sharded.h"
#include "forwarding_store.h"
#include "loader.h"
#include "mapping.h"
#include "tensordict/datasets.h"
#include "tensordict/error.h"
#include "tensordict/guarded_read.h"
#include "tensordict/keys.h"
#include "tensordict/report.h"
#include "tensordict/store.h"
#include "tensordict/tensordict.h"
#include "tensordict/worker_threads.h"
#include "zip_layout.h"

namespace tensordict {

namespace fs = std::filesystem;

std::size_t CheckReport::errorCount() const {
    return static_cast<std::size_t>(
        std::count_if(problems.begin(), problems.end(),
                      [](const Problem& p) { return p.severity == Severity::Error; }));
}

std::size_t CheckReport::warningCount() const {
    return problems.size() - errorCount();
}

namespace {

constexpr std::uint64_t kChunk = 32ull << 20;  // a task of stored bytes: CRCs of chunks combine
constexpr std::uint64_t kMaxChunks = 4096;     // of one file
constexpr std::size_t kInflateBuffer = 1u << 20;
constexpr int kMaxListedGlobals = 8;

std::string bytesText(std::uint64_t n) {
    return std::to_string(n) + (n == 1 ? " byte" : " bytes");
}

std::string hex32(std::uint32_t v) {
    char text[16];
    std::snprintf(text, sizeof text, "%08x", v);
    return text;
}

// A store that remembers which files its reader looked at (those found), so
// that every other file is known to be named by no meta.json.
class RecordingStore final : public ForwardingStore {
public:
    using ForwardingStore::ForwardingStore;

    std::set<std::string> seen() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return seen_;
    }

    std::optional<StorageInfo> stat(const std::string& rel) const override {
        std::optional<StorageInfo> info = ForwardingStore::stat(rel);
        if (info)
            note(rel);
        return info;
    }
    std::string read(const std::string& rel, std::uint64_t cap) const override {
        note(rel);
        return ForwardingStore::read(rel, cap);
    }
    // A format with a tree of its own builds it over itself, not over the record.
    std::unique_ptr<Node> buildTree(const std::shared_ptr<const Store>&) const override {
        return inner()->buildTree(inner());
    }
    std::string readingNote() const override { return inner()->readingNote(); }

private:
    void note(const std::string& rel) const {
        std::lock_guard<std::mutex> lock(mutex_);
        seen_.insert(rel);
    }

    mutable std::mutex mutex_;
    mutable std::set<std::string> seen_;
};

// One piece of the data pass: a chunk of a stored entry or of a leaf file
// (checksummed in place), or a whole compressed entry (inflated).
struct DataTask {
    std::size_t item = 0;  // index into the checked items
    std::uint64_t offset = 0, length = 0;
    std::size_t chunk = 0;  // its index among the item's chunks
};

// What the data pass reads: an archive entry, or a file of a directory.
struct DataItem {
    std::string file;  // as messages name it
    LeafBytes bytes;   // the mapped archive; empty: read by range from `source`
    std::shared_ptr<const ByteSource> source;    // the archive, else `file` is opened:
    std::shared_ptr<const Transport> transport;  // a directory's files, with this
    std::uint64_t offset = 0, length = 0;        // the payload in `bytes`
    int method = zip::kStored;
    std::uint64_t size = 0;            // uncompressed
    std::optional<std::uint32_t> crc;  // to check against
    bool repairableCrc = false;
    std::vector<std::uint32_t> chunkCrcs;
    std::vector<std::uint64_t> chunkLengths;
    std::atomic<bool> failed{false};
};

class Checker {
public:
    Checker(std::string path, const CheckOptions& options)
        : path_(std::move(path)), options_(options) {
        threads_ = options.threads > 0
                       ? options.threads
                       : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    }

    CheckReport run();

private:
    void add(Severity severity, std::string kind, std::string file, std::vector<std::string> key,
             std::string message, bool repairable = false) {
        std::lock_guard<std::mutex> lock(mutex_);
        report_.problems.push_back({severity, std::move(kind), std::move(file), std::move(key),
                                    std::move(message), repairable});
    }
    void error(std::string kind, std::string file, std::string message,
               std::vector<std::string> key = {}) {
        add(Severity::Error, std::move(kind), std::move(file), std::move(key), std::move(message));
    }
    void warning(std::string kind, std::string file, std::string message,
                 std::vector<std::string> key = {}, bool repairable = false) {
        add(Severity::Warning, std::move(kind), std::move(file), std::move(key), std::move(message),
            repairable);
    }

    void checkArchive(const std::shared_ptr<const ByteSource>& source);
    // A Hugging Face sharded model (formats/sharded.h): its shards read
    // whole, what the index names that is missing, and what it does not name.
    void checkShardedModel(const std::shared_ptr<const Store>& store);
    // A torch.distributed.checkpoint directory (formats/dcp.h): every file
    // its metadata names there and read whole, every stream's CRCs, every
    // tensor's chunks tiling it once.
    void checkDcp(const std::shared_ptr<const Store>& store);
    // A TorchRL replay buffer dump or a stack of chunks (datasets.h): each
    // tensordict in it checked as one, and what its files say against each
    // other (a len, cursor or tree that disagree; chunks that do not stack).
    void checkRowDataset(const std::shared_ptr<const Store>& store,
                         const std::vector<std::string>& files);
    // The report, its problems in order.
    CheckReport finish();
    void checkDirectoryFiles(const std::string& root, const std::vector<std::string>& files);
    std::optional<std::uint32_t> storedCrc(DataItem& item, std::uint64_t offset, std::uint64_t n);
    void checkTree(const std::shared_ptr<const Store>& store, bool findOrphans,
                   const std::vector<std::string>& files);
    void checkNode(const Node& node);
    void checkKeysNamedOnce(const Store& store, const std::string& rel);
    void checkPickle(const Node& node, const std::string& file, const Store& store);
    void checkTemporaries();
    void readData();
    void finishItem(DataItem& item);

    std::string path_;
    CheckOptions options_;
    int threads_ = 1;
    std::mutex mutex_;
    CheckReport report_;
    std::vector<std::unique_ptr<DataItem>> items_;
    std::vector<DataTask> tasks_;
    std::map<std::string, std::vector<std::string>> entryKeys_;  // archive entry -> key, once known
};

// ---- The archive's structure ----

void Checker::checkArchive(const std::shared_ptr<const ByteSource>& source) {
    const std::string& where = source->name();
    const std::uint64_t fileSize = source->size();
    const zip::ReadAt read = [&source](std::uint64_t offset, void* out, std::size_t n) {
        source->readAt(offset, out, n);
    };
    report_.files = 1;
    std::vector<zip::CentralEntry> entries;
    try {
        entries = zip::readCentralDirectory(read, fileSize, where);
    } catch (const Error& e) {
        error("central_directory", where,
              e.reason() +
                  ". No entry can be found without it; recover what can be read with "
                  "`unzip` or `zip -FF`, or re-save from the dataset's source.");
        return;
    }
    report_.entries = entries.size();
    report_.zipArchive = true;
    LeafBytes whole;
    try {
        whole = source->map();  // compressed entries inflate from it; else they are read first
    } catch (const Error&) {
    }
    std::uint64_t directoryStart = fileSize;
    for (const zip::CentralEntry& e : entries)
        directoryStart = std::min(directoryStart, e.centralHeaderOffset);

    struct Span {
        std::uint64_t begin, end;
        std::string name;
    };
    std::vector<Span> spans;
    std::set<std::string> names;
    for (const zip::CentralEntry& c : entries) {
        const std::string file = where + ":" + c.name;
        if (!names.insert(c.name).second)
            error("duplicate_name", file,
                  "two entries are named \"" + c.name +
                      "\": readers disagree on which one counts. Re-save the dataset.");
        // As the archive reader refuses them: absolute, "..", ".", empty parts, backslashes.
        bool unsafe = c.name.empty() || c.name.front() == '/' ||
                      c.name.find('\\') != std::string::npos ||
                      c.name.find('\0') != std::string::npos;
        for (std::size_t start = 0; !unsafe && start < c.name.size();) {
            const std::size_t slash = std::min(c.name.find('/', start), c.name.size());
            const std::string part = c.name.substr(start, slash - start);
            unsafe = part == "." || part == ".." || (part.empty() && slash != c.name.size());
            start = slash + 1;
        }
        if (unsafe)
            error("unsafe_name", file,
                  "the name is not a plain relative path (absolute, \"..\", \".\" or an empty "
                  "part): unpacking it may write outside the folder it is unpacked in, and "
                  "tensordict cannot read it. Do not unpack it; re-save the dataset.");
        if (!c.name.empty() && c.name.back() == '/')
            continue;  // a directory entry: no data
        if (c.flags & zip::kFlagEncrypted) {
            error("encrypted", file, "the entry is encrypted; tensordict cannot read it.");
            continue;
        }
        zip::LocalHeader local;
        try {
            local = zip::readLocalHeader(read, fileSize, c, file);
        } catch (const Error& e) {
            error("local_header", file,
                  e.reason() + ". The entry cannot be read; re-save the dataset.");
            continue;
        }
        std::vector<std::string> differ;
        if (local.name != c.name)
            differ.push_back("name \"" + local.name + "\"");
        if (local.method != c.method)
            differ.push_back("method " + zipMethodName(local.method) + " (the directory says " +
                             zipMethodName(c.method) + ")");
        if (local.flags != c.flags)
            differ.push_back("flags " + std::to_string(local.flags) + " (the directory says " +
                             std::to_string(c.flags) + ")");
        const bool described = c.flags & zip::kFlagDataDescriptor;
        if (!described) {
            if (local.crc != c.crc)
                differ.push_back("CRC-32 " + hex32(local.crc) + " (the directory says " +
                                 hex32(c.crc) + ")");
            if (local.compressedSize != c.compressedSize)
                differ.push_back("compressed size " + std::to_string(local.compressedSize) +
                                 " (the directory says " + std::to_string(c.compressedSize) + ")");
            if (local.size != c.size)
                differ.push_back("size " + std::to_string(local.size) + " (the directory says " +
                                 std::to_string(c.size) + ")");
        }
        if (!differ.empty()) {
            std::string list;
            for (const std::string& d : differ)
                list += (list.empty() ? "" : ", ") + d;
            error("local_header", file,
                  "the local header disagrees with the central directory: " + list +
                      ". Readers that trust one or the other see different data; re-save the "
                      "dataset.");
        }
        std::uint64_t end = local.payloadOffset + c.compressedSize;
        if (local.payloadOffset > directoryStart ||
            c.compressedSize > directoryStart - local.payloadOffset) {
            error("overlap", file,
                  "the entry's data runs into the central directory (a zip-bomb construction, or "
                  "a truncated write). Re-save the dataset.");
            continue;
        }
        if (described) {
            try {
                const zip::DataDescriptor dd =
                    zip::readDataDescriptor(read, end, directoryStart, local.zip64, file);
                if (dd.crc != c.crc || dd.size != c.size || dd.compressedSize != c.compressedSize)
                    error("data_descriptor", file,
                          "the data descriptor after the entry disagrees with the central "
                          "directory (CRC-32 " +
                              hex32(dd.crc) + ", sizes " + std::to_string(dd.compressedSize) + "/" +
                              std::to_string(dd.size) + "). Re-save the dataset.");
                end += dd.length;
            } catch (const Error& e) {
                error("data_descriptor", file, e.reason() + ". Re-save the dataset.");
            }
        }
        spans.push_back({c.localHeaderOffset, end, c.name});
        if (c.method != zip::kStored && c.method != zip::kDeflate && c.method != zip::kBzip2 &&
            c.method != zip::kLzma) {
            error("unsupported_method", file,
                  "the entry is compressed with " + zipMethodName(c.method) +
                      ", which tensordict cannot read. Re-save it stored or deflated.");
            continue;
        }
        const bool memmap =
            c.name.size() > 7 && c.name.compare(c.name.size() - 7, 7, ".memmap") == 0;
        if (memmap && c.method == zip::kStored && local.payloadOffset % zip::kPayloadAlignment != 0)
            warning("unaligned_payload", file,
                    "the payload starts at byte " + std::to_string(local.payloadOffset) +
                        ", not on a 64-byte boundary: it is copied to load instead of mapped "
                        "(an archive made by `zip`, not tensordict). Re-save with --save to align "
                        "it.");
        if (!c.accessIndex.empty() && !zip::parseAccessIndex(c.accessIndex, c))
            warning("access_index", file,
                    "the entry's access points (extra block 0x7874) do not fit it: readers "
                    "ignore them and inflate the entry from its start. Re-save with --save to "
                    "rebuild them.");
        // The data, read in the pass that follows.
        auto item = std::make_unique<DataItem>();
        item->file = file;
        item->bytes = whole;
        item->source = source;
        item->offset = local.payloadOffset;
        item->length = c.compressedSize;
        item->method = c.method;
        item->size = c.size;
        item->crc = c.crc;
        item->repairableCrc = c.method == zip::kStored;
        items_.push_back(std::move(item));
    }
    // Entries in file order: each must end before the next begins.
    std::sort(spans.begin(), spans.end(),
              [](const Span& a, const Span& b) { return a.begin < b.begin; });
    for (std::size_t i = 1; i < spans.size(); ++i)
        if (spans[i].begin < spans[i - 1].end)
            error("overlap", where + ":" + spans[i].name,
                  "the entry's bytes overlap those of \"" + spans[i - 1].name +
                      "\": one byte counts for two entries (a zip-bomb construction, or a "
                      "damaged archive). Re-save the dataset.");
}

// ---- Every byte once ----

void Checker::checkDirectoryFiles(const std::string& root, const std::vector<std::string>& files) {
    // Every regular file under the root (leaf files, meta.json, sidecars) is
    // read once, by range (no mapping held: a directory may have 100,000
    // files), so that an I/O error or a truncation shows.
    const auto transport = transportFor(root);
    for (const std::string& rel : files) {
        auto item = std::make_unique<DataItem>();
        item->file = transport->join(root, rel);
        item->transport = transport;
        try {
            item->length = item->size = transport->stat(item->file).size;
        } catch (const Error& e) {
            error("read_error", item->file, e.reason());
            continue;
        }
        items_.push_back(std::move(item));
    }
    report_.files = files.size();
}

// The CRC-32 of `n` bytes at `offset` of an item's stored data, or nullopt
// (and a problem) when they cannot be read. A file that shrinks meanwhile
// is a read error, not a SIGBUS.
std::optional<std::uint32_t> Checker::storedCrc(DataItem& item, std::uint64_t offset,
                                                std::uint64_t n) {
    // Read by range, not through the mapping: faulting a mapping in page by
    // page costs more than copying out of the page cache (bench_check).
    std::uint32_t crc = 0;
    try {
        const auto source = item.source ? item.source : item.transport->open(item.file);
        std::unique_ptr<std::byte[]> buffer(new std::byte[kInflateBuffer]);
        for (std::uint64_t done = 0; done < n;) {
            const auto piece =
                static_cast<std::size_t>(std::min<std::uint64_t>(kInflateBuffer, n - done));
            source->readAt(item.offset + offset + done, buffer.get(), piece);
            crc = crc32(crc, buffer.get(), piece);
            done += piece;
        }
        return crc;
    } catch (const Error& e) {
        if (!item.failed.exchange(true))
            error("read_error", item.file, e.reason());
        return std::nullopt;
    } catch (const std::bad_alloc&) {
        if (!item.failed.exchange(true))
            error("read_error", item.file, "not enough memory to read it");
        return std::nullopt;
    }
}

void Checker::readData() {
    for (std::size_t i = 0; i < items_.size(); ++i) {
        DataItem& item = *items_[i];
        if (item.method == zip::kStored) {
            // Chunks of kChunk, at most kMaxChunks of them (a sparse file of an exabyte).
            const std::uint64_t chunk = std::max(kChunk, item.length / kMaxChunks + 1);
            const std::uint64_t chunks =
                std::max<std::uint64_t>(1, (item.length + chunk - 1) / chunk);
            item.chunkCrcs.assign(chunks, 0);
            item.chunkLengths.assign(chunks, 0);
            for (std::uint64_t c = 0; c < chunks; ++c) {
                const std::uint64_t at = c * chunk;
                const std::uint64_t n = std::min(chunk, item.length - std::min(item.length, at));
                item.chunkLengths[c] = n;
                tasks_.push_back({i, at, n, static_cast<std::size_t>(c)});
            }
        } else {
            tasks_.push_back({i, 0, item.length, 0});
        }
    }
    CheckProgress total;
    for (const auto& item : items_)
        total.bytesTotal += item->length;
    std::atomic<std::uint64_t> done{0};
    std::mutex progressMutex;
    int lastPermille = -1;
    const auto work = [&](std::size_t t) {
        if (options_.cancel.isCancelled())
            return;
        const DataTask& task = tasks_[t];
        DataItem& item = *items_[task.item];
        if (item.failed)
            return;
        if (item.method == zip::kStored) {
            if (const auto crc = storedCrc(item, task.offset, task.length))
                item.chunkCrcs[task.chunk] = *crc;
        } else {
            // A source that cannot map: the compressed bytes are read first.
            LeafBytes owned;
            const std::byte* payload = item.bytes.data.get() + item.offset;
            if (!item.bytes.data) {
                try {
                    owned = allocateOwnedBuffer(item.length);
                    item.source->readAt(item.offset, owned.data.get(), item.length);
                } catch (const Error& e) {
                    item.failed = true;
                    error("read_error", item.file, e.reason());
                    return;
                } catch (const std::bad_alloc&) {
                    item.failed = true;
                    error("read_error", item.file,
                          "not enough memory to read the compressed entry");
                    return;
                }
                payload = owned.data.get();
            }
            // Inflated as it is read, one buffer at a time: its CRC and size.
            std::uint32_t crc = 0;
            std::uint64_t size = 0;
            std::string why;  // the decoder's reason; empty when it read through
            bool changed = false;
            try {
                auto decoder = Decompressor::create(item.method, payload, item.length, item.file);
                std::unique_ptr<std::byte[]> buffer(new std::byte[kInflateBuffer]);
                for (;;) {
                    std::size_t got = 0;
                    if (!tryGuardedRun(
                            [&] { got = decoder->read(buffer.get(), kInflateBuffer); })) {
                        changed = true;
                        break;
                    }
                    crc = crc32(crc, buffer.get(), got);
                    size += got;
                    if (got < kInflateBuffer || size > item.size)
                        break;
                }
            } catch (const Error& e) {
                why = e.reason();
            } catch (const std::bad_alloc&) {
                why = "out of memory";
            }
            if (changed) {
                item.failed = true;
                error("read_error", item.file,
                      "the file changed (was truncated or replaced) while it was checked; "
                      "check it again when nothing writes to it");
            } else if (!why.empty()) {
                item.failed = true;
                error("corrupt_stream", item.file,
                      "the compressed data cannot be inflated (" + why +
                          "): it is damaged. Re-save from a good copy.");
            } else if (size != item.size) {
                item.failed = true;
                error("size_mismatch", item.file,
                      "the entry inflates to " + (size > item.size ? "more than " : std::string()) +
                          bytesText(size) + ", the directory says " + bytesText(item.size) +
                          ": it is damaged. Re-save from a good copy.");
            } else {
                item.chunkCrcs = {crc};
                item.chunkLengths = {size};
            }
        }
        const std::uint64_t now = done.fetch_add(task.length) + task.length;
        if (options_.progress && total.bytesTotal > 0) {
            const int permille = static_cast<int>(now * 1000 / total.bytesTotal);
            std::lock_guard<std::mutex> lock(progressMutex);
            if (permille != lastPermille) {
                lastPermille = permille;
                options_.progress({now, total.bytesTotal, item.file});
            }
        }
    };
    parallelFor(tasks_.size(), threads_, work);
    report_.cancelled = options_.cancel.isCancelled();
    report_.bytes = done.load();
    if (report_.cancelled)
        return;
    for (const auto& item : items_)
        finishItem(*item);
}

void Checker::finishItem(DataItem& item) {
    if (item.failed || !item.crc || item.chunkCrcs.empty())
        return;
    std::uint32_t crc = item.chunkCrcs.front();
    for (std::size_t i = 1; i < item.chunkCrcs.size(); ++i)
        crc = crc32Combine(crc, item.chunkCrcs[i], item.chunkLengths[i]);
    if (crc == *item.crc)
        return;
    const std::string now =
        "the data's CRC-32 is " + hex32(crc) + ", the archive records " + hex32(*item.crc);
    if (item.repairableCrc)
        add(Severity::Error, "crc_mismatch", item.file, {},
            now +
                ". The data changed after the archive was written: tensordict's in-place "
                "(\"r+\") writes do this (pytorch/tensordict#1735), and so does damage. If "
                "it was written on purpose, --repair re-stamps the CRC-32 to the data as it "
                "is; if not, restore it from a good copy.",
            true);
    else
        error("crc_mismatch", item.file,
              now + ": the compressed data is damaged. Re-save from a good copy.");
}

// ---- Against meta.json ----

// What an error node of the loader is, as a finding's kind.
std::string problemKindOf(const Failure& failure) {
    const bool metaJson = failure.where.size() >= 9 &&
                          failure.where.compare(failure.where.size() - 9, 9, "meta.json") == 0;
    switch (failure.kind) {
        case ErrorKind::NotFound:
            return metaJson ? "missing_meta_json" : "missing_file";
        case ErrorKind::Truncated:
            return "short_file";
        default:
            return "unreadable";
    }
}

// A key named twice in one meta.json (a save that merged two source keys
// into one name): Python's json keeps the last, so one value is lost.
void Checker::checkKeysNamedOnce(const Store& store, const std::string& rel) {
    Value meta;
    try {
        meta = parseJson(store.read(rel, std::uint64_t(64) << 20), store.describe(rel));
    } catch (const Error&) {
        return;  // the loader's error node says why it cannot be read
    }
    if (!meta.isObject())
        return;
    std::set<std::string> names;
    for (const auto& [key, value] : meta.asObject())
        if (!names.insert(key).second)
            error("duplicate_key", store.describe(rel),
                  "the key \"" + key +
                      "\" is named twice: Python loads one of its values and the other is lost "
                      "(an earlier save merged two source keys that print alike, such as 0 and "
                      "'0'). Re-save from the source with one of them renamed.");
}

void Checker::checkNode(const Node& node) {
    const Store* store = node.store().get();
    const std::vector<std::string> key = node.keyPath();
    if (node.isError()) {
        const Failure& failure = *node.failure();
        const std::string advice =
            ". Python's tensordict skips what it cannot read, so the key "
            "would silently be missing there; restore it from a good copy, or "
            "re-save the dataset without it.";
        error(problemKindOf(failure), failure.where, failure.reason + advice, key);
        return;
    }
    const std::string& type = node.typeString();
    if (type.find("__main__.") != std::string::npos)
        warning(
            "main_class",
            store ? store->describe(joinPath(node.directory(), "meta.json")) : formatKeyPath(key),
            "the class " + type +
                " was defined in a script's __main__: Python loads it only from that script "
                "(pytorch/tensordict#1051). Define the class in a module and re-save.",
            key);
    if (const TensorLeaf* leaf = node.asLeaf()) {
        const StorageInfo& s = leaf->storage;
        if (s.kind == StorageKind::None)
            return;  // no elements, no file: as tensordict writes it, and reads it back
        const std::string file = node.fileName();
        if (!s.outsideTarget.empty())
            warning("outside_link", file,
                    "the file is a link to " + s.outsideTarget +
                        ", outside the dataset (pytorch/tensordict#1762): copying the dataset "
                        "elsewhere loses it. Save with --allow-outside-links to copy its data in.",
                    key);
        // Only a memmap's file is its leaf's own: a checkpoint's storage or a
        // consolidated file holds other leaves after the first.
        const bool ownFile = node.store() && node.store()->ownContainer() != OwnContainer::None;
        if (ownFile && s.isPlain() && !leaf->isNested && s.size > leaf->nbytes)
            warning("stale_tail", file,
                    "the file holds " + bytesText(s.size) + "; the leaf needs " +
                        bytesText(leaf->nbytes) +
                        ". The rest is left over from an earlier, larger save (readers use the "
                        "first bytes). Re-save with --save to drop it.",
                    key);
        std::lock_guard<std::mutex> lock(mutex_);
        entryKeys_[s.path] = key;
        return;
    }
    if (node.kind() == NodeKind::NonTensorData || node.kind() == NodeKind::NonTensorStack) {
        const NonTensor& nt = node.nonTensor();
        if (nt.pickleOpaque && store)
            checkPickle(node, nt.pickleFile, *store);
    } else if (node.isCollection()) {
        const Collection& c = node.collection();
        if (c.pickleOpaque && store)
            checkPickle(node, c.pickleFile, *store);
    }
    for (const Node* child : node.children())
        checkNode(*child);
}

void Checker::checkPickle(const Node& node, const std::string& rel, const Store& store) {
    // What the sidecar would import: its globals, decoded without running any.
    std::set<std::string> globals;
    try {
        const std::string bytes = store.read(rel, 64ull << 20);
        std::size_t pos = 0;
        python::Pickle p = python::decode(
            bytes, &pos, store.describe(rel),
            [](const python::Object&, const std::function<python::Object*()>&) -> python::Object* {
                throw Error::unsupported("pickle", "persistent id");
            });
        for (const python::Object& o : p.objects)
            if ((o.type == python::Object::Type::Global ||
                 o.type == python::Object::Type::Instance) &&
                !o.text.empty())
                globals.insert(o.text);
    } catch (const Error&) {
        // Undecodable: said below without the list.
    }
    std::string list;
    int listed = 0;
    for (const std::string& g : globals) {
        if (listed++ == kMaxListedGlobals) {
            list += ", …";
            break;
        }
        list += (list.empty() ? "" : ", ") + g;
    }
    warning(
        "pickle_sidecar", store.describe(rel),
        "the value is a pickle that needs code to load" +
            (list.empty() ? std::string() : " (it imports " + list + ")") +
            "; tensordict will refuse it by default (allow_pickle, pytorch/tensordict#1763) and "
            "tdstudio never runs it. Save the value as plain data (str, numbers, lists, dicts).",
        node.keyPath());
}

// The file tensordict writes for a key named "shape", "device" or "_type"
// and then loses: the node's own metadata takes the key's place in its
// meta.json (core/FORMAT.md 3.1). As Python writes it; not an orphan.
bool isReservedKeyFile(const std::string& rel, const Store& store) {
    const std::size_t slash = rel.rfind('/');
    const std::string dir = slash == std::string::npos ? std::string() : rel.substr(0, slash);
    const std::string name = slash == std::string::npos ? rel : rel.substr(slash + 1);
    if (name != "shape.memmap" && name != "device.memmap" && name != "_type.memmap")
        return false;
    return store.stat(joinPath(dir, "meta.json")).has_value();
}

void Checker::checkTree(const std::shared_ptr<const Store>& opened, bool findOrphans,
                        const std::vector<std::string>& files) {
    auto store = std::make_shared<RecordingStore>(opened);
    LoadOptions options;
    options.throwOnError = false;
    std::optional<TensorDict> td;
    try {
        td = loadStore(store, options);
    } catch (const Error& e) {
        const std::string kind = problemKindOf(e.failure());
        error(kind, e.where(),
              std::string(e.reason()) +
                  (kind == "missing_meta_json"
                       ? ": the dataset's root has no meta.json, so nothing in it can be loaded "
                         "(an interrupted save, which writes the root's meta.json last). Re-save "
                         "the dataset; the files below are listed as orphans."
                       : ". Nothing in it can be loaded."));
    }
    if (td)
        checkNode(td->root());
    const std::set<std::string> seen = store->seen();
    for (const std::string& rel : seen)
        if (rel == "meta.json" ||
            (rel.size() > 10 && rel.compare(rel.size() - 10, 10, "/meta.json") == 0))
            checkKeysNamedOnce(*opened, rel);
    if (!findOrphans)
        return;
    for (const std::string& rel : files) {
        if (seen.count(rel) || isReservedKeyFile(rel, *store))
            continue;
        warning("orphan", opened->describe(rel),
                "no meta.json names this file: it is left over from an earlier save, or its "
                "node's meta.json is missing. Python and tdstudio ignore it; delete it, or "
                "re-save the dataset to a clean place.");
    }
}

// ---- Sharded models ----

void Checker::checkShardedModel(const std::shared_ptr<const Store>& store) {
    report_.format = "sharded";
    const TensorDict td = loadStore(store, {});
    const ShardedModelFacts facts = *shardedModelFacts(*store);
    // Every shard that is there is read once, whole, by range.
    std::vector<std::string> present;
    for (const std::string& shard : facts.shards)
        if (store->stat(shard))
            present.push_back(shard);
    checkDirectoryFiles(store->location(), present);
    report_.files = facts.shards.size() + 1;
    readData();
    if (report_.cancelled)
        return;
    bool whole = true;
    for (const Node* child : td.root().children())
        if (child->isError() && !(whole = false))
            error(problemKindOf(*child->failure()), child->failure()->where,
                  child->failure()->reason +
                      ". transformers refuses to load a model with a tensor missing; restore "
                      "the shard from the model's source.",
                  child->keyPath());
    for (const auto& [shard, tensor] : facts.unindexed)
        warning("orphan", store->describe(shard),
                "the shard holds \"" + tensor + "\", which " + facts.indexName +
                    " does not give it: loaders never read this copy (a tensor in two shards, "
                    "or one the index forgot)",
                {tensor});
    if (whole && facts.totalSize && *facts.totalSize != facts.indexedBytes)
        warning("total_size", store->describe(facts.indexName),
                "metadata.total_size is " + std::to_string(*facts.totalSize) +
                    " bytes, but the tensors the index names hold " +
                    std::to_string(facts.indexedBytes) +
                    ": loaders do not use it, tools that plan memory by it are misled");
    // Shards in the folder that the index does not name (local folders only:
    // a server is never listed).
    std::error_code ec;
    const std::set<std::string> named(facts.shards.begin(), facts.shards.end());
    const bool binIndex = facts.indexName.rfind("pytorch_model", 0) == 0;
    for (const auto& entry : fs::directory_iterator(store->location(), ec)) {
        const std::string name = entry.path().filename().string();
        const std::string ext = binIndex ? ".bin" : ".safetensors";
        if (name.size() > ext.size() && name.find("-of-") != std::string::npos &&
            name.compare(name.size() - ext.size(), ext.size(), ext) == 0 && !named.count(name))
            warning("orphan", store->describe(name),
                    "a shard that " + facts.indexName +
                        " does not name: loaders never read it (left over from another save?)");
    }
}

// ---- Replay buffers and stacks of chunks ----

void Checker::checkRowDataset(const std::shared_ptr<const Store>& store,
                              const std::vector<std::string>& files) {
    report_.format = std::string(store->format());
    const std::string root = store->location();
    checkDirectoryFiles(root, files);
    readData();
    if (report_.cancelled)
        return;
    // Each tensordict of the folder (the storage, each chunk) as a dataset of its own.
    std::vector<std::string> folders;
    if (const auto facts = stackFacts(*store))
        for (const StackChunk& chunk : facts->chunks)
            folders.push_back(chunk.name);
    LoadOptions loadOptions;
    loadOptions.throwOnError = false;
    std::optional<TensorDict> td;
    try {
        td = loadStore(store, loadOptions);
    } catch (const Error& e) {
        error(problemKindOf(e.failure()), e.where(),
              std::string(e.reason()) + ". Nothing in it can be loaded.");
        return;
    }
    if (const auto facts = replayBufferFacts(*store)) {
        folders = {facts->storageFolder};
        for (const auto& d : facts->disagreements) {
            if (d.error)
                error(d.kind, store->describe(d.file), d.what);
            else
                warning(d.kind, store->describe(d.file), d.what);
        }
    } else if (const auto facts = stackFacts(*store)) {
        folders.clear();
        for (const StackChunk& chunk : facts->chunks)
            folders.push_back(chunk.name);
    }
    const auto transport = transportFor(root);
    for (const std::string& folder : folders) {
        std::vector<std::string> inside;
        for (const std::string& rel : files)
            if (rel.compare(0, folder.size() + 1, folder + "/") == 0 &&
                rel != folder + "/storage_metadata.json")  // the buffer's, read above
                inside.push_back(rel.substr(folder.size() + 1));
        const std::size_t counted = report_.files;
        checkTree(openDirectoryStore(transport, transport->join(root, folder), {}), true, inside);
        report_.files = counted;
    }
    // Keys the chunks do not agree on: the stack's error nodes (a chunk's
    // own unreadable part is said once, by its chunk's check above).
    if (stackFacts(*store)) {
        std::set<std::string> said;
        for (const Problem& p : report_.problems)
            said.insert(p.file);
        const std::function<void(const Node&)> visit = [&](const Node& node) {
            if (node.isError() && node.failure() && !said.count(node.failure()->where))
                error(problemKindOf(*node.failure()), node.failure()->where,
                      node.failure()->reason + ": the chunks do not stack", node.keyPath());
            for (const Node* child : node.children())
                visit(*child);
        };
        visit(td->root());
    }
}

// ---- Distributed checkpoints ----

void Checker::checkDcp(const std::shared_ptr<const Store>& store) {
    report_.format = "dcp";
    LoadOptions loadOptions;
    loadOptions.throwOnError = false;
    std::optional<TensorDict> loaded;
    try {
        loaded = loadStore(store, loadOptions);
    } catch (const Error& e) {  // a .metadata that cannot be read, or is refused
        error(problemKindOf(e.failure()), e.where(),
              std::string(e.reason()) + ". Nothing in the checkpoint can be loaded.");
        return;
    }
    const TensorDict& td = *loaded;
    const DcpFacts facts = *dcpFacts(*store);
    std::vector<std::string> present;
    std::set<std::string> missing;
    for (const std::string& file : facts.files) {
        if (store->stat(file))
            present.push_back(file);
        else
            missing.insert(file);
    }
    for (const std::string& file : missing) {
        std::vector<std::string> keys;
        for (const DcpChunkFacts& s : facts.streams)
            if (facts.files[s.file] == file &&
                (keys.empty() || keys.back() != facts.items[s.item].fqn))
                keys.push_back(facts.items[s.item].fqn);
        std::string named;
        for (std::size_t i = 0; i < keys.size() && i < 5; ++i)
            named += (i ? ", " : "") + keys[i];
        if (keys.size() > 5)
            named += " and " + std::to_string(keys.size() - 5) + " more";
        error("missing_file", store->describe(file),
              "the checkpoint's .metadata puts " + named +
                  " (or chunks of them) in this file, which is missing: "
                  "torch.distributed.checkpoint cannot load them; copy the file from where the "
                  "checkpoint was written");
    }
    std::set<std::string> missingPaths;  // as a part's failure names its file
    for (const std::string& file : missing)
        missingPaths.insert(store->describe(file));
    checkDirectoryFiles(store->location(), present);
    report_.files = facts.files.size() + 1;
    readData();
    if (report_.cancelled)
        return;
    // Every stream is a torch.save zip: its entries against their CRC-32s,
    // several streams at once. Chunks in a file's safetensors data have no
    // CRCs: reading the tree's leaves above checked their header and places.
    std::vector<const DcpChunkFacts*> streams;
    for (const DcpChunkFacts& s : facts.streams)
        if (!missing.count(facts.files[s.file]) && !s.inSafetensors)
            streams.push_back(&s);
    const auto transport = transportFor(store->location());
    std::map<std::string, std::shared_ptr<const ByteSource>> sources;
    for (const std::string& file : present)
        sources[file] = transport->open(store->describe(file));
    parallelFor(streams.size(), threads_, [&](std::size_t i) {
        const DcpChunkFacts& s = *streams[i];
        const std::string& file = facts.files[s.file];
        const DcpItemFacts& item = facts.items[s.item];
        const std::string where = store->describe(file) + "@" + std::to_string(s.offset);
        try {
            std::shared_ptr<const ByteSource> stream =
                sliceOf(sources.at(file), s.offset, s.length);
            if (!s.transforms.empty())  // a compressed stream: its CRCs are of what it decodes to
                stream = untransformedStream(std::move(stream), s.transforms, s.decodedLimit);
            const auto zip = openZipStore(std::move(stream), 0);
            for (const std::string& name : zip->entryNames()) {
                const std::optional<StorageInfo> entry = zip->stat(name);
                if (!entry || !entry->crc32)
                    continue;
                const LeafBytes bytes = zip->leafBytes(*entry, entry->size, 1);
                std::uint32_t crc = 0;
                if (!tryGuardedRun([&] { crc = crc32(0, bytes.data.get(), bytes.size); }))
                    throw Error::changed(where);
                if (crc != *entry->crc32)
                    error("crc_mismatch", where + ":" + name,
                          "the stream of \"" + item.fqn + "\" (bytes " + std::to_string(s.offset) +
                              " to " + std::to_string(s.offset + s.length) + " of " + file +
                              ") fails its CRC-32: its data is " + hex32(crc) +
                              ", the stream records " + hex32(*entry->crc32) +
                              ". The bytes changed after torch wrote them; restore the file.",
                          item.keyPath);
            }
        } catch (const Error& e) {
            error(problemKindOf(e.failure()), e.where(),
                  "the stream of \"" + item.fqn + "\" cannot be read: " + e.reason(), item.keyPath);
        }
    });
    // Chunks in a file's safetensors data have no CRCs, but the data's
    // header must hold each where the metadata says: every such tensor is
    // read whole (those with a chunk in a missing file were named above).
    std::vector<std::size_t> inSafetensors;  // items
    std::set<std::size_t> unreadable;
    for (const DcpChunkFacts& s : facts.streams)
        if (missing.count(facts.files[s.file]))
            unreadable.insert(s.item);
    for (const DcpChunkFacts& s : facts.streams)
        if (s.inSafetensors && !unreadable.count(s.item) &&
            (inSafetensors.empty() || inSafetensors.back() != s.item))
            inSafetensors.push_back(s.item);
    parallelFor(inSafetensors.size(), threads_, [&](std::size_t i) {
        if (options_.cancel.isCancelled())
            return;
        const DcpItemFacts& item = facts.items[inSafetensors[i]];
        const Node* node = td.root().find(item.keyPath);
        if (!node || !node->isTensor())
            return;  // an error node: said below
        try {
            (void)leafSha256(*node);
        } catch (const Error& e) {
            error(problemKindOf(e.failure()), e.where(),
                  "a chunk of \"" + item.fqn +
                      "\" cannot be read from its file's safetensors data: " + e.reason(),
                  item.keyPath);
        }
    });
    // What the tree could not hold: chunks that do not tile their tensor,
    // streams that are not what the metadata says.
    std::vector<const Node*> pending{&td.root()};
    while (!pending.empty()) {
        const Node* node = pending.back();
        pending.pop_back();
        if (node->isError() && !missingPaths.count(node->failure()->where))
            error(node->failure()->kind == ErrorKind::Corrupt ? "chunks"
                                                              : problemKindOf(*node->failure()),
                  node->failure()->where, node->failure()->reason, node->keyPath());
        for (const Node* child : node->children())
            pending.push_back(child);
    }
}

// ---- Temporaries beside the dataset ----

// Whether another process has a file under `path` open, or mapped (a memmap
// writer closes its descriptor and keeps the mapping). Links resolved, as
// /proc shows them. Processes whose /proc entries cannot be read count as
// holding it: nothing is deleted on a guess.
bool heldOpen(const std::string& location) {
    std::error_code ec;
    const fs::path resolved = fs::weakly_canonical(location, ec);
    const std::string path = ec ? location : resolved.string();
    const auto under = [&path](std::string_view t) {
        return t == path || (t.size() > path.size() && t.compare(0, path.size(), path) == 0 &&
                             t[path.size()] == '/');
    };
    const std::string self = std::to_string(::getpid());
    DIR* proc = ::opendir("/proc");
    if (!proc)
        return true;
    bool held = false;
    while (dirent* p = ::readdir(proc)) {
        if (held)
            break;
        if (!std::isdigit(static_cast<unsigned char>(p->d_name[0])) || self == p->d_name)
            continue;
        const std::string base = std::string("/proc/") + p->d_name;
        DIR* fds = ::opendir((base + "/fd").c_str());
        if (!fds) {
            held = errno != ENOENT;  // not ours to see: it might hold it
            continue;
        }
        while (dirent* f = ::readdir(fds)) {
            char target[4096];
            const std::string link = base + "/fd/" + f->d_name;
            const ssize_t n = ::readlink(link.c_str(), target, sizeof target - 1);
            if (n > 0 && under(std::string_view(target, static_cast<std::size_t>(n)))) {
                held = true;
                break;
            }
        }
        ::closedir(fds);
        if (held)
            break;
        std::ifstream maps(base + "/maps");
        for (std::string line; std::getline(maps, line);) {
            const std::size_t slash = line.find('/');
            if (slash != std::string::npos && under(std::string_view(line).substr(slash))) {
                held = true;
                break;
            }
        }
    }
    ::closedir(proc);
    return held;
}

// How long ago `path` was last written; nullopt when that cannot be told.
std::optional<std::chrono::seconds> ageOf(const fs::path& path) {
    std::error_code ec;
    const fs::file_time_type when = fs::last_write_time(path, ec);
    if (ec)
        return std::nullopt;
    const auto now = fs::file_time_type::clock::now();
    return now > when ? std::chrono::duration_cast<std::chrono::seconds>(now - when)
                      : std::chrono::seconds(0);
}

std::string ageText(std::optional<std::chrono::seconds> age) {
    if (!age)
        return "of unknown age";
    const long long s = age->count();
    if (s < 120)
        return std::to_string(s) + " s old";
    if (s < 7200)
        return std::to_string(s / 60) + " min old";
    if (s < 172800)
        return std::to_string(s / 3600) + " h old";
    return std::to_string(s / 86400) + " days old";
}

// A temporary younger than this may belong to a save that is still going on
// between two files: listed, never deleted.
constexpr std::chrono::hours kStaleAfter{1};

void Checker::checkTemporaries() {
    fs::path target = fs::absolute(path_).lexically_normal();
    if (!target.has_filename())
        target = target.parent_path();
    const std::string name = target.filename().string();
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(target.parent_path(), ec)) {
        const std::string leaf = entry.path().filename().string();
        std::error_code kindError;
        const bool isOurs = isTemporaryOf(leaf, name);
        // tensordict's staging is a directory of meta.json files; a hidden
        // folder of the same form without one is someone else's.
        const bool isPython = !isOurs && isTensordictStagingOf(leaf, name) &&
                              entry.is_directory(kindError) &&
                              fs::exists(entry.path() / "meta.json", kindError);
        if (!isOurs && !isPython)
            continue;
        const std::string full = entry.path().string();
        const bool inUse = heldOpen(full);
        const std::optional<std::chrono::seconds> age = ageOf(entry.path());
        const bool stale = !inUse && age && *age >= kStaleAfter;
        std::string state;
        if (inUse)
            state = ", still open in a running process: the save may still be going on.";
        else if (!stale)
            state =
                ", too recent to tell from a save that is still going on; check again "
                "later.";
        else
            state = ", that no process holds: the save was interrupted. --repair deletes it.";
        warning("stale_temporary", full,
                std::string("a temporary of ") +
                    (isOurs ? "an atomic tdstudio save" : "a tensordict archive save") + " of " +
                    name + ", " + ageText(age) + state,
                {}, stale);
    }
}

// ---- The whole check ----

CheckReport Checker::run() {
    report_.path = path_;
    const auto transport = transportFor(path_);
    const SourceInfo info = transport->stat(path_);
    if (info.kind == SourceInfo::Kind::Missing)
        throw Error::notFound(path_, "No such file or directory");
    if (info.kind == SourceInfo::Kind::Other)
        throw Error::unsupported(path_, "neither a directory nor a regular file");

    std::vector<std::string> files;  // relative, for orphans
    std::shared_ptr<const Store> store;
    if (info.kind == SourceInfo::Kind::Directory) {
        report_.format = "directory";
        std::string root = path_;
        while (root.size() > 1 && root.back() == '/')
            root.pop_back();
        std::error_code ec;
        bool looksLikeDataset = fs::exists(fs::path(root) / "meta.json", ec);
        auto it = fs::recursive_directory_iterator(
            root, fs::directory_options::skip_permission_denied, ec);
        if (ec)
            throw Error::io(path_, "cannot list: " + ec.message());
        for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
            if (ec) {  // a folder that cannot be listed: said, and the walk goes on
                error("read_error", it->path().string(), "cannot list: " + ec.message());
                ec.clear();
                continue;
            }
            std::error_code kind;
            if (!it->is_regular_file(kind))
                continue;  // folders, and links that lead nowhere (the loader says if a leaf)
            const std::string rel = it->path().lexically_relative(root).generic_string();
            const std::string leaf = it->path().filename().string();
            if (leaf == "meta.json" ||
                (leaf.size() > 7 && leaf.compare(leaf.size() - 7, 7, ".memmap") == 0))
                looksLikeDataset = true;
            files.push_back(rel);
        }
        // A folder without a root meta.json is opened once, as whatever it is.
        std::shared_ptr<const Store> other;
        if (!fs::exists(fs::path(root) / "meta.json", ec)) {
            try {
                other = openStore(root, {});
            } catch (const Error&) {
            }
        }
        const WholeCheck whole = other ? other->wholeCheck() : WholeCheck::TreeOnly;
        if (whole == WholeCheck::RowDataset) {
            std::sort(files.begin(), files.end());
            checkRowDataset(other, files);
            checkTemporaries();
            return finish();
        }
        if (!looksLikeDataset) {
            // A folder of another kind that tdstudio opens (a sharded model).
            if (whole == WholeCheck::DistributedCheckpoint)
                checkDcp(other);
            else if (whole == WholeCheck::ShardedModel)
                checkShardedModel(other);
            else
                throw Error::corrupt(path_,
                                     "not a tensordict: no meta.json and no .memmap file in it");
            checkTemporaries();
            return finish();
        }
        std::sort(files.begin(), files.end());
        checkDirectoryFiles(root, files);
        store = openStore(root, {});
        readData();
        if (report_.cancelled)
            return report_;
        checkTree(store, true, files);
    } else {
        // A sharded model's index, or one of its shards: the whole model.
        const std::string name = path_.substr(path_.find_last_of('/') + 1);
        if (name.find(".index.json") != std::string::npos ||
            name.find("-of-") != std::string::npos || name == ".metadata") {
            std::shared_ptr<const Store> model;
            try {
                model = openStore(path_, {});
            } catch (const Error&) {
            }
            const WholeCheck whole = model ? model->wholeCheck() : WholeCheck::TreeOnly;
            if (whole == WholeCheck::DistributedCheckpoint || whole == WholeCheck::ShardedModel) {
                if (whole == WholeCheck::DistributedCheckpoint)
                    checkDcp(model);
                else
                    checkShardedModel(model);
                checkTemporaries();
                return finish();
            }
        }
        const auto source = transport->open(path_);
        char head[4] = {};
        if (source->size() >= 4)
            source->readAt(0, head, 4);
        const bool zip = std::memcmp(head, "PK", 2) == 0;
        const std::string lower = [&] {
            std::string s = path_;
            std::transform(s.begin(), s.end(), s.begin(),
                           [](unsigned char c) { return std::tolower(c); });
            return s;
        }();
        const bool tdzName = lower.size() > 4 && (lower.compare(lower.size() - 4, 4, ".tdz") == 0 ||
                                                  lower.compare(lower.size() - 4, 4, ".zip") == 0);
        if (zip || tdzName) {
            checkArchive(source);
        } else {
            // One file of another format: read once, whole.
            report_.files = 1;
            auto item = std::make_unique<DataItem>();
            item->file = source->name();
            item->source = source;
            item->length = item->size = source->size();
            items_.push_back(std::move(item));
        }
        readData();
        if (report_.cancelled)
            return report_;
        try {
            store = openStore(path_, {});
        } catch (const Error& e) {
            if (!zip && !tdzName)
                throw;  // a file no format reads: nothing to check
            const bool said =
                std::any_of(report_.problems.begin(), report_.problems.end(),
                            [](const Problem& p) { return p.kind == "central_directory"; });
            if (!said)
                error("unreadable", path_, e.reason() + ". Nothing in it can be loaded.");
        }
        if (store) {
            report_.format = std::string(store->format());
            std::vector<std::string> entries;
            if (const auto* zipStore = dynamic_cast<const ZipStore*>(store.get()))
                entries = zipStore->entryNames();
            const bool tensordict = store->ownContainer() == OwnContainer::Archive;
            if (tensordict)
                entries.erase(std::remove_if(entries.begin(), entries.end(),
                                             [](const std::string& n) {
                                                 return !n.empty() && n.back() == '/';
                                             }),
                              entries.end());
            checkTree(store, tensordict, entries);
        } else {
            report_.format = "archive";
        }
    }
    checkTemporaries();
    return finish();
}

CheckReport Checker::finish() {
    // Errors first, then warnings; each in the order of their files.
    std::stable_sort(report_.problems.begin(), report_.problems.end(),
                     [](const Problem& a, const Problem& b) {
                         if (a.severity != b.severity)
                             return a.severity == Severity::Error;
                         return a.file < b.file;
                     });
    // A problem of an entry whose key is known by now carries it.
    for (Problem& p : report_.problems) {
        if (!p.key.empty())
            continue;
        const std::size_t colon = p.file.rfind(':');
        if (colon == std::string::npos)
            continue;
        const auto it = entryKeys_.find(p.file.substr(colon + 1));
        if (it != entryKeys_.end())
            p.key = it->second;
    }
    return report_;
}

// ---- Repair ----

std::string sysError(const std::string& what) {
    return what + ": " + std::strerror(errno);
}

void pwriteAll(int fd, const void* data, std::size_t n, std::uint64_t offset,
               const std::string& where) {
    const auto* p = static_cast<const char*>(data);
    while (n > 0) {
        const ssize_t w = ::pwrite(fd, p, n, static_cast<off_t>(offset));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            throw Error::io(where, sysError("cannot write"));
        p += w, n -= static_cast<std::size_t>(w), offset += static_cast<std::uint64_t>(w);
    }
}

// The bytes of open file `in` copied into open file `out` (in the kernel
// where the file systems allow, else through a buffer), a piece at a time
// so that `cancel` is heard. Throws Error naming `to`.
void copyFile(int in, std::uint64_t size, int out, const std::string& to,
              const CancelToken& cancel) {
    constexpr std::size_t kPiece = 64u << 20;
    bool kernel = true;
    std::vector<char> buffer;
    for (std::uint64_t done = 0; done < size;) {
        cancel.throwIfCancelled(to);
        const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(kPiece, size - done));
        ssize_t n = -1;
        if (kernel) {
            loff_t from = static_cast<loff_t>(done), at = static_cast<loff_t>(done);
            n = ::copy_file_range(in, &from, out, &at, want, 0);
            if (n < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS ||
                          errno == EOPNOTSUPP || errno == EBADF)) {
                kernel = false;  // this file system cannot: through a buffer
                continue;
            }
        } else {
            buffer.resize(std::min<std::size_t>(want, 8u << 20));
            n = ::pread(in, buffer.data(), buffer.size(), static_cast<off_t>(done));
            if (n > 0)
                pwriteAll(out, buffer.data(), static_cast<std::size_t>(n), done, to);
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            throw Error::io(to, sysError("cannot copy"));
        if (n == 0)
            throw Error::changed(to, "the archive shrank while it was copied");
        done += static_cast<std::uint64_t>(n);
    }
}

// The file descriptor of an archive, closed with this object.
struct OpenFile {
    int fd = -1;
    ~OpenFile() {
        if (fd >= 0)
            ::close(fd);
    }
};

bool sameVersion(const struct stat& a, const struct stat& b) {
    return a.st_dev == b.st_dev && a.st_ino == b.st_ino && a.st_size == b.st_size &&
           a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec;
}

// New CRC-32s for the stored entries `names` of the archive at `path`,
// whose data changed after they were written: recomputed from the data and
// written into a copy beside the archive (the central directory's and the
// data descriptor's CRC field, and the local header's unless a data
// descriptor holds it; nothing else), which then replaces it, with its
// permissions and owner. Refused while another process has the archive
// open or mapped (an r+ writer's later writes would be lost), and when the
// archive changed meanwhile. A link is repaired at its target.
void restampCrcs(const std::string& location, const std::set<std::string>& names,
                 const RepairOptions& options, RepairReport& out) {
    std::error_code ec;
    const std::string path = fs::canonical(location, ec).string();
    if (ec)
        throw Error::io(location, "cannot resolve: " + ec.message());
    OpenFile file;
    file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (file.fd < 0)
        throw Error::io(path, sysError("cannot open"));
    struct stat st {};
    if (::fstat(file.fd, &st) != 0)
        throw Error::io(path, sysError("cannot stat"));
    const auto size = static_cast<std::uint64_t>(st.st_size);
    const zip::ReadAt read = [&](std::uint64_t offset, void* o, std::size_t n) {
        for (std::size_t done = 0; done < n;) {
            const ssize_t r = ::pread(file.fd, static_cast<char*>(o) + done, n - done,
                                      static_cast<off_t>(offset + done));
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                throw Error::io(path, r == 0 ? "the archive is shorter than its directory says"
                                             : sysError("cannot read"));
            done += static_cast<std::size_t>(r);
        }
    };
    const std::vector<zip::CentralEntry> entries = zip::readCentralDirectory(read, size, location);
    struct Patch {
        std::uint64_t offset;
        std::uint32_t crc;
    };
    std::vector<Patch> patches;
    std::uint64_t directoryStart = size;
    for (const zip::CentralEntry& c : entries)
        directoryStart = std::min(directoryStart, c.centralHeaderOffset);
    std::vector<std::byte> buffer(kInflateBuffer);
    for (const zip::CentralEntry& c : entries) {
        if (!names.count(c.name) || c.method != zip::kStored)
            continue;
        const std::string where = location + ":" + c.name;
        const zip::LocalHeader local = zip::readLocalHeader(read, size, c, where);
        std::uint32_t crc = 0;
        for (std::uint64_t done = 0; done < c.compressedSize;) {
            options.cancel.throwIfCancelled(where);
            const auto n = static_cast<std::size_t>(
                std::min<std::uint64_t>(buffer.size(), c.compressedSize - done));
            read(local.payloadOffset + done, buffer.data(), n);
            crc = crc32(crc, buffer.data(), n);
            done += n;
        }
        if (crc == c.crc)
            continue;  // already right (checked again since the report)
        out.done.push_back(std::string(options.dryRun ? "would re-stamp" : "re-stamped") +
                           " the CRC-32 of " + where + " (" + hex32(c.crc) + " to " + hex32(crc) +
                           ")");
        patches.push_back({c.centralHeaderOffset + 16, crc});
        if (c.flags & zip::kFlagDataDescriptor) {
            const zip::DataDescriptor dd = zip::readDataDescriptor(
                read, local.payloadOffset + c.compressedSize, directoryStart, local.zip64, where);
            patches.push_back({dd.crcOffset, crc});
        } else {
            patches.push_back({c.localHeaderOffset + 14, crc});
        }
    }
    if (options.dryRun || patches.empty())
        return;
    if (st.st_nlink > 1)
        throw Error::invalid(path,
                             "has " + std::to_string(st.st_nlink) +
                                 " hard links: replacing it would part them; re-stamp a copy");
    if (heldOpen(path))
        throw Error::invalid(
            path,
            "another process has it open or mapped (an in-place writer?): its later "
            "writes would be lost; close it, then repair");
    const std::string temp = temporarySibling(fs::path(path));
    OpenFile copy;
    try {
        copy.fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (copy.fd < 0)
            throw Error::io(temp, sysError("cannot create"));
        copyFile(file.fd, size, copy.fd, temp, options.cancel);
        for (const Patch& p : patches) {
            const unsigned char le[4] = {
                static_cast<unsigned char>(p.crc), static_cast<unsigned char>(p.crc >> 8),
                static_cast<unsigned char>(p.crc >> 16), static_cast<unsigned char>(p.crc >> 24)};
            pwriteAll(copy.fd, le, 4, p.offset, temp);
        }
        // The archive's permissions and owner (the owner where we may set it).
        if (::fchmod(copy.fd, st.st_mode & 07777) != 0)
            throw Error::io(temp, sysError("cannot set its permissions"));
        if (::fchown(copy.fd, st.st_uid, st.st_gid) != 0 && errno != EPERM)
            throw Error::io(temp, sysError("cannot set its owner"));
        if (::fsync(copy.fd) != 0)
            throw Error::io(temp, sysError("cannot flush"));
        options.cancel.throwIfCancelled(path);
        struct stat now {};
        if (::stat(path.c_str(), &now) != 0 || !sameVersion(st, now))
            throw Error::changed(path, "it changed while it was being repaired");
        if (::rename(temp.c_str(), path.c_str()) != 0)
            throw Error::io(path, sysError("cannot rename the repaired copy into place"));
    } catch (...) {
        fs::remove(temp, ec);  // the archive is as it was
        throw;
    }
    syncDirectoryOf(fs::path(path));
}

}  // namespace

CheckReport check(const std::string& path, const CheckOptions& options) {
    Checker checker(path, options);
    return checker.run();
}

RepairReport repair(const CheckReport& report, const RepairOptions& options) {
    RepairReport out;
    std::set<std::string> crcs;
    std::vector<const Problem*> temporaries;
    // Entries are named "archive:entry", the archive as the check's source named it.
    std::string prefix;
    for (const Problem& p : report.problems)
        if (p.repairable && p.kind == "crc_mismatch" && prefix.empty())
            prefix = transportFor(report.path)->open(report.path)->name() + ":";
    for (const Problem& p : report.problems) {
        if (p.repairable && p.kind == "crc_mismatch" &&
            p.file.compare(0, prefix.size(), prefix) == 0)
            crcs.insert(p.file.substr(prefix.size()));
        else if (p.repairable && p.kind == "stale_temporary")
            temporaries.push_back(&p);
        else
            out.left.push_back(p);
    }
    if (!crcs.empty())
        restampCrcs(report.path, crcs, options, out);
    for (const Problem* p : temporaries) {
        // Checked again: a save may have started since.
        const std::optional<std::chrono::seconds> age = ageOf(p->file);
        if (heldOpen(p->file) || !age || *age < kStaleAfter) {
            out.left.push_back(*p);
            continue;
        }
        if (!options.dryRun) {
            std::error_code ec;
            fs::remove_all(p->file, ec);
            if (ec)
                throw Error::io(p->file, "cannot delete: " + ec.message());
        }
        out.done.push_back(std::string(options.dryRun ? "would delete" : "deleted") +
                           " the stale temporary " + p->file);
    }
    return out;
}

}  // namespace tensordict
