#pragma once

// The check of a dataset (tensordict/check.h), shared by its parts: the
// Checker that gathers the problems, and the pieces of the data pass. Each
// kind of dataset checks its own promises in a file of its own
// (archive_check.cpp, sharded_check.cpp, dcp_check.cpp,
// row_dataset_check.cpp, temporaries.cpp); checker.cpp runs the whole check
// and checks trees against their meta.json; repair.cpp mends what it can.

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "containers/zip_layout.h"
#include "tensordict/bytes.h"
#include "tensordict/check.h"
#include "tensordict/error.h"
#include "tensordict/source.h"
#include "tensordict/store.h"
#include "tensordict/tensordict.h"
#include "tree/loader.h"

namespace tensordict {
class Node;
}

namespace tensordict::checking {

// The buffer a compressed entry is inflated through.
inline constexpr std::size_t kInflateBuffer = 1u << 20;

// "1 byte", "12 bytes".
std::string bytesText(std::uint64_t n);
// A CRC-32 as 8 hex digits.
std::string hex32(std::uint32_t v);
// What an error node of the loader is, as a finding's kind.
std::string problemKindOf(const Failure& failure);

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

    // A part that could not be read: an error saying `message`, of `kind`
    // (or problemKindOf the failure). But a part that is well-formed, of a
    // kind tdstudio does not decode (ErrorKind::NotReadHere), is only a
    // not_read warning: its values were not checked, and it is not damage.
    // Storages outside every part shown (ErrorKind::Unplaced) are an
    // unplaced warning: unchecked, and maybe damage.
    void cannotRead(const Failure& failure, std::string message, std::vector<std::string> key = {},
                    std::string kind = {});

    void checkArchive(const std::shared_ptr<const ByteSource>& source);
    // torch.serialization.set_crc32_options(False) (torch >= 2.4) writes a
    // CRC-32 of 0 for every entry. Where every entry of a torch.save archive
    // holding data records 0, one no_crc warning stands for them all: their
    // data cannot be checked, and is not called damaged.
    void warnNoCrcs(const std::string& file);
    // What checking an archive's entries shares: the archive, mapped if it
    // can be, its size and where its central directory starts.
    struct ArchiveScan {
        std::shared_ptr<const ByteSource> source;
        LeafBytes whole;
        std::uint64_t fileSize = 0, directoryStart = 0;
    };
    // One file entry's local header, data descriptor, method and layout
    // against its central record; its data queued for the data pass. Where
    // its bytes end in the archive, or nullopt when they cannot be placed.
    std::optional<std::uint64_t> checkArchiveEntry(const ArchiveScan& scan,
                                                   const zip::CentralEntry& entry,
                                                   const std::string& file);
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
    // A folder (a memmap directory, or a folder of another kind tdstudio
    // opens) and a file (an archive, a checkpoint, an index), checked whole.
    CheckReport checkFolder();
    CheckReport checkFile(const Transport& transport);
    // The folder's regular files, relative and sorted, into `files`; whether
    // any is a meta.json or a .memmap file.
    bool listFolder(const std::string& root, std::vector<std::string>& files);
    // A file's tree, as the loader reads it; an archive that does not open is reported.
    void checkFileTree(bool archive);
    // Checks a format whose promises span many files (a DCP checkpoint, a
    // sharded model) as a whole; false for any other (or none).
    bool checkWhole(const std::shared_ptr<const Store>& store);
    // The report, its problems in order.
    CheckReport finish();
    void checkDirectoryFiles(const std::string& root, const std::vector<std::string>& files);
    std::optional<std::uint32_t> storedCrc(DataItem& item, std::uint64_t offset, std::uint64_t n);
    // The tree of `store` with error nodes where parts cannot be read; nullopt,
    // reported, when nothing of it loads (`missingRootAdvice` then follows
    // the reason of a root without meta.json). The files the loader reads
    // are told to `onFile`.
    std::optional<TensorDict> loadForCheck(const std::shared_ptr<const Store>& store,
                                           std::string_view missingRootAdvice = {},
                                           const FileObserver& onFile = {});
    void checkTree(const std::shared_ptr<const Store>& store, bool findOrphans,
                   const std::vector<std::string>& files);
    void checkNode(const Node& node);
    void checkKeysNamedOnce(const Container& files, const std::string& rel);
    void checkPickle(const Node& node, const std::string& file, const Container& files);
    // A NonTensorData's other.pickle beside the value in its meta.json (a
    // re-save of a memory-mapped tensordict pickles its "_metadata" there),
    // and v0.3-0.4's empty _tensordict/: files the loader need not read,
    // which Python loads with the node. They are its own, never orphans.
    void checkNonTensorSidecars(const Node& node, const Container& files);
    void checkTemporaries();
    void readData();
    void finishItem(DataItem& item);

    std::string path_;
    CheckOptions options_;
    // How the check opens stores: remote ones as the options say.
    StoreOptions storeOptions() const {
        StoreOptions store;
        store.transport = options_.transport;
        return store;
    }
    int threads_ = 1;
    std::mutex mutex_;
    CheckReport report_;
    std::vector<std::unique_ptr<DataItem>> items_;
    std::vector<DataTask> tasks_;
    std::map<std::string, std::vector<std::string>> entryKeys_;  // archive entry -> key, once known
    std::set<std::string> nodeFiles_;  // a node's files the loader did not read (not orphans)
    bool torchArchive_ = false;        // the archive is laid out as torch.save writes
    // tensordict's own layout (a directory, a .tdz, chunks of them), which
    // Python loads without what it cannot read; other files' libraries refuse.
    bool tensordictLayout_ = false;
};

}  // namespace tensordict::checking
