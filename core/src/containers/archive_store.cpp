// Reading .tdz archives (core/FORMAT.md 8.5; the container in zip_layout.h).
//
// Opening reads the end records and the central directory, nothing more:
// the loader then reads the meta.json entries it needs. A leaf's local
// header is read when the leaf is first read, which gives its payload
// offset. Stored payloads are used in place from one private mapping of the
// whole archive where the source can map (else read by range); compressed
// ones are inflated into a bounded cache on first access and their CRC-32
// checked.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <variant>

#include "base/lru_cache.h"
#include "codec/codec.h"
#include "containers/access_index.h"
#include "containers/builtin_stores.h"
#include "containers/zip_layout.h"
#include "sources/mapping.h"
#include "tensordict/error.h"
#include "tensordict/guarded_read.h"
#include "tensordict/worker_threads.h"

namespace tensordict {

std::string zipMethodName(int method) {
    switch (method) {
        case zip::kStored:
            return "stored";
        case zip::kDeflate:
            return "deflate";
        case zip::kBzip2:
            return "bzip2";
        case zip::kLzma:
            return "lzma";
        case 93:
            return "zstd";
        default:
            return "method " + std::to_string(method);
    }
}

namespace {

bool isUnsafeEntryName(std::string_view name) {
    if (name.empty() || name.front() == '/' || name.find('\\') != std::string_view::npos ||
        name.find('\0') != std::string_view::npos)
        return true;
    std::size_t start = 0;
    while (start <= name.size()) {
        const std::size_t end = std::min(name.find('/', start), name.size());
        const std::string_view part = name.substr(start, end - start);
        if (part == ".." || part == ".")
            return true;
        if (part.empty() && end != name.size())
            return true;  // "a//b"
        start = end + 1;
    }
    return false;
}

// How much an entry inflated front to back decodes at a time.
constexpr std::size_t kInflateStep = 4u << 20;

// What an archive keeps inflated, under one cap on memory: the bytes of
// entries and of their segments, and the access points a front-to-back
// pass recorded for an entry, each under a key of its own.
class InflatedCache {
public:
    explicit InflatedCache(std::uint64_t cap) : cache_(cap) {}

    // The bytes kept for `key` if they hold at least `minSize` bytes.
    std::optional<LeafBytes> bytes(const std::string& key, std::uint64_t minSize = 0) {
        const std::optional<Kept> kept = cache_.find(key, [minSize](const Kept& k) {
            const LeafBytes* b = std::get_if<LeafBytes>(&k);
            return b && b->size >= minSize;
        });
        return kept ? std::optional(std::get<LeafBytes>(*kept)) : std::nullopt;
    }
    void keepBytes(const std::string& key, const LeafBytes& bytes) {
        cache_.insert(key, bytes, bytes.size);
    }

    std::shared_ptr<const RecordedPoints> points(const std::string& key) {
        const std::optional<Kept> kept = cache_.find(key, [](const Kept& k) {
            return std::holds_alternative<std::shared_ptr<const RecordedPoints>>(k);
        });
        return kept ? std::get<std::shared_ptr<const RecordedPoints>>(*kept) : nullptr;
    }
    void keepPoints(const std::string& key, std::shared_ptr<const RecordedPoints> points) {
        const std::uint64_t cost = points->memoryBytes();
        cache_.insert(key, std::move(points), cost);
    }

    bool contains(const std::string& key) const { return cache_.contains(key); }
    void erase(const std::string& key) { cache_.erase(key); }

private:
    using Kept = std::variant<LeafBytes, std::shared_ptr<const RecordedPoints>>;
    LruCache<Kept> cache_;
};

class ZipArchive final : public ZipContainer, public CompressedRecords {
public:
    // The source stays open: later reads come from this file even if a save
    // replaces the path meanwhile. A tensordict archive must have a
    // top-level meta.json; other zip files are read for formats built on zip.
    ZipArchive(std::shared_ptr<const ByteSource> source, std::uint64_t cacheBytes,
               bool tensordictArchive)
        : source_(std::move(source)),
          path_(source_->name()),
          fileSize_(source_->size()),
          cacheCap_(cacheBytes),
          inflatedCache_(cacheBytes) {
        readDirectory();
        if (tensordictArchive && !lookup("meta.json"))
            throw Error::corrupt(
                path_, "zip archive has no top-level meta.json: not a tensordict archive");
    }

    std::vector<std::string> entryNames() const override {
        std::vector<std::string> names;
        names.reserve(entries_.size());
        for (const Entry& e : entries_)
            names.push_back(e.central.name);
        return names;
    }
    const std::string& location() const override { return path_; }
    std::string describe(const std::string& rel) const override {
        return rel.empty() ? path_ : path_ + ":" + rel;
    }

    std::optional<StorageInfo> stat(const std::string& rel) const override {
        const Entry* entry = lookup(rel);
        if (!entry)
            return std::nullopt;
        const zip::CentralEntry& c = entry->central;
        StorageInfo info;
        info.kind =
            c.method == zip::kStored ? StorageKind::StoredEntry : StorageKind::CompressedEntry;
        info.path = c.name;
        info.zipMethod = c.method;
        info.size = c.size;
        info.storedSize = c.compressedSize;
        info.crc32 = c.crc;
        return info;
    }

    bool hasDirectory(const std::string& rel) const override {
        std::lock_guard<std::mutex> lock(mutex_);
        if (sortedNames_.empty()) {  // built on first use: only lazy stacks ask
            sortedNames_.reserve(entries_.size());
            for (const Entry& e : entries_)
                sortedNames_.push_back(e.central.name);
            std::sort(sortedNames_.begin(), sortedNames_.end());
        }
        const std::string prefix = rel.empty() ? rel : rel + "/";
        const auto it = std::lower_bound(sortedNames_.begin(), sortedNames_.end(), prefix);
        return it != sortedNames_.end() && it->compare(0, prefix.size(), prefix) == 0;
    }

    std::string read(const std::string& rel, std::uint64_t cap) const override {
        const Entry& entry = find(rel);
        if (entry.central.size > cap)
            throw Error::corrupt(describe(rel), "entry is " + std::to_string(entry.central.size) +
                                                    " bytes, over the metadata size limit of " +
                                                    std::to_string(cap) + " bytes");
        const std::string where = describe(rel);
        const std::uint64_t payload = payloadOffset(entry);
        if (entry.central.method == zip::kStored) {
            std::string text(entry.central.size, '\0');
            readAt(payload, text.data(), text.size());
            return text;
        }
        // Small compressed metadata: inflated from a copy of its payload.
        if (entry.central.compressedSize > cap)
            throw Error::corrupt(where, "compressed entry is over the metadata size limit");
        std::string raw(entry.central.compressedSize, '\0');
        readAt(payload, raw.data(), raw.size());
        std::string text(entry.central.size, '\0');
        auto* out = reinterpret_cast<std::byte*>(text.data());
        if (!inflateEntry(entry, reinterpret_cast<const std::byte*>(raw.data()), raw.size(),
                          text.size(), [out](std::uint64_t offset) { return out + offset; }, {}))
            throw Error::corrupt(where, "CRC mismatch: the entry is corrupt");  // metadata: refused
        return text;
    }

    LeafBytes leafBytes(const StorageInfo& info, std::uint64_t nbytes,
                        std::size_t alignment) const override {
        const Entry& entry = find(info.path);
        const std::string where = describe(entry.central.name);
        if (nbytes > entry.central.size)
            throw Error::truncated(where, "entry is " + std::to_string(entry.central.size) +
                                              " bytes but the leaf needs " +
                                              std::to_string(nbytes));
        if (nbytes == 0)
            return {};
        if (!zip::isReadableMethod(entry.central.method))
            throw Error::unsupported(
                where, "unsupported compression method " + zipMethodName(entry.central.method));
        const std::uint64_t payload = payloadOffset(entry);
        LeafBytes whole = archiveMapping();
        if (!whole.data) {
            // A source that cannot map: the payload is read by range.
            if (entry.central.method == zip::kStored) {
                LeafBytes copy = allocateOwnedBuffer(nbytes);
                readOnce(payload, copy.data.get(), nbytes);
                return copy;
            }
            return inflated(entry, readPayload(entry, payload).data.get(), nbytes);
        }
        std::byte* p = whole.data.get() + payload;
        if (entry.central.method == zip::kStored) {
            if (reinterpret_cast<std::uintptr_t>(p) % alignment != 0) {
                // Unaligned (zip -0, other tools): copied, through the guarded path.
                LeafBytes copy = allocateOwnedBuffer(nbytes);
                if (!tryGuardedCopy(copy.data.get(), p, nbytes))
                    throw Error::changed(where);
                return copy;
            }
            return {std::shared_ptr<std::byte>(whole.data, p), static_cast<std::size_t>(nbytes)};
        }
        return inflated(entry, p, nbytes);
    }

    // A part of a compressed entry with access points: only the segments
    // that hold it are inflated (on several threads when they are many),
    // and kept in the cache of inflated entries, segment by segment.
    bool readsInPlace(const StorageInfo&) const override {
        return archiveMapping().data != nullptr;
    }

    void readLeafRange(const StorageInfo& info, std::uint64_t offset, std::byte* out,
                       std::size_t n) const override {
        const Entry& entry = find(info.path);
        // A deflate entry with access points: its segments inflated on every
        // core straight into `out` (a streaming reader's chunk). Points that
        // prove wrong are forgotten, and this range is inflated from the
        // entry's start: never the whole entry into memory or a file.
        if (entry.central.method == zip::kDeflate && n > 0 && offset <= entry.central.size &&
            n <= entry.central.size - offset &&
            !inflatedCache_.bytes(entry.central.name, offset + n))
            if (const std::optional<Segments> index = segmentsOf(entry)) {
                if (inflateSegmentsInto(entry, *index, offset, offset + n, out))
                    return;
                if (const LeafBytes whole = archiveMapping(); whole.data) {
                    inflatePrefixInto(entry, whole.data.get() + payloadOffset(entry), offset, out,
                                      n);
                    return;
                }
            }
        // Where the archive maps, its mapping: a tensor over another view of
        // the same storage may have written into it.
        if (entry.central.method != zip::kStored || archiveMapping().data ||
            offset > entry.central.size || n > entry.central.size - offset)
            return Container::readLeafRange(info, offset, out, n);
        readOnce(payloadOffset(entry) + offset, out, n);
    }

    LeafBytes leafBytesRange(const StorageInfo& info, std::uint64_t offset, std::uint64_t length,
                             std::size_t alignment) const override {
        const Entry& entry = find(info.path);
        if (entry.central.method == zip::kStored && !archiveMapping().data &&
            offset <= entry.central.size && length <= entry.central.size - offset) {
            // A source that cannot map: only the range is read.
            LeafBytes part = allocateOwnedBuffer(length);
            readOnce(payloadOffset(entry) + offset, part.data.get(), length);
            return part;
        }
        const std::optional<Segments> index = segmentsOf(entry);
        if (!index || offset > entry.central.size || length > entry.central.size - offset)
            return Container::leafBytesRange(info, offset, length, alignment);
        if (length == 0)
            return {};
        if (auto whole = inflatedCache_.bytes(entry.central.name, offset + length))
            return {std::shared_ptr<std::byte>(whole->data, whole->data.get() + offset),
                    static_cast<std::size_t>(length)};
        const std::size_t first = offset / index->spacing;
        const std::size_t last = (offset + length - 1) / index->spacing;
        const auto segmentKey = [&](std::size_t i) {
            return entry.central.name + '\0' + std::to_string(i);
        };
        // One segment: the cached segment itself, no copy.
        if (first == last) {
            const std::uint64_t start = first * index->spacing;
            const auto part = [&](const LeafBytes& segment) {
                return LeafBytes{
                    std::shared_ptr<std::byte>(segment.data, segment.data.get() + (offset - start)),
                    static_cast<std::size_t>(length)};
            };
            if (auto kept = inflatedCache_.bytes(segmentKey(first)))
                return part(*kept);
            LeafBytes segment = allocateOwnedBuffer(index->segmentSize(first, entry.central.size));
            if (!inflateSegmentsInto(entry, *index, start, start + segment.size,
                                     segment.data.get()))
                return Container::leafBytesRange(info, offset, length, alignment);
            inflatedCache_.keepBytes(segmentKey(first), segment);
            return part(segment);
        }
        LeafBytes out = allocateOwnedBuffer(length);
        if (!inflateSegmentsInto(entry, *index, offset, offset + length, out.data.get()))
            return Container::leafBytesRange(info, offset, length, alignment);
        return out;
    }

    // Large deflate entries without access points of their own get points
    // recorded by their first front-to-back inflate, one every
    // kAccessPointSpacing bytes of output (RecordedPoints, codec.h).
    std::uint64_t recordPointsEvery(const StorageInfo& info) const override {
        const Entry* entry = lookup(info.path);
        const bool wanted = entry && entry->central.method == zip::kDeflate &&
                            entry->central.size >= kLargeLeafBytes && !accessIndex(*entry) &&
                            !recordedPoints(*entry) && archiveMapping().data;
        return wanted ? kAccessPointSpacing : 0;
    }

    void keepRecordedPoints(const StorageInfo& info,
                            std::shared_ptr<const RecordedPoints> points) const override {
        const Entry* entry = lookup(info.path);
        if (!entry || !points || points->size != entry->central.size ||
            points->segments() != points->points.size())
            return;
        inflatedCache_.keepPoints(pointsKey(*entry), std::move(points));  // under the same cap
    }

    bool hasRandomAccess(const StorageInfo& info) const override {
        const Entry* entry = lookup(info.path);
        return entry && entry->central.method == zip::kDeflate &&
               (accessIndex(*entry) || recordedPoints(*entry));
    }

    LeafBytes compressedPayload(const StorageInfo& info) const override {
        const Entry& entry = find(info.path);
        if (!zip::isReadableMethod(entry.central.method) || entry.central.method == zip::kStored)
            throw Error::unsupported(describe(info.path),
                                     "not an entry this archive can decompress (" +
                                         zipMethodName(entry.central.method) + ")");
        const std::uint64_t payload = payloadOffset(entry);
        LeafBytes whole = archiveMapping();
        if (!whole.data)
            return readPayload(entry, payload);
        return {std::shared_ptr<std::byte>(whole.data, whole.data.get() + payload),
                static_cast<std::size_t>(entry.central.compressedSize)};
    }

    const CompressedRecords* compressedRecords() const override { return this; }

    bool isResident(const StorageInfo& info) const override {
        return inflatedCache_.contains(info.path);
    }

    std::optional<std::uint64_t> payloadOffset(const StorageInfo& info) const override {
        return payloadOffset(find(info.path));
    }

private:
    struct Entry {
        zip::CentralEntry central;
        mutable std::optional<std::uint64_t> payload;  // from the local header, once read
        mutable std::optional<std::shared_ptr<const zip::AccessIndex>> index;  // parsed once
    };

    void readAt(std::uint64_t offset, void* out, std::size_t n) const {
        requireWithin(offset, n);
        source_->readAt(offset, out, n);
    }
    // A leaf's bytes (ByteSource::readOnce).
    void readOnce(std::uint64_t offset, void* out, std::size_t n) const {
        requireWithin(offset, n);
        source_->readOnce(offset, out, n);
    }
    void requireWithin(std::uint64_t offset, std::size_t n) const {
        if (offset > fileSize_ || n > fileSize_ - offset)
            throw Error::truncated(path_,
                                   "the archive ends at " + std::to_string(fileSize_) +
                                       " bytes, before the data it describes (truncated file?)");
    }

    // A compressed payload read into memory (sources that cannot map).
    LeafBytes readPayload(const Entry& entry, std::uint64_t payload) const {
        LeafBytes raw = allocateOwnedBuffer(entry.central.compressedSize);
        readOnce(payload, raw.data.get(), raw.size);
        return raw;
    }

    void readDirectory() {
        const zip::ReadAt read = [this](std::uint64_t offset, void* out, std::size_t n) {
            readAt(offset, out, n);
        };
        std::vector<zip::CentralEntry> central = zip::readCentralDirectory(read, fileSize_, path_);
        entries_.reserve(central.size());
        for (zip::CentralEntry& c : central) {
            if (!c.name.empty() && c.name.back() == '/')
                continue;  // directory entry (zip -r)
            if (isUnsafeEntryName(c.name))
                throw Error::corrupt(
                    describe(c.name),
                    "unsafe entry name (absolute, or with '..' or '.' components)");
            if (c.flags & zip::kFlagEncrypted)
                throw Error::unsupported(describe(c.name), "encrypted entries are not supported");
            if (c.method == zip::kStored && c.compressedSize != c.size)
                throw Error::corrupt(describe(c.name), "stored entry with differing sizes");
            entries_.push_back(Entry{std::move(c), std::nullopt, std::nullopt});
        }
        // The index points into entries_, which no longer changes. A later
        // duplicate name wins, as in Python.
        index_.reserve(entries_.size());
        for (std::size_t i = 0; i < entries_.size(); ++i)
            index_[entries_[i].central.name] = i;
    }

    const Entry* lookup(std::string_view rel) const {
        const auto it = index_.find(rel);
        return it == index_.end() ? nullptr : &entries_[it->second];
    }

    const Entry& find(const std::string& rel) const {
        const Entry* entry = lookup(rel);
        if (!entry)
            throw Error::notFound(describe(rel), "no such entry in the archive");
        return *entry;
    }

    std::uint64_t payloadOffset(const Entry& entry) const {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!entry.payload) {
            const zip::ReadAt read = [this](std::uint64_t offset, void* out, std::size_t n) {
                readAt(offset, out, n);
            };
            entry.payload = zip::readPayloadOffset(read, fileSize_, entry.central,
                                                   describe(entry.central.name));
        }
        return *entry.payload;
    }

    // A compressed entry inflated: from the cache of inflated entries, or
    // inflated now. Entries up to the cache's cap are kept in memory, the
    // least recently used evicted first; larger ones are inflated into an
    // unlinked temporary file that is mapped, so that memory never holds
    // them (and a zip bomb fills a disk file at most as far as its data
    // really goes, not an allocation of its declared size).
    LeafBytes inflated(const Entry& entry, const std::byte* payload, std::uint64_t nbytes) const {
        const std::string& name = entry.central.name;
        if (auto kept = inflatedCache_.bytes(name, nbytes))
            return {kept->data, static_cast<std::size_t>(nbytes)};
        if (nbytes > cacheCap_)
            return inflateToTemporaryFile(entry, payload, nbytes);
        LeafBytes out = allocateOwnedBuffer(nbytes);
        const std::optional<Segments> index = segmentsOf(entry, payload);
        if (!index || !inflateSegmentsInto(entry, *index, 0, nbytes, out.data.get()))
            guardedInflate(entry, payload, out.data.get(), nbytes);
        inflatedCache_.keepBytes(name, out);
        return out;
    }

    // The entry's access index (access_index.h), or null when it has none
    // or one that does not fit it.
    std::shared_ptr<const zip::AccessIndex> accessIndex(const Entry& entry) const {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!entry.index) {
            auto parsed = zip::parseAccessIndex(entry.central.accessIndex, entry.central);
            entry.index =
                parsed ? std::make_shared<const zip::AccessIndex>(std::move(*parsed)) : nullptr;
        }
        return *entry.index;
    }

    // How an entry inflates segment by segment: from its access index
    // (each segment a deflate stream of its own), or from the points a
    // front-to-back pass recorded. `payload`: its compressed bytes, when
    // the caller has them; else they are mapped or, for an index, read
    // segment by segment.
    struct Segments {
        std::uint64_t spacing = 0;
        std::vector<std::uint32_t> crcs;
        std::uint64_t segmentSize(std::size_t i, std::uint64_t size) const {
            return std::min(spacing, size - i * spacing);
        }
        std::function<std::unique_ptr<Decompressor>(std::size_t)> open;  // a decoder of segment i
        std::function<void()> forget;  // they proved wrong: never used again
    };
    std::optional<Segments> segmentsOf(const Entry& entry,
                                       const std::byte* payload = nullptr) const {
        if (entry.central.method != zip::kDeflate)
            return std::nullopt;
        const std::string where = describe(entry.central.name);
        LeafBytes whole = archiveMapping();  // kept alive by the decoders
        if (!payload && whole.data)
            payload = whole.data.get() + payloadOffset(entry);
        if (auto index = accessIndex(entry)) {
            Segments s{index->spacing, index->crcs, {}, {}};
            s.open = [this, index, payload, whole, where,
                      &entry](std::size_t i) -> std::unique_ptr<Decompressor> {
                const std::uint64_t from = index->offsets[i], to = index->offsets[i + 1];
                if (payload)
                    return Decompressor::create(zip::kDeflate, payload + from, to - from, where);
                // A source that cannot map: only the segment's compressed bytes are read.
                auto raw = std::make_shared<LeafBytes>(allocateOwnedBuffer(to - from));
                readAt(payloadOffset(entry) + from, raw->data.get(), raw->size);
                return std::make_unique<Holding>(
                    Decompressor::create(zip::kDeflate, raw->data.get(), raw->size, where), raw);
            };
            s.forget = [this, &entry] {
                std::lock_guard<std::mutex> lock(mutex_);
                entry.index = nullptr;
            };
            return s;
        }
        auto points = recordedPoints(entry);
        if (!points || !payload)
            return std::nullopt;
        Segments s{points->spacing, points->crcs, {}, {}};
        const std::size_t size = static_cast<std::size_t>(entry.central.compressedSize);
        s.open = [points, payload, size, whole, where](std::size_t i) {
            return i == 0 ? Decompressor::create(zip::kDeflate, payload, size, where)
                          : Decompressor::resume(*points->points[i], payload, size, where);
        };
        s.forget = [this, &entry] { inflatedCache_.erase(pointsKey(entry)); };
        return s;
    }

    // A decoder that keeps the bytes it reads alive.
    struct Holding final : Decompressor {
        Holding(std::unique_ptr<Decompressor> inner, std::shared_ptr<LeafBytes> bytes)
            : inner(std::move(inner)), bytes(std::move(bytes)) {}
        std::size_t read(std::byte* out, std::size_t n) override { return inner->read(out, n); }
        std::unique_ptr<Decompressor> inner;
        std::shared_ptr<LeafBytes> bytes;
    };

    using Deliver = std::function<void(const std::byte*, std::size_t, std::uint64_t)>;
    static Deliver intoBuffer(std::byte* out) {
        return [out](const std::byte* data, std::size_t n, std::uint64_t at) {
            std::memcpy(out + at, data, n);
        };
    }

    static std::string pointsKey(const Entry& entry) {
        return entry.central.name + '\0' + "points";
    }
    // The points a front-to-back pass recorded for the entry, while the
    // cache keeps them.
    std::shared_ptr<const RecordedPoints> recordedPoints(const Entry& entry) const {
        return inflatedCache_.points(pointsKey(entry));
    }

    static int inflateThreads() {
        return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    }

    // Inflates bytes [begin, end) of an entry segment by segment on all
    // cores into `out`: a segment that lies wholly in the range is decoded
    // in place, the two at its ends through a buffer.
    bool inflateSegmentsInto(const Entry& entry, const Segments& index, std::uint64_t begin,
                             std::uint64_t end, std::byte* out) const {
        return inflateSegments(entry, index, begin, end, intoBuffer(out), out);
    }

    // The same, each segment handed to deliver(data, n, offset from begin),
    // from any of the threads; where `direct` is given, a segment wholly in
    // the range is decoded there instead (and not delivered). The segments
    // are a hint: when one does not inflate to exactly its size and CRC,
    // they are forgotten for good and false returned, for the caller to
    // inflate from the start (which reports what is really wrong). A file
    // changed underneath still throws.
    bool inflateSegments(const Entry& entry, const Segments& index, std::uint64_t begin,
                         std::uint64_t end, const Deliver& deliver,
                         std::byte* direct = nullptr) const {
        const std::string where = describe(entry.central.name);
        const int threads = inflateThreads();
        const std::size_t first = begin / index.spacing;
        const std::size_t last = (end - 1) / index.spacing;  // inclusive
        // A segment that does not inflate to its size and CRC (or at all) is
        // not an access point after all; a file changed underneath is an error.
        struct NotAPoint {};
        std::atomic<bool> changed{false};
        bool crcsMatch = true;
        try {
            parallelFor(
                last - first + 1, threads,
                [] { return std::unique_ptr<std::byte[]>(); },  // made when a segment needs it
                [&](std::unique_ptr<std::byte[]>& buffer, std::size_t k) {
                    const std::size_t i = first + k;
                    const std::uint64_t segmentBegin = i * index.spacing;
                    const std::uint64_t size = index.segmentSize(i, entry.central.size);
                    const bool inPlace =
                        direct && segmentBegin >= begin && segmentBegin + size <= end;
                    if (!inPlace && !buffer)
                        buffer.reset(new std::byte[index.spacing]);
                    std::byte* const target =
                        inPlace ? direct + (segmentBegin - begin) : buffer.get();
                    std::size_t got = 0;
                    try {
                        const std::unique_ptr<Decompressor> decoder = index.open(i);
                        if (!tryGuardedRun([&] { got = decoder->read(target, size); })) {
                            changed = true;
                            throw Error::changed(where);
                        }
                    } catch (const Error& e) {
                        if (e.kind() == ErrorKind::Changed)
                            throw;
                        throw NotAPoint{};
                    }
                    if (got != size || crc32Of(target, size) != index.crcs[i])
                        throw NotAPoint{};
                    if (inPlace)
                        return;
                    const std::uint64_t from = std::max(begin, segmentBegin);
                    const std::uint64_t to = std::min(end, segmentBegin + size);
                    deliver(target + (from - segmentBegin), to - from, from - begin);
                });
        } catch (const NotAPoint&) {
            crcsMatch = false;
        }
        if (changed)
            throw Error::changed(where);
        if (!crcsMatch)
            index.forget();
        return crcsMatch;
    }

    // Decodes the first `size` bytes of an entry from `payload` (compressed,
    // `payloadSize` bytes), 4 MiB at a time: each step decodes into
    // destination(offset) and is then handed to written(data, n, offset).
    // SIGBUS from a truncated archive becomes an Error. Returns whether the
    // CRC-32 matched (true when only part of the entry was decoded).
    bool inflateEntry(
        const Entry& entry, const std::byte* payload, std::size_t payloadSize, std::uint64_t size,
        const std::function<std::byte*(std::uint64_t)>& destination,
        const std::function<void(const std::byte*, std::size_t, std::uint64_t)>& written) const {
        const std::string where = describe(entry.central.name);
        auto decoder = Decompressor::create(entry.central.method, payload, payloadSize, where);
        const StorageInfo info = stat(entry.central.name).value();
        if (const std::uint64_t spacing = recordPointsEvery(info);
            spacing && size == entry.central.size)
            decoder->recordPoints(spacing, size, [this, info](auto points) {
                keepRecordedPoints(info, std::move(points));
            });
        std::uint32_t crc = 0;
        std::uint64_t done = 0;
        while (done < size) {
            const std::size_t want =
                static_cast<std::size_t>(std::min<std::uint64_t>(kInflateStep, size - done));
            std::byte* out = destination(done);
            std::size_t got = 0;
            if (!tryGuardedRun([&] { got = decoder->read(out, want); }))
                throw Error::changed(where);
            crc = crc32(crc, out, got);
            if (written)
                written(out, got, done);
            done += got;
            if (got != want)
                throw Error::corrupt(where, "compressed data ends after " + std::to_string(done) +
                                                " of " + std::to_string(size) + " bytes");
        }
        return size != entry.central.size || crc == entry.central.crc;
    }

    // Bytes [offset, offset + n) of an entry, inflated from its start
    // through a buffer of one step (what comes before is dropped).
    void inflatePrefixInto(const Entry& entry, const std::byte* payload, std::uint64_t offset,
                           std::byte* out, std::size_t n) const {
        std::unique_ptr<std::byte[]> step(new std::byte[kInflateStep]);
        const bool crcMatches = inflateEntry(
            entry, payload, entry.central.compressedSize, offset + n,
            [&step](std::uint64_t) { return step.get(); },
            [offset, out, n](const std::byte* data, std::size_t got, std::uint64_t at) {
                const std::uint64_t from = std::max(at, offset),
                                    to = std::min(at + got, offset + n);
                if (from < to)
                    std::memcpy(out + (from - offset), data + (from - at), to - from);
            });
        if (!crcMatches)
            reportCrcMismatch(entry);
    }

    // A leaf's entry inflated into `out`; a CRC mismatch marks the leaf.
    void guardedInflate(const Entry& entry, const std::byte* payload, std::byte* out,
                        std::uint64_t size) const {
        if (!inflateEntry(entry, payload, entry.central.compressedSize, size,
                          [out](std::uint64_t offset) { return out + offset; }, {}))
            reportCrcMismatch(entry);
    }

    void reportCrcMismatch(const Entry& entry) const {
        reportIntegrityProblem(stat(entry.central.name).value(),
                               "CRC-32 mismatch: the inflated data does not match the "
                               "entry's checksum (corrupt archive)");
    }

    LeafBytes inflateToTemporaryFile(const Entry& entry, const std::byte* payload,
                                     std::uint64_t nbytes) const {
        const std::string where = describe(entry.central.name);
        const int fd = openTemporaryFile(where);
        struct Close {
            int fd;
            ~Close() { ::close(fd); }
        } closeLater{fd};
        // Through a buffer and pwrite, not a writable mapping: a full disk is
        // then an error (ENOSPC), not a SIGBUS.
        const auto write = [&](const std::byte* data, std::size_t n, std::uint64_t offset) {
            for (std::size_t w = 0; w < n;) {
                const ssize_t k = ::pwrite(fd, data + w, n - w, static_cast<off_t>(offset + w));
                if (k < 0 && errno == EINTR)
                    continue;
                if (k <= 0)
                    throw Error::io(where, std::string("cannot inflate into a temporary file: ") +
                                               std::strerror(errno));
                w += static_cast<std::size_t>(k);
            }
        };
        const std::optional<Segments> index = segmentsOf(entry, payload);
        bool crcMatches = index && inflateSegments(entry, *index, 0, nbytes, write);
        if (!crcMatches) {
            std::unique_ptr<std::byte[]> buffer(new std::byte[kInflateStep]);
            crcMatches = inflateEntry(
                entry, payload, entry.central.compressedSize, nbytes,
                [&buffer](std::uint64_t) { return buffer.get(); }, write);
        }
        if (!crcMatches)
            reportCrcMismatch(entry);
        return mapFilePrivate(fd, nbytes, where);
    }

    // An unlinked file in $TMPDIR (or /tmp): gone with its last mapping.
    static int openTemporaryFile(const std::string& where) {
        const char* env = std::getenv("TMPDIR");
        const std::string dir = env && *env ? env : "/tmp";
        int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        if (fd < 0) {
            std::string name = dir + "/.tdstudio-inflate-XXXXXX";
            fd = ::mkstemp(name.data());
            if (fd >= 0)
                ::unlink(name.c_str());
        }
        if (fd < 0)
            throw Error::io(where, "cannot create a temporary file in " + dir +
                                       " to inflate into: " + std::strerror(errno));
        return fd;
    }

    // One mapping of the whole archive, made on first use; empty when the
    // source cannot map.
    LeafBytes archiveMapping() const {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!mappingTried_) {
            mappingTried_ = true;
            mapping_ = source_->map();
        }
        return mapping_;
    }

    std::shared_ptr<const ByteSource> source_;
    std::string path_;
    std::uint64_t fileSize_ = 0;
    std::uint64_t cacheCap_;
    mutable InflatedCache inflatedCache_;
    std::vector<Entry> entries_;  // in directory order
    std::unordered_map<std::string_view, std::size_t> index_;
    mutable std::vector<std::string_view> sortedNames_;
    mutable std::mutex mutex_;
    mutable LeafBytes mapping_;
    mutable bool mappingTried_ = false;
};

// A file that starts as a zip archive, or ends with a zip's directory,
// and that no more specific format claims: the error then says why it is
// not a tensordict archive.
class ArchiveFormat final : public StoreFormat {
public:
    std::string_view name() const override { return "archive"; }
    int score(const StoreProbe& probe) const override {
        if (probe.info.kind != SourceInfo::Kind::File || !probe.source)
            return 0;
        if (probe.head.compare(0, 4, "PK\x03\x04") == 0 ||
            probe.head.compare(0, 4, "PK\x05\x06") == 0)  // an empty archive
            return 50;
        // Data before the first entry (a self-extracting archive): only the
        // end of central directory record, near the end, says it is a zip.
        return probe.mayReadBeyondHead && hasEndRecord(*probe.source) ? 1 : 0;
    }
    static bool hasEndRecord(const ByteSource& source) {
        const std::uint64_t tail = std::min<std::uint64_t>(source.size(), 65535 + 22);
        std::string bytes(static_cast<std::size_t>(tail), '\0');
        source.readAt(source.size() - tail, bytes.data(), bytes.size());
        return bytes.find("PK\x05\x06") != std::string::npos;
    }
    std::shared_ptr<const Store> open(const StoreProbe& probe,
                                      const StoreOptions& options) const override {
        return openArchiveStore(probe.source, options.inflateCacheBytes);
    }
};

}  // namespace

std::shared_ptr<const StoreFormat> archiveFormat() {
    return std::make_shared<ArchiveFormat>();
}

std::shared_ptr<const Store> openArchiveStore(std::shared_ptr<const ByteSource> source,
                                              std::uint64_t inflateCacheBytes) {
    return std::make_shared<TensorDictStore>(
        std::make_shared<ZipArchive>(std::move(source), inflateCacheBytes, true),
        OwnContainer::Archive);
}

std::shared_ptr<const ZipContainer> openZipContainer(std::shared_ptr<const ByteSource> source,
                                                     std::uint64_t inflateCacheBytes) {
    return std::make_shared<ZipArchive>(std::move(source), inflateCacheBytes, false);
}

}  // namespace tensordict
