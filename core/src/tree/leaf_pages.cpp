#include "tensordict/leaf_pages.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "tensordict/error.h"
#include "tensordict/keys.h"
#include "tensordict/node.h"
#include "tensordict/worker_threads.h"

namespace tensordict {

std::shared_ptr<LeafPages> LeafPages::create(std::shared_ptr<const void> owner, const Node& leaf,
                                             std::uint64_t residentCap, Unfilled unfilled) {
    return std::shared_ptr<LeafPages>(new LeafPages(std::move(owner), leaf, residentCap, unfilled));
}

LeafBytes LeafPages::forViewing(std::shared_ptr<const void> owner, const Node& leaf) {
    if (leaf.hasRandomAccess() && !leaf.isMaterialized() && leaf.leaf().nbytes >= kLargeLeafBytes)
        return create(std::move(owner), leaf)->bytes();
    return leaf.bytes();
}

LeafPages::LeafPages(std::shared_ptr<const void> owner, const Node& leaf, std::uint64_t cap,
                     Unfilled unfilled)
    : owner_(std::move(owner)),
      leaf_(leaf),
      where_(formatKeyPath(leaf.keyPath())),
      size_(leaf.leaf().nbytes),
      cap_(cap),
      pageSize_(leaf.leaf().storage.kind == StorageKind::CompressedEntry ? kCompressedPageSize
                                                                         : kRemotePageSize),
      unfilled_(unfilled) {
    if (size_ == 0)
        return;
    // Reserved, not committed: pages cost memory once filled.
    const int protection = unfilled_ == Unfilled::Faults ? PROT_NONE : PROT_READ | PROT_WRITE;
    void* p =
        ::mmap(nullptr, size_, protection, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        throw Error::io(where_, "cannot reserve " + std::to_string(size_) +
                                    " bytes of address space for its pages");
    base_ = static_cast<std::byte*>(p);
    pages_.resize(static_cast<std::size_t>((size_ + pageSize_ - 1) / pageSize_));
}

LeafPages::~LeafPages() {
    if (base_)
        ::munmap(base_, size_);
}

LeafBytes LeafPages::bytes() {
    LeafBytes out(std::shared_ptr<std::byte>(shared_from_this(), base_),
                  static_cast<std::size_t>(size_));
    out.pages = shared_from_this();
    return out;
}

bool LeafPages::isFilled(std::uint64_t offset, std::uint64_t length) const {
    if (length == 0)
        return true;
    if (offset > size_ || length > size_ - offset)
        return false;
    std::lock_guard<std::mutex> lock(mutex_);
    for (std::size_t p = offset / pageSize_; p <= (offset + length - 1) / pageSize_; ++p)
        if (pages_[p].state != State::Filled)
            return false;
    return true;
}

std::uint64_t LeafPages::residentBytes() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return resident_;
}

std::shared_ptr<const void> LeafPages::require(std::uint64_t offset, std::uint64_t length,
                                               const CancelToken* cancel) {
    requireWithin(offset, length);
    if (length == 0)
        return std::make_shared<int>(0);
    const std::size_t first = offset / pageSize_, last = (offset + length - 1) / pageSize_;
    std::size_t held = first;  // pages [first, held) are held by this call
    try {
        std::unique_lock<std::mutex> lock(mutex_);
        while (held <= last) {
            if (cancel)
                cancel->throwIfCancelled(where_);
            Page& page = pages_[held];
            if (page.state == State::Filling) {  // another reader fills it: wait
                filled_.wait(lock);
                continue;
            }
            if (page.state == State::Filled) {
                ++page.holds;
                page.lastUse = ++clock_;
                ++held;
                continue;
            }
            // A run of empty pages, filled in one read (outside the lock).
            std::size_t end = held;
            while (end <= last && pages_[end].state == State::Empty)
                pages_[end++].state = State::Filling;
            const std::uint64_t from = held * pageSize_;
            const std::uint64_t bytes = std::min<std::uint64_t>(end * pageSize_, size_) - from;
            lock.unlock();
            try {
                setReadable(held, end, true);
                // A remote leaf's request ends when `cancel` is set.
                const CancelScope scope(cancel ? cancel : CancelScope::current());
                const LeafBytes part = leaf_.bytesRange(from, bytes);
                std::memcpy(base_ + from, part.data.get(), part.size);
            } catch (const Cancelled&) {
                setReadable(held, end, false);
                lock.lock();
                for (std::size_t p = held; p < end; ++p)
                    pages_[p].state = State::Empty;
                filled_.notify_all();
                throw;
            } catch (const std::exception& e) {
                setReadable(held, end, false);
                lock.lock();
                for (std::size_t p = held; p < end; ++p)
                    pages_[p].state = State::Empty;
                failure_ = failureOf(e);
                filled_.notify_all();
                throw;
            }
            lock.lock();
            for (; held < end; ++held) {
                pages_[held] = {State::Filled, 1, ++clock_};
                resident_ += pageBytes(held);
            }
            filled_.notify_all();
        }
        evictOverCap();
    } catch (...) {
        if (held > first)
            release(first, held - 1);
        throw;
    }
    return holdOf(first, last);
}

std::shared_ptr<const void> LeafPages::requireAll(const std::vector<Range>& ranges,
                                                  const CancelToken* cancel) {
    // A few readers at once: a web server's round trips overlap (16 under
    // way), a compressed entry's segments inflate side by side (6).
    const std::size_t readers = fetches() ? 16 : 6;
    // The runs of pages the ranges touch: neighbours in one read, not a
    // read per range (a table's rows are one request).
    std::vector<std::pair<std::size_t, std::size_t>> pages;  // [first, last]
    for (const Range& r : ranges) {
        requireWithin(r.offset, r.length);
        if (r.length > 0)
            pages.emplace_back(r.offset / pageSize_, (r.offset + r.length - 1) / pageSize_);
    }
    std::sort(pages.begin(), pages.end());
    std::vector<Range> runs;
    for (std::size_t i = 0; i < pages.size();) {
        std::size_t last = pages[i].second, j = i + 1;
        for (; j < pages.size() && pages[j].first <= last + 1; ++j)
            last = std::max(last, pages[j].second);
        const std::uint64_t from = pages[i].first * pageSize_;
        runs.push_back({from, std::min<std::uint64_t>((last + 1) * pageSize_, size_) - from});
        i = j;
    }
    auto holds = std::make_shared<std::vector<std::shared_ptr<const void>>>(runs.size());
    // On a failure the holds taken go with `holds`.
    parallelFor(runs.size(), static_cast<int>(readers), [&](std::size_t i) {
        (*holds)[i] = require(runs[i].offset, runs[i].length, cancel);
    });
    return holds;
}

void LeafPages::requireWithin(std::uint64_t offset, std::uint64_t length) const {
    if (offset > size_ || length > size_ - offset)
        throw Error::invalid(where_, "bytes " + std::to_string(offset) + " to " +
                                         std::to_string(offset + length) + " are past the leaf's " +
                                         std::to_string(size_));
}

std::shared_ptr<const void> LeafPages::holdOf(std::size_t first, std::size_t last) {
    auto self = shared_from_this();
    return std::shared_ptr<const void>(
        self.get(), [self, first, last](const void*) { self->release(first, last); });
}

std::shared_ptr<const void> LeafPages::holdIfFilled(std::uint64_t offset, std::uint64_t length) {
    if (length == 0)
        return std::make_shared<int>(0);
    if (offset > size_ || length > size_ - offset)
        return nullptr;
    const std::size_t first = offset / pageSize_, last = (offset + length - 1) / pageSize_;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        for (std::size_t p = first; p <= last; ++p)
            if (pages_[p].state != State::Filled)
                return nullptr;
        for (std::size_t p = first; p <= last; ++p) {
            ++pages_[p].holds;
            pages_[p].lastUse = ++clock_;
        }
    }
    return holdOf(first, last);
}

std::optional<Failure> LeafPages::failure() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return failure_;
}

void LeafPages::release(std::size_t first, std::size_t last) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (std::size_t p = first; p <= last; ++p)
        --pages_[p].holds;
    evictOverCap();
}

void LeafPages::evictOverCap() {
    while (resident_ > cap_) {
        std::size_t oldest = pages_.size();
        for (std::size_t p = 0; p < pages_.size(); ++p)
            if (pages_[p].state == State::Filled && pages_[p].holds == 0 &&
                (oldest == pages_.size() || pages_[p].lastUse < pages_[oldest].lastUse))
                oldest = p;
        if (oldest == pages_.size())
            return;  // all held: over the cap until a reader lets go
        // Private anonymous pages read as zero again, and cost nothing.
        ::madvise(base_ + oldest * pageSize_, pageBytes(oldest), MADV_DONTNEED);
        setReadable(oldest, oldest + 1, false);
        pages_[oldest].state = State::Empty;
        resident_ -= pageBytes(oldest);
    }
}

void LeafPages::setReadable(std::size_t first, std::size_t end, bool readable) {
    if (unfilled_ != Unfilled::Faults || first >= end)
        return;
    // Pages start on multiples of the system's page; the last one's length
    // is rounded up to it, within the reservation. Protecting again may fail
    // (each split of the mapping counts against vm.max_map_count): the guard
    // then catches less, which is no reason to fail the read that asked.
    const std::uint64_t from = first * pageSize_;
    const std::uint64_t length = std::min<std::uint64_t>(end * pageSize_, size_) - from;
    if (::mprotect(base_ + from, length, readable ? PROT_READ | PROT_WRITE : PROT_NONE) != 0 &&
        readable)
        throw Error::io(where_,
                        std::string("cannot make its pages readable: ") + std::strerror(errno));
}

std::shared_ptr<const void> requireBytes(const LeafBytes& bytes, std::uint64_t offset,
                                         std::uint64_t length, const CancelToken* cancel) {
    return bytes.pages ? bytes.pages->require(offset, length, cancel) : nullptr;
}

bool hasBytes(const LeafBytes& bytes, std::uint64_t offset, std::uint64_t length) {
    return !bytes.pages || bytes.pages->isFilled(offset, length);
}

}  // namespace tensordict
