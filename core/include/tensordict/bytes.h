#pragma once

#include <cstddef>
#include <memory>

namespace tensordict {

// Bytes kept alive by `data`'s owner: a mapping, a buffer read from a file,
// an inflated entry, or a container handed over by the caller.
struct LeafBytes {
    std::shared_ptr<std::byte> data;
    std::size_t size = 0;
};

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
