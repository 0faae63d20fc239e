#pragma once

#include <cstddef>

// Grows the heap once by `bytes` and asks for transparent huge pages over
// it, as glibc's glibc.malloc.hugetlb=1 tunable would. A tree of many small
// objects (a node, its strings and values per leaf) otherwise costs a page
// fault per 4 KiB of fresh heap, and faults are dear in a virtual machine:
// --info of a 10k-leaf archive took 4,100 of them. Where the system gives no
// huge pages (THP "never") or the heap is not where brk says, nothing changes.
void growHeapInHugePages(std::size_t bytes);

// The same for the heap of the thread that calls it, meant to run first in
// each worker thread (tensordict::setWorkerThreadStart): glibc gives such a
// thread an arena of its own, mapped apart from the main heap, and the
// trees that eight shard openers build live there. Each heap is advised
// once; a heap of another layout than glibc's is left as it is.
void adviseThreadHeapInHugePages();
