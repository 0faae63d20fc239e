#pragma once

#include <cstddef>

// Grows the heap once by `bytes` and asks for transparent huge pages over
// it, as glibc's glibc.malloc.hugetlb=1 tunable would. A tree of many small
// objects (a node, its strings and values per leaf) otherwise costs a page
// fault per 4 KiB of fresh heap, and faults are dear in a virtual machine:
// --info of a 10k-leaf archive took 4,100 of them. Where the system gives no
// huge pages (THP "never") or the heap is not where brk says, nothing changes.
void growHeapInHugePages(std::size_t bytes);
