#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

namespace tensordict {

class CancelToken;
class LeafPages;

// A leaf this large or larger is read in pieces where it can be: page by
// page for views, by ranges on every core when hashed, and a deflated one
// gets access points recorded by its first front-to-back inflate.
constexpr std::uint64_t kLargeLeafBytes = 16u << 20;
// How far apart the access points of a deflated entry are that tdstudio
// writes and records (a larger entry's may be further apart: access_index.h).
constexpr std::uint64_t kAccessPointSpacing = 4u << 20;

// Bytes kept alive by `data`'s owner: a mapping, a buffer read from a file,
// an inflated entry, or a container handed over by the caller.
struct LeafBytes {
    LeafBytes() = default;
    LeafBytes(std::shared_ptr<std::byte> data, std::size_t size)
        : data(std::move(data)), size(size) {}

    std::shared_ptr<std::byte> data;
    std::size_t size = 0;
    // Set when only the ranges required through it are readable: a large
    // compressed leaf read page by page (leaf_pages.h).
    std::shared_ptr<LeafPages> pages;
};

// Makes bytes [offset, offset + length) of `bytes` readable and keeps them
// so while the result is held. Nothing to do (a null hold) when all of
// `bytes` is readable. It may inflate: call it on a worker, never on the GUI
// thread. Throws Error, Cancelled.
std::shared_ptr<const void> requireBytes(const LeafBytes& bytes, std::uint64_t offset,
                                         std::uint64_t length, const CancelToken* cancel = nullptr);
// Whether bytes [offset, offset + length) are readable now (no wait).
bool hasBytes(const LeafBytes& bytes, std::uint64_t offset, std::uint64_t length);

// Bytes owned by a contiguous container (std::vector, std::string,
// QByteArray, ...), moved in: for leaves built in memory with addBytes().
template <typename Container>
LeafBytes ownedBytes(Container container) {
    auto holder = std::make_shared<Container>(std::move(container));
    auto* data = reinterpret_cast<std::byte*>(holder->data());
    const std::size_t size = static_cast<std::size_t>(holder->size()) * sizeof(*holder->data());
    return {std::shared_ptr<std::byte>(std::move(holder), data), size};
}

}  // namespace tensordict
