#include "sources/mapping.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>

#include "tensordict/error.h"

namespace tensordict {

LeafBytes mapFilePrivate(int fd, std::uint64_t length, const std::string& where) {
    if (length == 0)
        return {};
    // MAP_NORESERVE: a private writable mapping of a large file must not be
    // charged against the commit limit up front; pages are copied only if written.
    void* p = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_NORESERVE, fd, 0);
    if (p == MAP_FAILED)
        throw Error::io(where, std::string("cannot map file: ") + std::strerror(errno));
    std::shared_ptr<std::byte> data(static_cast<std::byte*>(p),
                                    [length](std::byte* q) { ::munmap(q, length); });
    return {std::move(data), static_cast<std::size_t>(length)};
}

LeafBytes allocateOwnedBuffer(std::size_t size) {
    if (size == 0)
        return {};
    constexpr std::size_t kAlign = 64;
    if (size > SIZE_MAX - kAlign)
        throw std::bad_alloc();
    const std::size_t rounded = (size + kAlign - 1) / kAlign * kAlign;
    void* p = std::aligned_alloc(kAlign, rounded);
    if (!p)
        throw std::bad_alloc();
    return {
        std::shared_ptr<std::byte>(static_cast<std::byte*>(p), [](std::byte* q) { std::free(q); }),
        size};
}

}  // namespace tensordict
