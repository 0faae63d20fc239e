#pragma once

// Tensors assembled from blocks of their elements, as a distributed
// checkpoint's chunks are (or any format whose records each hold a part of
// a tensor): each block is a box of the global shape (offsets, sizes), its
// elements in C order on their own. What is shared is the geometry: which
// of a box's elements a range of the whole holds, whether boxes tile the
// whole once, and the gathering of a range of the whole from its boxes.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tensordict {

struct ChunkBox {
    std::vector<std::int64_t> offsets, sizes;  // in the global tensor, one a dimension
    std::int64_t numel = 1;                    // the product of sizes (< 0: too large)
};

// The shape of a tensor assembled from boxes.
struct BoxedShape {
    std::vector<std::int64_t> shape;
    std::int64_t numel = 1;
    std::size_t itemSize = 1;
};

// Elements of `box` whose row-major index in the whole is below `e`: the
// box's elements keep their order, so the part of a range of the whole a
// box holds is one range of the box.
std::int64_t elementsBefore(const ChunkBox& box, const BoxedShape& whole, std::int64_t e);

// Whether the box is whole in every dimension but the first (a row-wise
// shard): its elements are one run of the whole's, from rowWiseStart().
bool isRowWise(const ChunkBox& box, const BoxedShape& whole);
std::int64_t rowWiseStart(const ChunkBox& box, const BoxedShape& whole);

// Why `boxes` do not tile the whole exactly once; "" when they do.
std::string tilingProblem(const BoxedShape& whole, const std::vector<const ChunkBox*>& boxes);

// Reads bytes [from, from + n) of box `i`'s own C-ordered elements into `out`.
using ReadBoxBytes =
    std::function<void(std::size_t i, std::uint64_t from, std::byte* out, std::size_t n)>;

// Bytes [offset, offset + n) of the whole into `out`, from each box the one
// range of its own bytes that falls in them. The caller has checked what
// these functions take as given: every box's numel is the product of its
// sizes (not negative), the boxes tile the whole (tilingProblem() is ""),
// the whole's bytes do not overflow, and the range lies within them.
void gatherBoxes(const BoxedShape& whole, const std::vector<const ChunkBox*>& boxes,
                 std::uint64_t offset, std::uint64_t n, std::byte* out, const ReadBoxBytes& read);

}  // namespace tensordict
