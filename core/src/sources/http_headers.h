#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tensordict::http {

// A path or query value as URLs carry it (RFC 3986, and S3's signing):
// unreserved characters (A-Z a-z 0-9 - _ . ~) as they are, every other byte
// as %XY in upper-case hex; '/' kept where it separates folders.
std::string percentEncode(std::string_view text, bool keepSlash);

// "Content-Range: bytes FIRST-LAST/TOTAL" (TOTAL may be "*"), parsed
// strictly: digits only, FIRST <= LAST, LAST < TOTAL; nullopt otherwise.
struct ContentRange {
    std::uint64_t first = 0, last = 0;
    std::optional<std::uint64_t> total;
};
std::optional<ContentRange> parseContentRange(std::string_view value);

// The headers of one answer that a reader of ranges uses, from the lines
// libcurl hands over one at a time (a status line starts a new answer: the
// headers of a redirect are not the file's).
struct ResponseHeaders {
    long status = 0;  // of the status line: an error's body is not the file's bytes
    std::string etag, lastModified, contentRange;
    std::optional<std::uint64_t> contentLength;

    void addLine(std::string_view line);
    // The version of the file the answer is of: its ETag, else its Last-Modified.
    const std::string& validator() const { return !etag.empty() ? etag : lastModified; }
};

// "Name: value" lines (TDSTUDIO_HTTP_HEADERS), one header each; blank lines
// are skipped. A line without a name before its ':', with a character a
// header name cannot hold, or with a control character (a carriage return
// would start another header) throws Error (invalid) naming `origin` and
// the line: a header sent mangled would fail far from its cause.
std::vector<std::pair<std::string, std::string>> parseHeaderLines(std::string_view lines,
                                                                  const std::string& origin);

// `s` without the spaces, tabs and line ends around it.
std::string_view trimmed(std::string_view s);

}  // namespace tensordict::http
