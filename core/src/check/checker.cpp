// Verifying a tensordict (check.h).
//
// An archive is checked in two passes over its bytes: the structure (the
// central directory, every local header against it, data descriptors,
// overlaps, names, alignment), then every entry's data once, on all
// threads, against its CRC-32 (stored entries in chunks whose CRCs are
// combined, compressed ones inflated as they are read). A directory's leaf
// files are read once too. Then the tree is loaded, the loader telling
// every file it looks at: what it could not read is an error, every file or
// entry it never looked at an orphan.
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
//   error    shadowed_value      a NonTensorData's other.pickle holding a value over meta.json's
//   error    chunks              a DCP tensor whose chunks leave gaps, overlap or do not match
//   warning  unaligned_payload   a stored .memmap payload off a 64-byte boundary (copied to load)
//   warning  stale_tail          a leaf's file is longer than its shape needs
//   warning  orphan              a file or entry that no meta.json names
//   warning  main_class          a class of __main__, which loads nowhere else (#1051)
//   warning  pickle_sidecar      a pickle that would need code to load (#1763)
//   warning  outside_link        a leaf file reached through a link out of the dataset (#1762)
//   warning  stale_temporary     the temporary of an interrupted save beside the dataset
//   warning  access_index        a deflate entry's access points that do not fit it (ignored)
//   warning  no_crc              a torch.save archive written without CRC-32s (all 0)
//   warning  not_read            a well-formed part tdstudio does not decode (a NumPy array of
//                                strings, dates, records or objects; a quantized tensor): its
//                                size is checked, not its values
//   warning  unplaced            storages a checkpoint's pickle loads that no tensor tdstudio
//                                shows uses (torch may keep them in an attribute it leaves out,
//                                or the pickle is damaged): their values were not checked

//
// This file runs the whole check, reads every byte once (the data pass) and
// checks trees against their meta.json; each kind of dataset checks its own
// promises in a file of its own beside it (checker.h).

#include "check/checker.h"
#include "check/temporaries.h"

#include <cstring>
#include <filesystem>
#include <set>

#include "codec/codec.h"
#include "formats/file_stores.h"
#include "sources/mapping.h"
#include "tensordict/guarded_read.h"
#include "tensordict/keys.h"
#include "tensordict/worker_threads.h"
#include "tree/loader.h"
#include "values/python_objects.h"

namespace tensordict {

std::size_t CheckReport::errorCount() const {
    return static_cast<std::size_t>(
        std::count_if(problems.begin(), problems.end(),
                      [](const Problem& p) { return p.severity == Severity::Error; }));
}

std::size_t CheckReport::warningCount() const {
    return problems.size() - errorCount();
}

namespace checking {

namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kChunk = 32ull << 20;  // a task of stored bytes: CRCs of chunks combine
constexpr std::uint64_t kMaxChunks = 4096;     // of one file
constexpr int kMaxListedGlobals = 8;

}  // namespace

std::string bytesText(std::uint64_t n) {
    return std::to_string(n) + (n == 1 ? " byte" : " bytes");
}

std::string hex32(std::uint32_t v) {
    char text[16];
    std::snprintf(text, sizeof text, "%08x", v);
    return text;
}

// ---- Every byte once ----

void Checker::checkDirectoryFiles(const std::string& root, const std::vector<std::string>& files) {
    // Every regular file under the root (leaf files, meta.json, sidecars) is
    // read once, by range (no mapping held: a directory may have 100,000
    // files), so that an I/O error or a truncation shows.
    const auto transport = transportFor(root, options_.transport);
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
    // A torch.save archive with no CRC-32s (warnNoCrcs): none to check.
    bool zeroCrcs = false, realCrcs = false;
    for (const auto& item : items_)
        if (item->crc && item->size > 0)
            (*item->crc == 0 ? zeroCrcs : realCrcs) = true;
    const bool noCrcs = torchArchive_ && zeroCrcs && !realCrcs;
    if (noCrcs)
        warnNoCrcs(path_);
    for (const auto& item : items_)
        if (!noCrcs || !item->crc || *item->crc != 0)
            finishItem(*item);
}

void Checker::warnNoCrcs(const std::string& file) {
    warning("no_crc", file,
            "every entry records a CRC-32 of 0: torch wrote it with "
            "torch.serialization.set_crc32_options(False), which skips them. Its structure was "
            "checked and every byte read, but damage to its data cannot be found.");
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
              now + (item.method == zip::kStored
                         ? ": the data is damaged. Restore the file from a good copy."
                         : ": the compressed data is damaged. Re-save from a good copy."));
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

void Checker::cannotRead(const Failure& failure, std::string message, std::vector<std::string> key,
                         std::string kind) {
    if (failure.kind == ErrorKind::NotReadHere)
        warning("not_read", failure.where,
                failure.reason +
                    ". This is not damage: it is well-formed, but its values were "
                    "not checked.",
                std::move(key));
    else if (failure.kind == ErrorKind::Unplaced)
        warning("unplaced", failure.where, failure.reason + ".", std::move(key));
    else
        error(kind.empty() ? problemKindOf(failure) : std::move(kind), failure.where,
              std::move(message), std::move(key));
}

// A key named twice in one meta.json (a save that merged two source keys
// into one name): Python's json keeps the last, so one value is lost.
void Checker::checkKeysNamedOnce(const Container& files, const std::string& rel) {
    Value meta;
    try {
        meta = parseJson(files.read(rel, std::uint64_t(64) << 20), files.describe(rel));
    } catch (const Error&) {
        return;  // the loader's error node says why it cannot be read
    }
    if (!meta.isObject())
        return;
    std::set<std::string> names;
    for (const auto& [key, value] : meta.asObject())
        if (!names.insert(key).second)
            error("duplicate_key", files.describe(rel),
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
            tensordictLayout_ ? ". Python's tensordict skips what it cannot read, so the key "
                                "would silently be missing there; restore it from a good copy, or "
                                "re-save the dataset without it."
                              : ". Restore the file from a good copy.";
        cannotRead(failure, failure.reason + advice, key);
        return;
    }
    const std::string& type = node.typeString();
    if (type.find("__main__.") != std::string::npos)
        warning("main_class",
                store ? store->container().describe(joinPath(node.directory(), "meta.json"))
                      : formatKeyPath(key),
                "the class " + type +
                    " was defined in a script's __main__: Python loads it only from that script "
                    "(pytorch/tensordict#1051). Define the class in a module and re-save.",
                key);
    if (const TensorLeaf* leaf = node.asLeaf()) {
        const StorageInfo& s = leaf->storage;
        if (s.kind == StorageKind::None)
            return;  // no elements, no file: as tensordict writes it, and reads it back
        const std::string file = node.fileName();
        if (!s.outsideTarget().empty())
            warning("outside_link", file,
                    "the file is a link to " + s.outsideTarget() +
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
            checkPickle(node, nt.pickleFile, store->container());
        if (node.kind() == NodeKind::NonTensorData && store &&
            store->ownContainer() != OwnContainer::None)
            checkNonTensorSidecars(node, store->container());
    } else if (node.isCollection()) {
        const Collection& c = node.collection();
        if (c.pickleOpaque && store)
            checkPickle(node, c.pickleFile, store->container());
    }
    for (const Node* child : node.children())
        checkNode(*child);
}

namespace {

// What a pickle sidecar holds, decoded without running any of it: the
// globals it would import ("pathlib.PosixPath, ...") and, where it is a
// dict, its keys. Empty when it cannot be decoded.
struct PickleLook {
    bool decoded = false;  // and its root is a dict
    std::string imports;
    std::vector<std::string> fields;
};

PickleLook lookIntoPickle(const Container& files, const std::string& rel) {
    PickleLook look;
    std::set<std::string> globals;
    try {
        const std::string bytes = files.read(rel, 64ull << 20);
        std::size_t pos = 0;
        python::Pickle p = python::decode(
            bytes, &pos, files.describe(rel),
            [](const python::Object&, const std::function<python::Object*()>&) -> python::Object* {
                throw Error::unsupported("pickle", "persistent id");
            });
        for (const python::Object& o : p.objects)
            if ((o.type == python::Object::Type::Global ||
                 o.type == python::Object::Type::Instance) &&
                !o.text.empty())
                globals.insert(o.text);
        look.decoded = p.root && p.root->type == python::Object::Type::Dict;
        if (look.decoded)
            for (const auto& entry : p.root->entries)
                look.fields.push_back(python::keyText(*entry.first));
    } catch (const Error&) {
        // Undecodable: said without the lists.
    }
    int listed = 0;
    for (const std::string& g : globals) {
        if (listed++ == kMaxListedGlobals) {
            look.imports += ", …";
            break;
        }
        look.imports += (look.imports.empty() ? "" : ", ") + g;
    }
    return look;
}

}  // namespace

void Checker::checkPickle(const Node& node, const std::string& rel, const Container& files) {
    const std::string imports = lookIntoPickle(files, rel).imports;
    warning(
        "pickle_sidecar", files.describe(rel),
        "the value is a pickle that needs code to load" +
            (imports.empty() ? std::string() : " (it imports " + imports + ")") +
            "; tensordict will refuse it by default (allow_pickle, pytorch/tensordict#1763) and "
            "tdstudio never runs it. Save the value as plain data (str, numbers, lists, dicts).",
        node.keyPath());
}

void Checker::checkNonTensorSidecars(const Node& node, const Container& files) {
    const std::string oldTensorDict = joinPath(node.directory(), "_tensordict/meta.json");
    const std::string pickle = joinPath(node.directory(), "other.pickle");
    const bool hasOldTensorDict = files.stat(oldTensorDict).has_value();
    // A sidecar the value came from was read, and is checked as such.
    const bool hasPickle = node.nonTensor().pickleFile.empty() && files.stat(pickle);
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (hasOldTensorDict)
            nodeFiles_.insert(oldTensorDict);
        if (hasPickle)
            nodeFiles_.insert(pickle);
    }
    if (hasOldTensorDict) {
        // Python loads it with the node: it must be JSON, as every meta.json.
        try {
            (void)parseJson(files.read(oldTensorDict, std::uint64_t(64) << 20),
                            files.describe(oldTensorDict));
        } catch (const Error& e) {
            error("unreadable", e.where(),
                  e.reason() +
                      ". Python's tensordict loads this folder with the NonTensorData "
                      "beside it, and fails on it; delete the _tensordict folder (it "
                      "holds nothing of the value) or re-save the dataset.",
                  node.keyPath());
        }
    }
    if (!hasPickle)
        return;
    const PickleLook look = lookIntoPickle(files, pickle);
    if (!look.decoded) {
        error("unreadable", files.describe(pickle),
              "the pickle beside the value in meta.json is damaged or not a dict of fields: "
              "Python's tensordict loads it with the node and fails on it, while tdstudio shows "
              "meta.json's value. Delete it (a re-save of a memory-mapped tensordict writes only "
              "the node's _metadata there) or restore it from a good copy.",
              node.keyPath());
        return;
    }
    if (std::find(look.fields.begin(), look.fields.end(), "data") != look.fields.end()) {
        // Python sets the pickle's fields over meta.json's.
        error("shadowed_value", files.describe(pickle),
              "the pickle holds a \"data\" of its own, which Python loads in place of the value "
              "in meta.json that tdstudio shows: the two show different values. Re-save the "
              "value once, as plain data.",
              node.keyPath());
        return;
    }
    std::string fields;
    for (const std::string& f : look.fields)
        fields += (fields.empty() ? "" : ", ") + f;
    warning("pickle_sidecar", files.describe(pickle),
            "beside the value in meta.json, a pickle of the node's other fields" +
                (fields.empty() ? std::string() : " (" + fields + ")") +
                (look.imports.empty() ? std::string() : ", which imports " + look.imports) +
                ". Python loads it with the node (a re-save of a memory-mapped tensordict "
                "writes its _metadata there), but will refuse it by default (allow_pickle, "
                "pytorch/tensordict#1763); tdstudio never runs it. The value does not depend "
                "on it: delete it, or re-save the dataset with tdstudio.",
            node.keyPath());
}

// The file tensordict writes for a key named "shape", "device" or "_type"
// and then loses: the node's own metadata takes the key's place in its
// meta.json (core/FORMAT.md 3.1). As Python writes it; not an orphan.
bool isReservedKeyFile(const std::string& rel, const Container& files) {
    const std::size_t slash = rel.rfind('/');
    const std::string dir = slash == std::string::npos ? std::string() : rel.substr(0, slash);
    const std::string name = slash == std::string::npos ? rel : rel.substr(slash + 1);
    if (name != "shape.memmap" && name != "device.memmap" && name != "_type.memmap")
        return false;
    return files.stat(joinPath(dir, "meta.json")).has_value();
}

std::optional<TensorDict> Checker::loadForCheck(const std::shared_ptr<const Store>& store,
                                                std::string_view missingRootAdvice,
                                                const FileObserver& onFile) {
    LoadOptions options;
    options.throwOnError = false;
    try {
        return loadStore(store, options, onFile);
    } catch (const Error& e) {
        const std::string kind = problemKindOf(e.failure());
        cannotRead(e.failure(), std::string(e.reason()) +
                                    (kind == "missing_meta_json" && !missingRootAdvice.empty()
                                         ? std::string(missingRootAdvice)
                                         : ". Nothing in it can be loaded."));
        return std::nullopt;
    }
}

void Checker::checkTree(const std::shared_ptr<const Store>& store, bool findOrphans,
                        const std::vector<std::string>& files) {
    // The files the loader looked at (those found): every other file is
    // named by no meta.json.
    std::set<std::string> seen;
    nodeFiles_.clear();  // relative to this tree's folder
    std::mutex seenMutex;
    const std::optional<TensorDict> td = loadForCheck(
        store,
        ": the dataset's root has no meta.json, so nothing in it can be loaded (an "
        "interrupted save, which writes the root's meta.json last). Re-save the dataset; "
        "the files below are listed as orphans.",
        [&](const std::string& rel) {
            std::lock_guard<std::mutex> lock(seenMutex);
            seen.insert(rel);
        });
    if (td)
        checkNode(td->root());
    for (const Failure& failure : store->failuresBesideTheTree())
        cannotRead(failure, failure.reason, {});
    const Container& container = store->container();
    for (const std::string& rel : seen)
        if (rel == "meta.json" ||
            (rel.size() > 10 && rel.compare(rel.size() - 10, 10, "/meta.json") == 0))
            checkKeysNamedOnce(container, rel);
    if (!findOrphans)
        return;
    for (const std::string& rel : files) {
        if (seen.count(rel) || nodeFiles_.count(rel) || isReservedKeyFile(rel, container))
            continue;
        warning("orphan", container.describe(rel),
                "no meta.json names this file: it is left over from an earlier save, or its "
                "node's meta.json is missing. Python and tdstudio ignore it; delete it, or "
                "re-save the dataset to a clean place.");
    }
}

// ---- The whole check ----

CheckReport Checker::run() {
    report_.path = path_;
    const auto transport = transportFor(path_, options_.transport);
    const SourceInfo info = transport->stat(path_);
    if (info.kind == SourceInfo::Kind::Missing)
        throw Error::notFound(path_, "No such file or directory");
    if (info.kind == SourceInfo::Kind::Other)
        throw Error::unsupported(path_, "neither a directory nor a regular file");
    return info.kind == SourceInfo::Kind::Directory ? checkFolder() : checkFile(*transport);
}

bool Checker::checkWhole(const std::shared_ptr<const Store>& store) {
    const WholeCheck whole = store ? store->wholeCheck() : WholeCheck::TreeOnly;
    if (whole == WholeCheck::DistributedCheckpoint)
        checkDcp(store);
    else if (whole == WholeCheck::ShardedModel)
        checkShardedModel(store);
    else
        return false;
    return true;
}

bool Checker::listFolder(const std::string& root, std::vector<std::string>& files) {
    std::error_code ec;
    bool looksLikeDataset = fs::exists(fs::path(root) / "meta.json", ec);
    auto it =
        fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied, ec);
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
        if (leaf == "meta.json" || isLeafFileName(leaf))
            looksLikeDataset = true;
        files.push_back(rel);
    }
    std::sort(files.begin(), files.end());
    return looksLikeDataset;
}

CheckReport Checker::checkFolder() {
    report_.format = "directory";
    tensordictLayout_ = true;
    std::string root = path_;
    while (root.size() > 1 && root.back() == '/')
        root.pop_back();
    std::vector<std::string> files;  // relative, for orphans
    const bool looksLikeDataset = listFolder(root, files);
    // A folder without a root meta.json is opened once, as whatever it is.
    std::shared_ptr<const Store> other;
    std::error_code ec;
    if (!fs::exists(fs::path(root) / "meta.json", ec)) {
        try {
            other = openStore(root, storeOptions());
        } catch (const Error&) {
        }
    }
    if (other && other->wholeCheck() == WholeCheck::RowDataset) {
        checkRowDataset(other, files);
        checkTemporaries();
        return finish();
    }
    if (!looksLikeDataset) {
        // A folder of another kind that tdstudio opens: a sharded model, or
        // one that opens as a file in it (a model folder's model.safetensors),
        // checked as that file.
        if (checkWhole(other)) {
            checkTemporaries();
            return finish();
        }
        if (!other || other->container().location() == root)
            throw Error::corrupt(path_, "not a tensordict: no meta.json and no .memmap file in it");
        path_ = other->container().location();
        return checkFile(*transportFor(path_, options_.transport));
    }
    checkDirectoryFiles(root, files);
    const std::shared_ptr<const Store> store = openStore(root, storeOptions());
    readData();
    if (report_.cancelled)
        return report_;
    checkTree(store, true, files);
    checkTemporaries();
    return finish();
}

CheckReport Checker::checkFile(const Transport& transport) {
    // A sharded model's index, or one of its shards: the whole model.
    const std::string name = path_.substr(path_.find_last_of('/') + 1);
    if (name.find(".index.json") != std::string::npos || name.find("-of-") != std::string::npos ||
        name == ".metadata") {
        std::shared_ptr<const Store> model;
        try {
            model = openStore(path_, storeOptions());
        } catch (const Error&) {
        }
        if (checkWhole(model)) {
            checkTemporaries();
            return finish();
        }
    }
    const auto source = transport.open(path_);
    char head[4] = {};
    if (source->size() >= 4)
        source->readAt(0, head, 4);
    const bool zip = std::memcmp(head, "PK", 2) == 0;
    std::string lower = path_;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    const bool tdzName = lower.size() > 4 && (lower.compare(lower.size() - 4, 4, ".tdz") == 0 ||
                                              lower.compare(lower.size() - 4, 4, ".zip") == 0);
    const bool archive = zip || tdzName;
    if (archive) {
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
    checkFileTree(archive);
    checkTemporaries();
    return finish();
}

void Checker::checkFileTree(bool archive) {
    std::shared_ptr<const Store> store;
    try {
        store = openStore(path_, storeOptions());
    } catch (const Error& e) {
        if (!archive)
            throw;  // a file no format reads: nothing to check
        const bool said =
            std::any_of(report_.problems.begin(), report_.problems.end(),
                        [](const Problem& p) { return p.kind == "central_directory"; });
        if (!said)
            error("unreadable", path_, e.reason() + ". Nothing in it can be loaded.");
    }
    tensordictLayout_ = !store || store->ownContainer() != OwnContainer::None;
    if (!store) {
        report_.format = "archive";
        return;
    }
    report_.format = std::string(store->format());
    std::vector<std::string> entries;
    if (const auto* zip = dynamic_cast<const ZipContainer*>(&store->container()))
        entries = zip->entryNames();
    const bool tensordict = store->ownContainer() == OwnContainer::Archive;
    if (tensordict)
        entries.erase(
            std::remove_if(entries.begin(), entries.end(),
                           [](const std::string& n) { return !n.empty() && n.back() == '/'; }),
            entries.end());
    checkTree(store, tensordict, entries);
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

}  // namespace checking

CheckReport check(const std::string& path, const CheckOptions& options) {
    checking::Checker checker(path, options);
    return checker.run();
}

}  // namespace tensordict
