#include "info_command.h"

#include "load_settings.h"

#include <QByteArrayView>
#include <QIODevice>
#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <thread>
#include <tuple>
#include <vector>

#include "node_text.h"
#include "open_failure.h"
#include "tensordict/report.h"
#include "tensordict/store.h"
#include "tensordict/worker_threads.h"

namespace cli {
namespace {

// The node's key path as a JSON list, ["a", "b"], without its closing
// bracket, appended to `out`. `parentKeys` is the parent's, so each line
// costs one key.
void appendKeyList(std::string& out, const std::string& parentKeys, const tensordict::Node& node) {
    if (!node.parent()) {
        out += '[';
        return;
    }
    out += parentKeys;
    if (parentKeys.size() > 1)
        out += ", ";
    tensordict::appendJsonString(out, node.key());
}

void appendNumber(std::string& line, std::int64_t n) {
    char digits[24];
    line.append(digits, std::to_chars(digits, digits + sizeof digits, n).ptr);
}

void appendInts(std::string& line, const std::vector<std::int64_t>& ints) {
    line += '[';
    for (std::size_t i = 0; i < ints.size(); ++i) {
        if (i)
            line += ", ";
        appendNumber(line, ints[i]);
    }
    line += ']';
}

void appendInts(std::string& line, const tensordict::Value& list) {
    std::vector<std::int64_t> ints;
    for (const tensordict::Value& v : list.asList())
        ints.push_back(v.asInt());
    appendInts(line, ints);
}

// What a listing's lines share: the storage words, translated once for
// each kind of storage rather than once a line.
struct Listing {
    const InfoRequest& request;
    QTextStream& out;
    std::string text;  // lines not yet written
    using StorageKey = std::tuple<tensordict::StorageKind, int, bool>;
    std::map<StorageKey, std::string> storageWords;
    const std::pair<const StorageKey, std::string>* lastWords = nullptr;  // leaves come in runs

    const std::string& storageText(const tensordict::Node& node) {
        const tensordict::StorageInfo& s = node.leaf().storage;
        const StorageKey key(s.kind, s.zipMethod, s.outsideTarget().empty());
        if (lastWords && lastWords->first == key)
            return lastWords->second;
        auto it = storageWords.find(key);
        if (it == storageWords.end())
            it = storageWords.emplace(key, nodetext::storageText(node).toStdString()).first;
        lastWords = &*it;
        return it->second;
    }
    // A listing of a batch of lines for a helper thread: its own text and
    // storage words, written by this one in their order.
    Listing part() const { return Listing{request, out, {}, {}, nullptr, true}; }
    bool isPart = false;  // never writes: its text is written by the listing it is part of

    void writeWhenFull() {
        if (text.size() > (64u << 10) && !isPart)
            write();
    }
    void write() { write(text, isUtf8(text)); }
    // Written as the UTF-8 it is, straight to the stream's device where it
    // has one; text that is not valid UTF-8 (a path of other bytes) goes
    // through QString, which writes U+FFFD for what does not decode.
    void write(std::string& lines, bool linesAreUtf8) {
        QIODevice* device = out.device();
        if (device && linesAreUtf8) {
            out.flush();
            device->write(lines.data(), static_cast<qint64>(lines.size()));
        } else {
            out << QString::fromStdString(lines);
        }
        lines.clear();
    }
    static bool isUtf8(const std::string& lines) {
        return QByteArrayView(lines.data(), qsizetype(lines.size())).isValidUtf8();
    }
};

// The listing's part of a collection's, non-tensor's or error's properties
// (tensordict::nodeProperties()): what a line says of each, in the
// properties' order. A tensor's line is appendLeafBrief()'s.
void appendBrief(Listing& listing, const tensordict::Node& node,
                 const tensordict::NodeProperty& p) {
    std::string& line = listing.text;
    const tensordict::Value& v = p.value;
    const std::string_view n = p.name;
    if (n == "class" || n == "error") {
        line += "  ";
        line += v.asString();
    } else if (n == "batch_size") {
        line += "  batch ";
        appendInts(line, v);
    } else if (n == "stack_dim") {
        line += "  stack_dim " + std::to_string(v.asInt());
    } else if (n == "device") {
        line += "  device " + (v.isNull() ? std::string("None") : v.asString());
    } else if (n == "data") {
        line += node.nonTensor().pickleOpaque
                    ? "  <pickle " + node.nonTensor().pickleFile + ", not unpickled>"
                    : "  " + tensordict::toJson(v);
    } else if ((n == "non_tensor_fields" || n == "attributes") && !v.asObject().empty()) {
        line += "  " + tensordict::toJson(v);
    }
}

// A tensor's part of its line: dtype, shape, nbytes, storage and file, its
// listing properties (tensordict::PropertyDetail::Listing) read from the
// leaf's brief, with no Value made for each of thousands of leaves.
void appendLeafBrief(Listing& listing, const tensordict::Node& node) {
    std::string& line = listing.text;
    const tensordict::LeafBrief brief = tensordict::leafBrief(node);
    line += "  ";
    line += tensordict::dtypeName(brief.dtype);
    line += "  shape ";
    appendInts(line, *brief.shape);
    line += "  ";
    appendNumber(line, static_cast<std::int64_t>(brief.nbytes));
    line += " bytes  ";
    line += listing.storageText(node);
    if (brief.file) {
        line += ' ';
        line += *brief.file;
    }
}

void printChildren(const tensordict::Node& node, const std::string& keys, Listing& listing);

// One line per node, built as UTF-8 (10,000 leaves print in a few ms).
void printNode(const tensordict::Node& node, const std::string& parentKeys, Listing& listing) {
    const InfoRequest& request = listing.request;
    std::string& text = listing.text;
    std::string keys;  // the children's parent keys (a leaf's line needs no copy)
    if (node.children().empty()) {
        appendKeyList(text, parentKeys, node);
    } else {
        appendKeyList(keys, parentKeys, node);
        text += keys;
    }
    text += "]  ";
    text += tensordict::kindName(node.kind());
    if (node.isTensor()) {
        appendLeafBrief(listing, node);
    } else {
        for (const tensordict::NodeProperty& p :
             tensordict::nodeProperties(node, tensordict::PropertyDetail::Listing))
            appendBrief(listing, node, p);
    }
    if (request.stats && node.isTensor()) {
        const tensordict::Value stats = tensordict::statisticsValue(node);
        for (const auto& [name, value] : stats.asObject())
            text += "  " + name + " " + tensordict::toJson(value);
    }
    if (request.sha256 && node.isTensor()) {
        text += "  sha256 " + tensordict::leafSha256(node);
        if (const std::string warning = node.integrityWarning(); !warning.empty())
            text += "  WARNING " + warning;
    }
    text += '\n';
    listing.writeWhenFull();
    printChildren(node, keys, listing);
}

// The children's lines, in order. A long run of childless children (a
// model's tensors) has its lines made on every core, a batch of lines a
// thread, each round of batches written in order once it is made; a child
// with children of its own is listed by this thread, so that a batch never
// holds a subtree. A listing that reads leaves (--stats, --sha256) stays on
// one thread: its first failure is the first leaf's, after the lines before it.
void printChildren(const tensordict::Node& node, const std::string& keys, Listing& listing) {
    constexpr std::size_t kBatch = 4096;  // lines; a batch's text is some 0.5 MB
    const auto children = node.children();
    const bool readsLeaves = listing.request.stats || listing.request.sha256;
    const int threads = listing.isPart || readsLeaves || children.size() < 2 * kBatch
                            ? 1
                            : static_cast<int>(std::thread::hardware_concurrency());
    std::vector<Listing> parts;
    std::vector<char> partIsUtf8;  // checked by the thread that made it
    for (std::size_t i = 0; i < children.size();) {
        std::size_t end = i;  // the run of childless children from i
        while (threads > 1 && end < children.size() && children[end]->children().empty())
            ++end;
        if (end - i < 2 * kBatch) {
            for (const std::size_t last = std::max(end, i + 1); i < last; ++i)
                printNode(*children[i], keys, listing);
            continue;
        }
        if (parts.empty()) {
            for (int t = 0; t < threads; ++t)
                parts.push_back(listing.part());
            partIsUtf8.resize(parts.size());
        }
        listing.write();
        for (; i < end; i = std::min(end, i + parts.size() * kBatch)) {
            tensordict::parallelFor(parts.size(), threads, [&](std::size_t t) {
                const std::size_t from = std::min(i + t * kBatch, end);
                const std::size_t to = std::min(from + kBatch, end);
                for (std::size_t at = from; at < to; ++at)
                    printNode(*children[at], keys, parts[t]);
                partIsUtf8[t] = Listing::isUtf8(parts[t].text);
            });
            for (std::size_t t = 0; t < parts.size(); ++t)
                listing.write(parts[t].text, partIsUtf8[t]);
        }
    }
}

// Problems found while reading leaves in full (CRC-32 mismatches): the
// data was shown, with a warning naming the entry.
void reportIntegrityWarnings(const tensordict::Node& node, QTextStream& err) {
    if (const std::string warning = node.integrityWarning(); !warning.empty())
        err << "tdstudio: warning: " << nodetext::displayText(node.fileName()) << ": "
            << nodetext::displayText(warning) << '\n';
    for (const auto& child : node.children())
        reportIntegrityWarnings(*child, err);
}

// A tree left for the process's end (InfoRequest::processEndsAfter).
void keepUntilExit(tensordict::TensorDict td) {
    static auto* kept = new std::vector<tensordict::TensorDict>;  // never freed, on purpose
    kept->push_back(std::move(td));
}

}  // namespace

int printInfo(const InfoRequest& request, QTextStream& out, QTextStream& err) {
    std::optional<tensordict::TensorDict> loaded;
    try {
        loaded.emplace(tensordict::load(request.path.toStdString(),
                                        loadOptionsFromSettings(/*tolerant=*/true)));
    } catch (const std::exception& e) {
        err << "tdstudio: " << commandLineFailure(e) << '\n';
        return 1;
    }
    const tensordict::TensorDict& td = *loaded;
    try {
        if (request.json) {
            tensordict::DescribeOptions options;
            options.sha256 = request.sha256;
            options.stats = request.stats;
            options.firstValues = 16;
            out << QString::fromStdString(
                       tensordict::toStrictJson(tensordict::describe(td, options)))
                << '\n';
        } else {
            out << QString::fromStdString(td.path()) << "  (" << QString::fromStdString(td.format())
                << ")\n";
            Listing listing{request, out, {}, {}};
            printNode(td.root(), {}, listing);
            listing.write();
        }
    } catch (const std::exception& e) {
        out.flush();
        err << "tdstudio: " << commandLineFailure(e) << '\n';
        return 1;
    }
    out.flush();
    reportIntegrityWarnings(td.root(), err);
    const auto errors = td.errors();
    for (const auto* e : errors)
        err << "tdstudio: " << nodetext::displayText(e->error()) << '\n';
    if (request.processEndsAfter)
        keepUntilExit(std::move(*loaded));
    return errors.empty() ? 0 : 1;
}

}  // namespace cli
