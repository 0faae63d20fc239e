#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tensordict/bytes.h"
#include "tensordict/cancel.h"
#include "tensordict/error.h"

namespace tensordict {

class Node;

// A leaf's bytes made readable range by range: one address range the size
// of the leaf, reserved but not committed, whose pages are filled from
// Node::bytesRange() when a reader first requires them. A view of one slice
// of a 1 GiB compressed leaf with access points then inflates a few MiB,
// not the whole entry. Resident pages are capped: the least recently
// required ones that no reader holds are given back to the system.
//
// A leaf on a web server is read the same way, in smaller pages: a
// picture of every 30th row of a 1 GiB leaf then fetches a few percent.
//
// Readers call requireBytes() (bytes.h) for the range they are about to
// read and keep the hold while they read it. Bytes no reader has required
// (never filled, or given back) read as zero in release builds; in debug
// builds they are not readable at all, so a reader that forgot to require
// its range dies there, loudly, instead of showing zeros.
class LeafPages : public std::enable_shared_from_this<LeafPages> {
public:
    // The bytes a viewer reads of `leaf`, by what the leaf is: page by page
    // where it is large, not in memory yet, and readable by range (a
    // deflated entry with access points, a leaf on a web server); otherwise
    // all of it (Node::bytes(), which may inflate or fetch it whole).
    // `owner` keeps the leaf's tree alive. Throws Error, Cancelled. On a worker.
    static LeafBytes forViewing(std::shared_ptr<const void> owner, const Node& leaf);

    // A compressed entry's pages: one between two of its access points.
    static constexpr std::uint64_t kCompressedPageSize = kAccessPointSpacing;
    // A remote leaf's pages: the transport's unit of reads.
    static constexpr std::uint64_t kRemotePageSize = 64u << 10;

    // What reading a byte of a page that is not filled does.
    enum class Unfilled { ReadsAsZero, Faults };
#ifdef NDEBUG
    static constexpr Unfilled kUnfilledByDefault = Unfilled::ReadsAsZero;
#else
    static constexpr Unfilled kUnfilledByDefault = Unfilled::Faults;
#endif

    // `owner` keeps `leaf`'s tree alive. `residentCap`: bytes kept filled
    // beyond those held. Throws Error when the range cannot be reserved.
    static std::shared_ptr<LeafPages> create(std::shared_ptr<const void> owner, const Node& leaf,
                                             std::uint64_t residentCap = 256u << 20,
                                             Unfilled unfilled = kUnfilledByDefault);
    ~LeafPages();
    LeafPages(const LeafPages&) = delete;
    LeafPages& operator=(const LeafPages&) = delete;

    // The whole leaf; readable where required (LeafBytes::pages is this).
    LeafBytes bytes();
    // Fills the pages of [offset, offset + length) not yet filled (runs of
    // them in one read, which inflates on several threads) and keeps them
    // while the result is held. Throws Error (a range past the leaf, a
    // failed read: the pages stay unfilled) or Cancelled.
    std::shared_ptr<const void> require(std::uint64_t offset, std::uint64_t length,
                                        const CancelToken* cancel = nullptr);
    // require() of several ranges at once, the runs of pages they need
    // read concurrently (a remote leaf's sampled rows: requests in flight
    // together, not one round trip after another). One hold for them all.
    struct Range {
        std::uint64_t offset = 0, length = 0;
    };
    std::shared_ptr<const void> requireAll(const std::vector<Range>& ranges,
                                           const CancelToken* cancel = nullptr);
    // The hold of a range whose pages are all filled now, or null (no wait,
    // no read: for the GUI thread).
    std::shared_ptr<const void> holdIfFilled(std::uint64_t offset, std::uint64_t length);
    // Whether every page of the range is filled now.
    bool isFilled(std::uint64_t offset, std::uint64_t length) const;
    // Why the last read that failed failed (none when none has).
    std::optional<Failure> failure() const;
    std::uint64_t residentBytes() const;
    std::uint64_t size() const {
        return size_;
    }
    std::uint64_t pageSize() const {
        return pageSize_;
    }
    // Whether its pages come from a source that cannot map (a web server):
    // every read is a request, so readers read no more than they show.
    bool fetches() const {
        return pageSize_ == kRemotePageSize;
    }

private:
    enum class State : std::uint8_t { Empty, Filling, Filled };
    struct Page {
        State state = State::Empty;
        int holds = 0;
        std::uint64_t lastUse = 0;
    };

    LeafPages(std::shared_ptr<const void> owner, const Node& leaf, std::uint64_t cap,
              Unfilled unfilled);
    // Makes pages [first, end) readable and writable (to be filled), or not
    // readable again (emptied), where unfilled pages fault.
    void setReadable(std::size_t first, std::size_t end, bool readable);
    std::uint64_t pageBytes(std::size_t page) const {
        return std::min<std::uint64_t>(pageSize_, size_ - page * pageSize_);
    }
    void requireWithin(std::uint64_t offset, std::uint64_t length) const;  // throws Error
    void release(std::size_t first, std::size_t last);
    std::shared_ptr<const void> holdOf(std::size_t first, std::size_t last);
    void evictOverCap();  // with mutex_ held

    std::shared_ptr<const void> owner_;
    const Node& leaf_;
    const std::string where_;  // the leaf's key, for errors
    const std::uint64_t size_, cap_, pageSize_;
    const Unfilled unfilled_;
    std::byte* base_ = nullptr;
    mutable std::mutex mutex_;
    std::condition_variable filled_;
    std::vector<Page> pages_;
    std::uint64_t resident_ = 0, clock_ = 0;
    std::optional<Failure> failure_;
};

}  // namespace tensordict
