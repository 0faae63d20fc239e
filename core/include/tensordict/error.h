#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace tensordict {

// What kind of failure an error is. Code that reacts to a failure (offer
// Reload, say "not found", count a check's finding) decides by the kind,
// never by the words of the message, which are for people only.
enum class ErrorKind {
    NotFound,     // no such file, entry, key or URL
    Changed,      // the data changed underneath while it was read (truncated, replaced,
                  // a new version on the server): reading it again may work
    Corrupt,      // bytes that break their format's rules (damaged, malformed)
    Truncated,    // a file that ends before the data its own metadata describes
    Unsupported,  // beyond what is read or written: a name, code or version no reader here
                  // knows or accepts (a dtype, a protocol, a pickle that would run code),
                  // which may be a newer writer's or damage; or what a format cannot hold
    NotReadHere,  // a part recognised as well-formed of a kind its format allows but
                  // tdstudio does not decode (a NumPy string array): not damage
    Unplaced,     // data the file holds outside every part tdstudio shows (storages a
                  // pickle loads that no shown tensor uses): unread, sound or damaged
    Denied,       // not allowed: permissions, an HTTP 401/403, a link out of the dataset
    Untrusted,    // a server whose certificate is not trusted
    Network,      // the network or the server failed (after retries), or stalled
    Io,           // the operating system failed to read or write (disk full, EIO, memory)
    Invalid,      // the request itself cannot be carried out (a save that would merge keys)
};

// "not_found", "changed", ...: the kind as machine-readable output names it.
std::string_view errorKindName(ErrorKind kind);

// A failure as plain data: what jobs hand back and error nodes keep.
struct Failure {
    ErrorKind kind = ErrorKind::Corrupt;
    std::string where;   // the file, archive entry, URL or key path at fault ("" if none)
    std::string reason;  // why, in words
    // "where: reason", or the reason alone.
    std::string text() const;
};

// The one exception type at libtensordict's boundary. It names what failed
// (a file, an archive entry or a key path), why, and what kind of failure
// it is. Each kind has its constructor; the words of a change are written
// once, in changed().
class Error : public std::runtime_error {
public:
    explicit Error(Failure failure);

    static Error notFound(std::string where, std::string reason);
    // `how` says what changed, in parentheses after the standard words:
    // "the file was truncated or replaced by another program".
    static Error changed(std::string where, std::string_view how = kChangedLocally);
    static Error corrupt(std::string where, std::string reason);
    static Error truncated(std::string where, std::string reason);
    static Error unsupported(std::string where, std::string reason);
    static Error notReadHere(std::string where, std::string reason);
    static Error unplaced(std::string where, std::string reason);
    static Error denied(std::string where, std::string reason);
    static Error untrusted(std::string where, std::string reason);
    static Error network(std::string where, std::string reason);
    static Error io(std::string where, std::string reason);
    static Error invalid(std::string where, std::string reason);

    ErrorKind kind() const noexcept { return failure_.kind; }
    const std::string& where() const noexcept { return failure_.where; }
    const std::string& reason() const noexcept { return failure_.reason; }
    const Failure& failure() const noexcept { return failure_; }

    static constexpr std::string_view kChangedLocally =
        "the file was truncated or replaced by another program";
    static constexpr std::string_view kChangedOnServer = "a new version on the server";

private:
    Failure failure_;
};

// The failure an exception stands for: an Error's own, or (anything else
// thrown: out of memory) an I/O failure with its words.
Failure failureOf(const std::exception& e);

}  // namespace tensordict
