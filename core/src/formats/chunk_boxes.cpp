#include "formats/chunk_boxes.h"

#include <algorithm>
#include <cstring>

namespace tensordict {

std::int64_t elementsBefore(const ChunkBox& box, const BoxedShape& whole, std::int64_t e) {
    if (e >= whole.numel)
        return box.numel;
    std::int64_t count = 0, inner = box.numel, rest = whole.numel;
    for (std::size_t d = 0; d < whole.shape.size(); ++d) {
        rest /= whole.shape[d];
        inner = box.sizes[d] ? inner / box.sizes[d] : 0;
        const std::int64_t at = e / rest;
        e %= rest;
        if (at < box.offsets[d])
            return count;
        if (at >= box.offsets[d] + box.sizes[d])
            return count + box.sizes[d] * inner;
        count += (at - box.offsets[d]) * inner;
    }
    return count;
}

bool isRowWise(const ChunkBox& box, const BoxedShape& whole) {
    for (std::size_t d = 1; d < whole.shape.size(); ++d)
        if (box.sizes[d] != whole.shape[d])
            return false;
    return true;
}

std::int64_t rowWiseStart(const ChunkBox& box, const BoxedShape& whole) {
    return whole.shape.empty()
               ? 0
               : box.offsets[0] * (whole.numel / std::max<std::int64_t>(1, whole.shape[0]));
}

std::string tilingProblem(const BoxedShape& whole, const std::vector<const ChunkBox*>& boxes) {
    const std::vector<std::int64_t>& shape = whole.shape;
    std::int64_t covered = 0;
    for (std::size_t i = 0; i < boxes.size(); ++i) {
        const ChunkBox& c = *boxes[i];
        if (c.offsets.size() != shape.size() || c.sizes.size() != shape.size())
            return "chunk " + std::to_string(i) + " has " + std::to_string(c.offsets.size()) +
                   " dimensions, the tensor " + std::to_string(shape.size());
        for (std::size_t d = 0; d < shape.size(); ++d)
            if (c.offsets[d] > shape[d] || c.sizes[d] > shape[d] - c.offsets[d])
                return "chunk " + std::to_string(i) + " reaches past the tensor in dimension " +
                       std::to_string(d);
        covered += c.numel;
    }
    for (std::size_t i = 0; i < boxes.size(); ++i)
        for (std::size_t j = i + 1; j < boxes.size(); ++j) {
            const ChunkBox &a = *boxes[i], &b = *boxes[j];
            if (a.numel == 0 || b.numel == 0)
                continue;
            bool meet = true;
            for (std::size_t d = 0; d < shape.size() && meet; ++d)
                meet = a.offsets[d] < b.offsets[d] + b.sizes[d] &&
                       b.offsets[d] < a.offsets[d] + a.sizes[d];
            if (meet)
                return "chunks " + std::to_string(i) + " and " + std::to_string(j) +
                       " overlap: two values for the same elements";
        }
    if (covered != whole.numel)
        return "its chunks cover " + std::to_string(covered) + " of its " +
               std::to_string(whole.numel) + " elements: the rest was never written";
    return {};
}

void gatherBoxes(const BoxedShape& whole, const std::vector<const ChunkBox*>& boxes,
                 std::uint64_t offset, std::uint64_t n, std::byte* out, const ReadBoxBytes& read) {
    const std::uint64_t item = whole.itemSize;
    if (n == 0)
        return;
    if (offset % item != 0 || n % item != 0) {  // whole elements, then the part asked for
        const std::uint64_t from = offset / item * item;
        const std::uint64_t to = std::min<std::uint64_t>((offset + n + item - 1) / item * item,
                                                         std::uint64_t(whole.numel) * item);
        std::vector<std::byte> elements(static_cast<std::size_t>(to - from));
        gatherBoxes(whole, boxes, from, to - from, elements.data(), read);
        std::copy_n(elements.data() + (offset - from), n, out);
        return;
    }
    const std::int64_t e0 = static_cast<std::int64_t>(offset / item);
    const std::int64_t e1 = static_cast<std::int64_t>((offset + n) / item);
    const std::size_t dims = whole.shape.size();
    std::vector<std::int64_t> globalStrides(dims, 1);
    for (std::size_t d = dims; d-- > 1;)
        globalStrides[d - 1] = globalStrides[d] * whole.shape[d];
    for (std::size_t i = 0; i < boxes.size(); ++i) {
        const ChunkBox& c = *boxes[i];
        const std::int64_t l0 = elementsBefore(c, whole, e0), l1 = elementsBefore(c, whole, e1);
        if (l0 >= l1)
            continue;
        const std::size_t bytes = static_cast<std::size_t>((l1 - l0) * item);
        if (isRowWise(c, whole)) {  // straight into place
            const std::int64_t g = rowWiseStart(c, whole) + l0;
            read(i, std::uint64_t(l0) * item, out + (g - e0) * item, bytes);
            continue;
        }
        std::vector<std::byte> part(bytes);
        read(i, std::uint64_t(l0) * item, part.data(), bytes);
        // The box's elements l0.. as runs along its last dimension.
        std::vector<std::int64_t> index(dims, 0);
        std::int64_t rest = l0;
        for (std::size_t d = dims; d-- > 0;) {
            index[d] = c.sizes[d] ? rest % c.sizes[d] : 0;
            rest = c.sizes[d] ? rest / c.sizes[d] : 0;
        }
        for (std::int64_t l = l0; l < l1;) {
            std::int64_t g = 0;
            for (std::size_t d = 0; d < dims; ++d)
                g += (c.offsets[d] + index[d]) * globalStrides[d];
            const std::int64_t run =
                dims ? std::min(c.sizes[dims - 1] - index[dims - 1], l1 - l) : 1;
            std::memcpy(out + (g - e0) * item, part.data() + (l - l0) * item,
                        static_cast<std::size_t>(run * item));
            l += run;
            if (dims) {
                index[dims - 1] += run;
                for (std::size_t d = dims - 1; d > 0 && index[d] == c.sizes[d]; --d) {
                    index[d] = 0;
                    ++index[d - 1];
                }
            }
        }
    }
}

}  // namespace tensordict
