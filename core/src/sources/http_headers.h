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

// Whether "name: value" can be sent as it is: a name of RFC 9110's token
// characters, and no control character in either (a carriage return would
// start another header). parseHeaderLines (transport_options.h) reads lines
// by this rule; the transport holds headers given in code to it.
bool isSendableHeader(std::string_view name, std::string_view value);

// `s` without the spaces, tabs and line ends around it.
std::string_view trimmed(std::string_view s);

}  // namespace tensordict::http
