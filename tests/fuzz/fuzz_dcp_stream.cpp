// libFuzzer target: one stream of a torch.distributed.checkpoint .distcp
// file, as its _StorageInfo says it was written. The input is
//
//   u8    how the stream was written (low 3 bits; the rest ignored):
//         0 plainly, 1 [stream.zstd/1], 2 [stream.rot13/1],
//         3 [stream.zstd/1, stream.rot13/1], 4 [stream.rot13/1, stream.zstd/1],
//         5 [stream.zstd/1, stream.zstd/1], 6 [stream.zstd/2] (refused),
//         7 as safetensors data (serialization_format=SAFETENSORS)
//   bytes the stream as the file holds it
//
// and what runs is what a DCP store does with a chunk: the descriptors
// checked, the transforms undone into at most kLimit bytes
// (untransformedStream), the result read whole and at its ends, then opened
// as the torch.save stream (openTorchStream) or the safetensors data
// (openSafetensorsStore) it should be, and every leaf read (load_support.h).
// The stream comes from a memfd through the local transport, as a file's
// slice would.

#include <algorithm>
#include <string>
#include <vector>

#include "containers/builtin_stores.h"
#include "formats/dcp_transforms.h"
#include "formats/file_stores.h"
#include "formats/safetensors.h"
#include "load_support.h"
#include "tensordict/source.h"
#include "tensordict/store.h"

namespace {

// A chunk of 1 MiB of elements and DCP's 1 MiB of records: enough for every
// seed, small enough that a frame decoding to more is refused quickly.
constexpr std::uint64_t kLimit = 2u << 20;

const std::vector<std::string> kDescriptors[] = {
    {},
    {"stream.zstd/1"},
    {"stream.rot13/1"},
    {"stream.zstd/1", "stream.rot13/1"},
    {"stream.rot13/1", "stream.zstd/1"},
    {"stream.zstd/1", "stream.zstd/1"},
    {"stream.zstd/2"},
    {},
};

void readEnds(const tensordict::ByteSource& stream) {
    const std::uint64_t size = stream.size();
    std::vector<char> buffer(static_cast<std::size_t>(std::min<std::uint64_t>(size, 4096)));
    if (buffer.empty())
        return;
    stream.readAt(0, buffer.data(), buffer.size());
    stream.readAt(size - buffer.size(), buffer.data(), buffer.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0)
        return 0;
    const int how = data[0] & 7;
    const std::vector<std::string>& descriptors = kDescriptors[how];
    const std::string path = fuzz::asFile("fuzz_dcp_stream", data + 1, size - 1);
    try {
        tensordict::checkStreamTransforms(descriptors, "fuzz:chunk");
        const auto file = tensordict::transportFor(path)->open(path);
        // As a chunk's place in its .distcp file: all of the file here.
        std::shared_ptr<const tensordict::ByteSource> stream =
            tensordict::sliceOf(file, 0, file->size());
        if (!descriptors.empty()) {
            stream = tensordict::untransformedStream(std::move(stream), descriptors, kLimit);
            if (stream->size() > kLimit)
                std::abort();  // the limit is the decoder's promise
        }
        readEnds(*stream);
        tensordict::StoreOptions options;
        options.shardOpensModel = false;
        const auto store = how == 7 ? tensordict::openSafetensorsStore(stream)
                                    : tensordict::openTorchStream(stream, options);
        if (const auto root = store->buildTree(store))
            fuzz::readNode(*root);
    } catch (const tensordict::Error&) {
    }
    return 0;
}
