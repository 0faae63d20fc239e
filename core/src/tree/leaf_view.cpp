// Leaves that are views into their storage (checkpoints, safetensors, numpy
// files): an offset, strides, big-endian elements, read as C-ordered
// little-endian bytes.

#include <algorithm>
#include <cstring>

#include "tree/leaf_view.h"

#include "sources/mapping.h"
#include "tensordict/error.h"
#include "tensordict/guarded_read.h"
#include "tensordict/store.h"
#include "tree/strides.h"

namespace tensordict {
namespace {

// Copies the view's elements in C order into `out`, swapping byte order
// when asked. Walks the innermost dimension in a loop, the others as an odometer.
void gather(const std::byte* base, const TensorLeaf& leaf, const std::vector<std::int64_t>& strides,
            std::byte* out) {
    const std::size_t item = itemSize(leaf.dtype);
    // Complex numbers swap each half; everything else as one word.
    const std::size_t word =
        dtypeInfo(leaf.dtype).category == DTypeCategory::Complex ? item / 2 : item;
    const std::size_t dims = leaf.shape.size();
    const std::int64_t inner = dims ? leaf.shape.back() : 1;
    const std::int64_t innerStride = dims ? strides.back() : 0;
    std::vector<std::int64_t> index(dims, 0);
    std::int64_t at = 0;  // element offset of index[0..dims-1) with index[dims-1] = 0
    for (std::int64_t done = 0; done < leaf.numel; done += inner) {
        for (std::int64_t i = 0; i < inner; ++i, out += item) {
            const std::byte* element = base + static_cast<std::size_t>(at + i * innerStride) * item;
            if (!leaf.storage.bigEndian) {
                std::memcpy(out, element, item);
                continue;
            }
            for (std::size_t w = 0; w < item; w += word)
                for (std::size_t b = 0; b < word; ++b)
                    out[w + b] = element[w + word - 1 - b];
        }
        for (std::size_t d = dims > 1 ? dims - 1 : 0; d-- > 0;) {  // the outer dimensions' odometer
            at += strides[d];
            if (++index[d] < leaf.shape[d])
                break;
            at -= strides[d] * leaf.shape[d];
            index[d] = 0;
        }
    }
}

}  // namespace

LeafBytes gatheredBytes(const std::byte* first, const TensorLeaf& leaf,
                        const std::vector<std::int64_t>& strides) {
    LeafBytes out = allocateOwnedBuffer(leaf.nbytes);
    gather(first, leaf, strides, out.data.get());
    return out;
}

LeafBytes viewBytes(const Container& files, const TensorLeaf& leaf, const std::string& where) {
    const StorageInfo& s = leaf.storage;
    const std::size_t item = itemSize(leaf.dtype);
    if (leaf.numel == 0 || leaf.nbytes == 0)
        return {};
    const std::vector<std::int64_t> strides = s.strides.empty() ? cStrides(leaf.shape) : s.strides;
    if (strides.size() != leaf.shape.size())
        throw Error::corrupt(where, "the view has " + std::to_string(strides.size()) +
                                        " strides for " + std::to_string(leaf.shape.size()) +
                                        " dimensions");
    // The last element the view reaches, which must lie inside the storage.
    const std::optional<ViewReach> reach = viewReach(leaf.shape, strides);
    std::uint64_t extent = 0;
    if (!reach || reach->numel != std::uint64_t(leaf.numel) || leaf.nbytes != reach->numel * item ||
        __builtin_mul_overflow(reach->last + 1, item, &extent) ||
        __builtin_add_overflow(extent, s.offset, &extent))
        throw Error::corrupt(where, "the tensor's size, strides and bytes do not agree");
    if (extent > s.size)
        throw Error::corrupt(where, "the tensor reaches byte " + std::to_string(extent) +
                                        " of a storage of " + std::to_string(s.size) + " bytes");
    const LeafBytes storage = files.leafBytes(s, extent, 1);
    std::byte* first = storage.data.get() + s.offset;
    const bool inPlace = !s.bigEndian && isCOrder(leaf.shape, strides);
    if (inPlace && reinterpret_cast<std::uintptr_t>(first) % item == 0)
        return {std::shared_ptr<std::byte>(storage.data, first),
                static_cast<std::size_t>(leaf.nbytes)};
    LeafBytes out = allocateOwnedBuffer(leaf.nbytes);
    const bool read = tryGuardedRun([&] {
        if (inPlace)
            std::memcpy(out.data.get(), first, leaf.nbytes);  // unaligned: copied
        else
            gather(first, leaf, strides, out.data.get());
    });
    if (!read)
        throw Error::changed(where);
    return out;
}

}  // namespace tensordict
