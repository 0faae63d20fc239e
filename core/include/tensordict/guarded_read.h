#pragma once

// Reading leaf bytes that may vanish underneath.
//
// A leaf's bytes are mapped from its file (or from the archive), and another
// process may truncate or rewrite that file while we read it: a training job
// rewriting its replay buffer, say. Touching a page that is no longer backed
// by the file raises SIGBUS, which would kill the process. So every read of
// leaf bytes goes through this one guarded path: a copy out of the mapping
// (or a short computation over it) during which SIGBUS is caught and turned
// into an Error, as the JVM does for its mapped buffers. A process-wide
// SIGBUS handler jumps back (siglongjmp) only into a guarded region of the
// faulting thread; a SIGBUS anywhere else keeps its usual meaning. Works on
// any thread: each has its own landing point.
//
// Streaming whole leaves (sha256, statistics, saving) uses LeafReader: it
// copies chunk by chunk, inflates compressed entries as it goes (never the
// whole leaf in memory), and checks an archive entry's CRC-32 when it reads
// all of it. A mismatch marks the leaf (Node::integrityWarning()) rather than
// failing: tensordict's in-place "r+" writes leave stale CRCs legitimately.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "tensordict/node.h"

namespace tensordict {

class CompressedRecords;  // container.h

// Copies `n` bytes from `src` (inside a mapping) to `dst`. False if the
// mapping lost those pages (the file shrank or went away); dst is then
// partly written.
bool tryGuardedCopy(void* dst, const void* src, std::size_t n) noexcept;

// The same, throwing Error::changed naming the leaf's file.
void guardedCopy(void* dst, const void* src, std::size_t n, const Node& leaf);

// Runs `work`, which reads a mapping in place; false if the mapping lost
// pages meanwhile (work was cut short). Exceptions from work pass through.
bool tryGuardedRun(const std::function<void()>& work);

// Runs `work`, which reads a mapping in place, with SIGBUS turned into an
// Error naming `leaf`. `work` must own nothing that needs destroying at the
// point of a fault (plain loops over the bytes, C codecs): a fault leaves
// it by a jump, not by unwinding.
void guardedRun(const std::function<void()>& work, const Node& leaf);

// A tensor leaf's bytes, front to back, in chunks the caller sizes.
class LeafReader {
public:
    explicit LeafReader(const Node& leaf);
    ~LeafReader();
    LeafReader(const LeafReader&) = delete;
    LeafReader& operator=(const LeafReader&) = delete;

    // Copies the next bytes (at most `n`) into `dst`; returns how many, 0
    // at the end. Throws Error naming the file or entry if its data changed,
    // is corrupt or ends early.
    std::size_t read(std::byte* dst, std::size_t n);
    std::uint64_t size() const { return size_; }
    std::uint64_t position() const { return done_; }
    // Whether the reader reads by range: a leaf on a web server (each read
    // a request), or, asked before the first read, a large compressed entry
    // with access points (from then on, each range inflated segment by
    // segment on every core). Such a reader is best read in large chunks,
    // the next under way while one is consumed.
    bool readByRanges();
    // Whether those ranges are inflated segment by segment (a compressed
    // entry with access points) rather than requested or copied.
    bool inflatesSegments() const { return segmented_; }
    // Such a reader's bytes [offset, offset + n), from any thread, in any
    // order; each part then goes through taken(), in order, before it is
    // used: the entry's CRC is checked there. False, with `dst` undefined,
    // when a compressed entry's access points proved wrong (or were dropped
    // from the cache): the caller reads on with readAsStream().
    bool fetchAt(std::uint64_t offset, std::byte* dst, std::size_t n) const;
    // Reads a compressed entry on from position() by inflating it front to
    // back (what was read before is inflated again and dropped).
    void readAsStream();
    void taken(const std::byte* data, std::size_t n);

private:
    void finish();

    const Node& leaf_;
    std::uint64_t size_ = 0;
    std::uint64_t done_ = 0;
    LeafBytes mapped_;  // files, stored entries, memory: the bytes in place
    // An entry to inflate (front to back, unless ...): its container's records.
    const CompressedRecords* records_ = nullptr;
    bool ranged_ = false;     // read range by range: a source that cannot map, or ...
    bool segmented_ = false;  // ... a compressed entry inflated segment by segment
    struct Stream;            // compressed entries: a decoder over the payload
    std::unique_ptr<Stream> stream_;
    std::uint32_t crc_ = 0;
    bool checkCrc_ = false;
    // A stored entry's bytes before the leaf, whose CRC starts the entry's.
    std::uint64_t headerBytes_ = 0;
};

// Reads a whole leaf through LeafReader, `chunk` bytes at a time.
void forEachChunk(const Node& leaf, std::size_t chunk,
                  const std::function<void(const std::byte*, std::size_t)>& consume);

}  // namespace tensordict
