#include "huge_page_heap.h"

#include <malloc.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
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

void adviseThreadHeapInHugePages() {
    // glibc (without its hugetlb tunable, which does this itself) maps a
    // thread arena's heap at a multiple of its largest size, HEAP_MAX_SIZE,
    // and grows it in place, as its own heap_for_ptr() relies on. The
    // heap's first word points to its arena, which the first heap of an
    // arena holds a few bytes further on: that is checked (read so that a
    // page not readable fails the read, not the program) before the
    // reservation is advised, so that memory of any other layout is left alone.
    static const bool glibcAdvises = [] {
        const char* tunables = std::getenv("GLIBC_TUNABLES");
        return tunables && std::strstr(tunables, "hugetlb");
    }();
    if (glibcAdvises)
        return;
    constexpr std::uintptr_t kHeapReservation = 2 * 4 * 1024 * 1024 * sizeof(long);
    void* probe = std::malloc(1);
    if (!probe)
        return;
    const auto at = reinterpret_cast<std::uintptr_t>(probe);
    std::free(probe);
    if (at < reinterpret_cast<std::uintptr_t>(::sbrk(0)))
        return;  // the main arena's (past glibc's arena limit): already advised
    const std::uintptr_t base = at & ~(kHeapReservation - 1);
    static std::mutex mutex;
    static std::vector<std::uintptr_t> advised;  // heaps are reused by later threads
    const std::lock_guard<std::mutex> lock(mutex);
    if (std::find(advised.begin(), advised.end(), base) != advised.end())
        return;
    // Read without trusting that anything readable is there.
    std::uintptr_t arena = 0;
    iovec to{&arena, sizeof arena};
    iovec from{reinterpret_cast<void*>(base), sizeof arena};
    if (::process_vm_readv(::getpid(), &to, 1, &from, 1, 0) != sizeof arena)
        return;
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    if (arena <= base || arena >= base + page)
        return;
    if (::madvise(reinterpret_cast<void*>(base), kHeapReservation, MADV_HUGEPAGE) == 0)
        advised.push_back(base);
}
