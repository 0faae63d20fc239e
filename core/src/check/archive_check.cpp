// An archive's structure: its central directory, every local header
// against it, data descriptors, overlaps, names and alignment (the data
// itself is read by the data pass, checker.cpp).

#include "check/checker.h"

#include <algorithm>
#include <set>
#include <string_view>

#include "containers/access_index.h"
#include "tensordict/keys.h"

namespace tensordict::checking {
namespace {

// As the archive reader refuses them: absolute, "..", ".", empty parts, backslashes.
bool unsafeName(const std::string& name) {
    if (name.empty() || name.front() == '/' || name.find('\\') != std::string::npos ||
        name.find('\0') != std::string::npos)
        return true;
    for (std::size_t start = 0; start < name.size();) {
        const std::size_t slash = std::min(name.find('/', start), name.size());
        const std::string_view part = std::string_view(name).substr(start, slash - start);
        if (part == "." || part == ".." || (part.empty() && slash != name.size()))
            return true;
        start = slash + 1;
    }
    return false;
}

// What the local header says otherwise than the central directory, as a
// list for people ("" when they agree). Sizes and CRC-32 are compared only
// where the header holds them (no data descriptor).
std::string headerDisagreement(const zip::CentralEntry& c, const zip::LocalHeader& local) {
    std::vector<std::string> differ;
    if (local.name != c.name)
        differ.push_back("name \"" + local.name + "\"");
    if (local.method != c.method)
        differ.push_back("method " + zipMethodName(local.method) + " (the directory says " +
                         zipMethodName(c.method) + ")");
    if (local.flags != c.flags)
        differ.push_back("flags " + std::to_string(local.flags) + " (the directory says " +
                         std::to_string(c.flags) + ")");
    if (!(c.flags & zip::kFlagDataDescriptor)) {
        if (local.crc != c.crc)
            differ.push_back("CRC-32 " + hex32(local.crc) + " (the directory says " + hex32(c.crc) +
                             ")");
        if (local.compressedSize != c.compressedSize)
            differ.push_back("compressed size " + std::to_string(local.compressedSize) +
                             " (the directory says " + std::to_string(c.compressedSize) + ")");
        if (local.size != c.size)
            differ.push_back("size " + std::to_string(local.size) + " (the directory says " +
                             std::to_string(c.size) + ")");
    }
    std::string list;
    for (const std::string& d : differ)
        list += (list.empty() ? "" : ", ") + d;
    return list;
}

}  // namespace

void Checker::checkArchive(const std::shared_ptr<const ByteSource>& source) {
    const std::string& where = source->name();
    const std::uint64_t fileSize = source->size();
    report_.files = 1;
    std::vector<zip::CentralEntry> entries;
    try {
        entries =
            zip::readCentralDirectory([&source](std::uint64_t offset, void* out,
                                                std::size_t n) { source->readAt(offset, out, n); },
                                      fileSize, where);
    } catch (const Error& e) {
        error("central_directory", where,
              e.reason() +
                  ". No entry can be found without it; recover what can be read with "
                  "`unzip` or `zip -FF`, or re-save from the dataset's source.");
        return;
    }
    report_.entries = entries.size();
    report_.zipArchive = true;
    ArchiveScan scan{source, {}, fileSize, fileSize};
    try {
        scan.whole = source->map();  // compressed entries inflate from it; else they are read first
    } catch (const Error&) {
    }
    for (const zip::CentralEntry& e : entries)
        scan.directoryStart = std::min(scan.directoryStart, e.centralHeaderOffset);
    // torch.save's layout: every entry in one folder, named after the
    // archive, with the object's pickle in data.pkl.
    const std::string folder =
        entries.empty() ? std::string()
                        : entries.front().name.substr(0, entries.front().name.find('/') + 1);
    torchArchive_ =
        !folder.empty() && folder.back() == '/' &&
        std::all_of(entries.begin(), entries.end(),
                    [&](const zip::CentralEntry& e) { return e.name.rfind(folder, 0) == 0; }) &&
        std::any_of(entries.begin(), entries.end(),
                    [&](const zip::CentralEntry& e) { return e.name == folder + "data.pkl"; });

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
        if (unsafeName(c.name))
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
        if (const std::optional<std::uint64_t> end = checkArchiveEntry(scan, c, file))
            spans.push_back({c.localHeaderOffset, *end, c.name});
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

std::optional<std::uint64_t> Checker::checkArchiveEntry(const ArchiveScan& scan,
                                                        const zip::CentralEntry& c,
                                                        const std::string& file) {
    const zip::ReadAt read = [&scan](std::uint64_t offset, void* out, std::size_t n) {
        scan.source->readAt(offset, out, n);
    };
    zip::LocalHeader local;
    try {
        local = zip::readLocalHeader(read, scan.fileSize, c, file);
    } catch (const Error& e) {
        error("local_header", file,
              e.reason() + ". The entry cannot be read; re-save the dataset.");
        return std::nullopt;
    }
    if (const std::string differ = headerDisagreement(c, local); !differ.empty())
        error("local_header", file,
              "the local header disagrees with the central directory: " + differ +
                  ". Readers that trust one or the other see different data; re-save the "
                  "dataset.");
    std::uint64_t end = local.payloadOffset + c.compressedSize;
    if (local.payloadOffset > scan.directoryStart ||
        c.compressedSize > scan.directoryStart - local.payloadOffset) {
        error("overlap", file,
              "the entry's data runs into the central directory (a zip-bomb construction, or "
              "a truncated write). Re-save the dataset.");
        return std::nullopt;
    }
    if (c.flags & zip::kFlagDataDescriptor) {
        try {
            const zip::DataDescriptor dd =
                zip::readEntryDataDescriptor(read, end, scan.directoryStart, local.zip64, c, file);
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
    if (!zip::isReadableMethod(c.method)) {
        error("unsupported_method", file,
              "the entry is compressed with " + zipMethodName(c.method) +
                  ", which tensordict cannot read. Re-save it stored or deflated.");
        return end;
    }
    if (isLeafFileName(c.name) && c.method == zip::kStored &&
        local.payloadOffset % zip::kPayloadAlignment != 0)
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
    item->bytes = scan.whole;
    item->source = scan.source;
    item->offset = local.payloadOffset;
    item->length = c.compressedSize;
    item->method = c.method;
    item->size = c.size;
    item->crc = c.crc;
    // Re-stamping is for tensordict's in-place writes; a torch checkpoint
    // has none, so a mismatch there is damage only.
    item->repairableCrc = c.method == zip::kStored && !torchArchive_;
    items_.push_back(std::move(item));
    return end;
}

}  // namespace tensordict::checking
