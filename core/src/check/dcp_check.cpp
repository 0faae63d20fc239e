// torch.distributed.checkpoint directories (formats/dcp.h): the files the
// metadata names, every stream's CRCs, chunks in safetensors data, and
// chunks that do not tile their tensor.

#include "check/checker.h"

#include <set>

#include "codec/codec.h"
#include "formats/dcp.h"
#include "formats/dcp_transforms.h"
#include "formats/file_stores.h"
#include "tensordict/guarded_read.h"
#include "tensordict/report.h"
#include "tensordict/worker_threads.h"
#include "tree/loader.h"

namespace tensordict::checking {

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
        if (store->container().stat(file))
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
        error("missing_file", store->container().describe(file),
              "the checkpoint's .metadata puts " + named +
                  " (or chunks of them) in this file, which is missing: "
                  "torch.distributed.checkpoint cannot load them; copy the file from where the "
                  "checkpoint was written");
    }
    std::set<std::string> missingPaths;  // as a part's failure names its file
    for (const std::string& file : missing)
        missingPaths.insert(store->container().describe(file));
    checkDirectoryFiles(store->container().location(), present);
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
    const auto transport = transportFor(store->container().location(), options_.transport);
    std::map<std::string, std::shared_ptr<const ByteSource>> sources;
    for (const std::string& file : present)
        sources[file] = transport->open(store->container().describe(file));
    // Mismatches against a recorded 0 wait: a checkpoint with no CRC-32s at
    // all (warnNoCrcs) is one warning, not an error for every entry.
    std::vector<Problem> zeroCrcMismatches;
    std::atomic<bool> realCrcs{false};
    std::mutex zeroMutex;
    parallelFor(streams.size(), threads_, [&](std::size_t i) {
        const DcpChunkFacts& s = *streams[i];
        const std::string& file = facts.files[s.file];
        const DcpItemFacts& item = facts.items[s.item];
        const std::string where =
            store->container().describe(file) + "@" + std::to_string(s.offset);
        try {
            std::shared_ptr<const ByteSource> stream =
                sliceOf(sources.at(file), s.offset, s.length);
            if (!s.transforms.empty())  // a compressed stream: its CRCs are of what it decodes to
                stream = untransformedStream(std::move(stream), s.transforms, s.decodedLimit);
            const auto zip = openZipContainer(std::move(stream), 0);
            for (const std::string& name : zip->entryNames()) {
                const std::optional<StorageInfo> entry = zip->stat(name);
                if (!entry || !entry->crc32)
                    continue;
                const LeafBytes bytes = zip->leafBytes(*entry, entry->size, 1);
                std::uint32_t crc = 0;
                if (!tryGuardedRun([&] { crc = crc32(0, bytes.data.get(), bytes.size); }))
                    throw Error::changed(where);
                if (*entry->crc32 != 0 && entry->size > 0)
                    realCrcs = true;
                if (crc == *entry->crc32)
                    continue;
                Problem mismatch{Severity::Error, "crc_mismatch", where + ":" + name, item.keyPath,
                                 "the stream of \"" + item.fqn + "\" (bytes " +
                                     std::to_string(s.offset) + " to " +
                                     std::to_string(s.offset + s.length) + " of " + file +
                                     ") fails its CRC-32: its data is " + hex32(crc) +
                                     ", the stream records " + hex32(*entry->crc32) +
                                     ". The bytes changed after torch wrote them; restore the "
                                     "file."};
                if (*entry->crc32 == 0) {
                    std::lock_guard<std::mutex> lock(zeroMutex);
                    zeroCrcMismatches.push_back(std::move(mismatch));
                } else {
                    error(mismatch.kind, mismatch.file, mismatch.message, mismatch.key);
                }
            }
        } catch (const Error& e) {
            cannotRead(e.failure(),
                       "the stream of \"" + item.fqn + "\" cannot be read: " + e.reason(),
                       item.keyPath);
        }
    });
    if (!zeroCrcMismatches.empty() && !realCrcs)
        warnNoCrcs(store->container().location());
    else
        for (Problem& p : zeroCrcMismatches)
            error(std::move(p.kind), std::move(p.file), std::move(p.message), std::move(p.key));
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
            cannotRead(e.failure(),
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
            cannotRead(*node->failure(), node->failure()->reason, node->keyPath(),
                       node->failure()->kind == ErrorKind::Corrupt ? "chunks" : "");
        for (const Node* child : node->children())
            pending.push_back(child);
    }
}

}  // namespace tensordict::checking
