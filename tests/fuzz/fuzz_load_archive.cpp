// libFuzzer target: tensordict::load of a .tdz archive, then every leaf read
// (sha256 and first values) and every non-tensor value written as JSON. The
// input is the archive file, kept in one memfd per process (rewritten for
// each input) and opened as /proc/self/fd/N: nothing is written to disk.

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "load_support.h"

namespace {

int archiveFd() {
    static const int fd = [] {
        const int fd = ::memfd_create("fuzz_load_archive.tdz", MFD_CLOEXEC);
        if (fd < 0) {
            std::fprintf(stderr, "memfd_create: %s\n", std::strerror(errno));
            std::abort();
        }
        return fd;
    }();
    return fd;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const int fd = archiveFd();
    if (::ftruncate(fd, 0) != 0 || ::ftruncate(fd, static_cast<off_t>(size)) != 0) {
        std::fprintf(stderr, "ftruncate: %s\n", std::strerror(errno));
        std::abort();
    }
    std::size_t done = 0;
    while (done < size) {
        const ssize_t n = ::pwrite(fd, data + done, size - done, static_cast<off_t>(done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            std::fprintf(stderr, "pwrite: %s\n", std::strerror(errno));
            std::abort();
        }
        done += static_cast<std::size_t>(n);
    }
    fuzz::loadAndRead("/proc/self/fd/" + std::to_string(fd));
    return 0;
}
