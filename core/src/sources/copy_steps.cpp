#include "sources/copy_steps.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tensordict/error.h"

namespace tensordict {

void writeAllAt(int fd, const void* data, std::size_t n, std::uint64_t at,
                const std::string& path) {
    const auto* p = static_cast<const char*>(data);
    while (n > 0) {
        const ssize_t w = ::pwrite(fd, p, n, static_cast<off_t>(at));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            throw Error::io(path, std::string("cannot write: ") + std::strerror(errno));
        p += w;
        n -= static_cast<std::size_t>(w);
        at += static_cast<std::uint64_t>(w);
    }
}

}  // namespace tensordict
