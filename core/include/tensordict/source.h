#pragma once

// The bytes of a source, wherever they live: the seam between transports
// (the local file system; a web server next) and the containers read
// through them (memmap directories, .tdz archives; checkpoints next).
//
// Ranged reads are the contract: a reader asks for `n` bytes at an offset.
// Mapping is an optional fast path that local files offer; a reader that
// gets no mapping reads ranges instead. A transport is one class plus one
// registerTransport() call, chosen by the location's URL scheme.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "tensordict/bytes.h"
#include "tensordict/transport_options.h"

namespace tensordict {

// One file's bytes. Thread-safe: leaves are read from worker threads.
class ByteSource {
public:
    virtual ~ByteSource() = default;
    // How the file is named in messages: a path or a URL.
    virtual const std::string& name() const = 0;
    virtual std::uint64_t size() const = 0;
    // Which version of the file this is (for a local file its inode and
    // modification time; for a web resource its validator): a reader that
    // opens the file again refuses a different version rather than mixing
    // bytes of two. "" when the transport cannot tell.
    virtual const std::string& version() const = 0;
    // Exactly `n` bytes from `offset` into `out`. Throws Error naming the
    // file when they cannot all be read (a short file, an I/O error).
    virtual void readAt(std::uint64_t offset, void* out, std::size_t n) const = 0;
    // The same, for bytes the reader keeps or will not ask for again (a
    // leaf's page, a streamed chunk): a source that caches what it reads
    // (a web server's blocks) need not keep them.
    virtual void readOnce(std::uint64_t offset, void* out, std::size_t n) const {
        readAt(offset, out, n);
    }
    // The whole file as copy-on-write memory (writes stay in this process;
    // the file never changes), or empty bytes when this source cannot map.
    // Touching a page the file lost raises SIGBUS: read it through
    // guarded_read.h.
    virtual LeafBytes map() const { return {}; }
    // Copies `n` bytes from `offset` into the file open as `fd`, at `at`:
    // inside the kernel (copy_file_range: the bytes never pass through this
    // process), or through a small buffer where that is faster (local
    // offsets at different places in their pages). False, with nothing
    // written, when this source or that file cannot (a web server, another
    // kind of file system): the caller copies them itself. Throws Error
    // naming the file when a copy under way fails.
    virtual bool copyTo(std::uint64_t offset, std::size_t n, int fd, std::uint64_t at) const {
        (void)offset, (void)n, (void)fd, (void)at;
        return false;
    }
};

// What is at a location.
struct SourceInfo {
    enum class Kind { Missing, File, Directory, Other };
    Kind kind = Kind::Missing;
    std::uint64_t size = 0;  // files only
    std::string version;     // as ByteSource::version() of the file opened now
    bool isLink = false;     // a symbolic link (local files)
    std::string missing;     // why it is Missing in the transport's words ("": no such file)
};

// Where sources are found: the local file system ("file", also paths with no
// scheme), later "http"/"https". Thread-safe.
class Transport {
public:
    virtual ~Transport() = default;
    // The URL schemes this transport serves, lower case: {"file"}.
    virtual std::string_view scheme() const = 0;
    // Whether its locations are paths of this machine's file systems: its
    // files map, its folders list, and opening one is work for a core
    // rather than a wait.
    virtual bool isLocal() const { return false; }
    virtual SourceInfo stat(const std::string& location) const = 0;
    // Opens a file; throws Error naming it (missing, a directory, refused).
    virtual std::shared_ptr<const ByteSource> open(const std::string& location) const = 0;
    // `relative` ("b/c.memmap") under the directory `location`.
    virtual std::string join(const std::string& location, const std::string& relative) const;
    // Where a location really is once links are followed, for transports
    // that have links (local files); "" otherwise.
    virtual std::string resolvedPath(const std::string&) const { return {}; }
    // The transport to use under `options`: another for a transport whose
    // reading they change (HTTP: certificates, credentials, its cache; the
    // same one for equal options); nullptr when this one serves them as it
    // is (local files, which they do not concern; options equal to its own).
    // Throws Error naming `location` for options it cannot use (a header
    // that cannot be sent).
    virtual std::shared_ptr<const Transport> withOptions(const TransportOptions&,
                                                         const std::string& /*location*/) const {
        return nullptr;
    }
};

// Makes `transport` serve its scheme (replacing one registered before).
void registerTransport(std::shared_ptr<const Transport> transport);
// The transport for a location: by its "scheme://" prefix, local files for
// a plain path; set up with `options` (Transport::withOptions). Throws Error
// naming the location for an unknown scheme.
std::shared_ptr<const Transport> transportFor(const std::string& location,
                                              const TransportOptions& options = {});

}  // namespace tensordict
