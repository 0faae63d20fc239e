#include "huge_page_heap.h"

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

void growHeapInHugePages(std::size_t bytes) {
    constexpr std::uintptr_t kHugePage = 2u << 20;
    constexpr std::size_t kProbe = 64u << 10;  // under the mmap threshold: from the heap
    // Each growth of the heap takes `bytes` more than asked, and a free
    // never gives them back. Setting these turns off glibc's sliding mmap
    // threshold, which would have grown to 32 MiB: fixed there, buffers of
    // a few MiB (a chunk, a segment) come from the heap and are reused
    // rather than mapped, faulted and unmapped each time.
    constexpr int kMmapFrom = 32 << 20;
    if (!mallopt(M_TOP_PAD, static_cast<int>(bytes)) ||
        !mallopt(M_TRIM_THRESHOLD, static_cast<int>(2 * bytes)) ||
        !mallopt(M_MMAP_THRESHOLD, kMmapFrom))
        return;
    const auto brk = [] { return reinterpret_cast<std::uintptr_t>(::sbrk(0)); };
    const std::uintptr_t before = brk();
    // Take small blocks until the heap grows (the top's room runs out).
    std::vector<void*> probes;
    while (brk() == before && probes.size() < 64) {
        void* p = std::malloc(kProbe);
        if (!p)
            break;
        probes.push_back(p);
    }
    for (void* p : probes)
        std::free(p);
    const std::uintptr_t after = brk();
    const std::uintptr_t from = (before + kHugePage - 1) & ~(kHugePage - 1);
    if (after > from + kHugePage)
        ::madvise(reinterpret_cast<void*>(from), after - from, MADV_HUGEPAGE);
}
