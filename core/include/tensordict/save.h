#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "tensordict/cancel.h"
#include "tensordict/tensordict.h"

namespace tensordict {

// Zip compression methods for .memmap entries of archives.
enum ZipMethod : int { kZipStored = 0, kZipDeflate = 8, kZipBzip2 = 12, kZipLzma = 14 };

// "stored", "deflate"/"deflated", "bzip2", "lzma", or a method number; nullopt if unknown.
std::optional<int> zipMethodFromName(std::string_view name);

// What a save writes.
enum class SaveFormat {
    Tensordict,   // Python tensordict's: a memmap directory, or a .tdz archive
    Safetensors,  // one .safetensors file: dotted keys, tensors only
    HuggingFace,  // a folder of safetensors shards and their index, as save_pretrained
};

struct SaveProgress {
    std::uint64_t bytesDone = 0;
    std::uint64_t bytesTotal = 0;
    int filesDone = 0;
    int filesTotal = 0;
    std::string currentPath;  // the file or entry being written
};

// The options of Python's tensordict.save(data, prefix, copy_existing, *,
// num_threads, return_early, share_non_tensor, robust_key, archive,
// compression, atomic). return_early is saveAsync().
struct SaveOptions {
    // A leaf already mapped from a file elsewhere is copied (true) or refused (false).
    bool copyExisting = false;
    // Writer threads; 0 or 1 write on the calling thread.
    int numThreads = 0;
    // Non-tensor values of the result live in shared memory, seen across fork().
    bool shareNonTensor = false;
    // Percent-encoded file names (core/FORMAT.md 5); false writes raw names.
    bool robustKey = true;
    // What to write; nullopt: by the prefix (".safetensors" one safetensors
    // file, otherwise a tensordict).
    std::optional<SaveFormat> format;
    // HuggingFace: the largest shard in bytes (transformers' default, "5GB").
    std::uint64_t maxShardSize = 5'000'000'000;
    // One .tdz zip archive; nullopt: when the prefix ends in ".tdz".
    std::optional<bool> archive;
    // Zip method of .memmap entries (archives only) and its level (-1: default).
    int compression = kZipStored;
    int compressionLevel = -1;
    // Deflate entries over 4 MiB get access points every 4 MiB (or more, up
    // to 8,000 of them): readers may then inflate any part, or all of it on
    // several threads, without starting from the first byte. Other zip
    // readers ignore them (core/FORMAT.md 8.7). Off: one primed stream.
    bool deflateAccessPoints = true;
    // Write next to prefix under a temporary name, flush, and rename onto
    // prefix: an error, a cancel or a crash leaves prefix as it was.
    bool atomic = false;
    // Copy files that the source reaches through symbolic links leading out
    // of its root. Off: such a save is refused, naming the link and its
    // target, so that a dataset cannot smuggle one of your files into what
    // you export.
    bool allowOutsideLinks = false;
    // Python objects of a checkpoint (NodeKind::Object), and parts tdstudio
    // leaves unread (Node::isUnread(): a quantized tensor, a NumPy string
    // array, storages outside every key), which a tensordict cannot hold:
    // refused, naming the key (false), or left out (true), each key
    // left out told to `skipped` before anything is written. (A safetensors
    // save always leaves out what is not a tensor, and names it.)
    bool skipObjects = false;
    std::function<void(const std::string& keyPath)> skipped;

    // Called from writer threads as bytes are written (throttled).
    std::function<void(const SaveProgress&)> progress;
    // Cancelled (from any thread): the save stops, throwing Cancelled.
    CancelToken cancel;
};

// Writes `data` to `prefix` (a directory, or an archive) in Python
// tensordict 0.14's format and returns it loaded back: a locked TensorDict
// whose leaves are mapped from the saved files. An empty prefix writes
// nothing to disk: leaves go to anonymous shared memory (memfd), shared with
// forked children. Throws Error naming the key or path on failure.
TensorDict save(const TensorDict& data, const std::string& prefix, const SaveOptions& options = {});
// The same files, not loaded back: for a caller that needs only them (a
// conversion on the command line). Returns the path written, absolute and
// normal. A prefix is required.
std::string saveFiles(const TensorDict& data, const std::string& prefix,
                      const SaveOptions& options = {});
// What save() refuses about `data` itself, whatever the destination, found
// (for safetensors: a dtype or nesting it cannot hold, two keys of one
// dotted name, a part that could not be read)
// from metadata alone before anything is written: a tensor or an object at
// the root, a Python object (unless options.skipObjects), a part that could
// not be read, two keys that would become one file, a link out of the
// dataset (unless options.allowOutsideLinks). None when it can be saved.
std::optional<Failure> saveRefusal(const TensorDict& data, const SaveOptions& options);

// Python's memmap(): the same as save().
inline TensorDict memmap(const TensorDict& data, const std::string& prefix,
                         const SaveOptions& options = {}) {
    return save(data, prefix, options);
}

// return_early: starts the save on a thread of its own and returns at once.
// Progress goes to options.progress (on the writer threads); cancelling
// options.cancel stops the save. The future yields the saved TensorDict, or
// rethrows the save's Error from get() (Cancelled after a cancel).
std::future<TensorDict> saveAsync(std::shared_ptr<const TensorDict> data, std::string prefix,
                                  SaveOptions options = {});

}  // namespace tensordict
