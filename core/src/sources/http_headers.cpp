#include "sources/http_headers.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "tensordict/error.h"
#include "tensordict/transport_options.h"

namespace tensordict::http {

std::string percentEncode(std::string_view text, bool keepSlash) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(text.size());
    for (const char ch : text) {
        const auto c = static_cast<unsigned char>(ch);
        const bool alnum =
            (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (alnum || c == '-' || c == '_' || c == '.' || c == '~' || (keepSlash && c == '/')) {
            out += ch;
        } else {
            out += '%';
            out += kHex[c >> 4];
            out += kHex[c & 15];
        }
    }
    return out;
}
namespace {

// A decimal number of digits only, that fits 64 bits.
std::optional<std::uint64_t> number(std::string_view s) {
    if (s.empty() || s.size() > 20)
        return std::nullopt;
    std::uint64_t n = 0;
    for (const char c : s) {
        if (c < '0' || c > '9')
            return std::nullopt;
        const std::uint64_t digit = static_cast<std::uint64_t>(c - '0');
        if (n > (std::numeric_limits<std::uint64_t>::max() - digit) / 10)
            return std::nullopt;
        n = n * 10 + digit;
    }
    return n;
}

bool equalsIgnoringCase(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) ==
                      std::tolower(static_cast<unsigned char>(y));
           });
}

}  // namespace

std::string_view trimmed(std::string_view s) {
    const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
    while (!s.empty() && blank(s.front()))
        s.remove_prefix(1);
    while (!s.empty() && blank(s.back()))
        s.remove_suffix(1);
    return s;
}

bool isSendableHeader(std::string_view name, std::string_view value) {
    // RFC 9110's token characters, which a field name is made of.
    const auto tokenChar = [](unsigned char c) {
        return std::isalnum(c) ||
               std::string_view("!#$%&'*+-.^_`|~").find(char(c)) != std::string_view::npos;
    };
    const auto control = [](unsigned char c) { return (c < 0x20 && c != '\t') || c == 0x7F; };
    return !name.empty() && std::all_of(name.begin(), name.end(), tokenChar) &&
           std::none_of(value.begin(), value.end(), control);
}

std::optional<ContentRange> parseContentRange(std::string_view value) {
    value = trimmed(value);
    constexpr std::string_view unit = "bytes ";
    if (value.size() < unit.size() || !equalsIgnoringCase(value.substr(0, unit.size()), unit))
        return std::nullopt;
    value.remove_prefix(unit.size());
    const auto dash = value.find('-'), slash = value.find('/');
    if (dash == std::string_view::npos || slash == std::string_view::npos || dash > slash)
        return std::nullopt;
    const auto first = number(value.substr(0, dash));
    const auto last = number(value.substr(dash + 1, slash - dash - 1));
    if (!first || !last || *first > *last)
        return std::nullopt;
    ContentRange range{*first, *last, std::nullopt};
    const std::string_view total = value.substr(slash + 1);
    if (total != "*") {
        range.total = number(total);
        if (!range.total || *last >= *range.total)
            return std::nullopt;
    }
    return range;
}

void ResponseHeaders::addLine(std::string_view line) {
    if (line.substr(0, 5) == "HTTP/") {  // a new answer (after a redirect): start over
        *this = {};
        // "HTTP/1.1 206 Partial Content", "HTTP/2 200"
        const auto space = line.find(' ');
        if (space != std::string_view::npos)
            status = static_cast<long>(number(trimmed(line.substr(space + 1, 4))).value_or(0));
        return;
    }
    const auto colon = line.find(':');
    if (colon == std::string_view::npos)
        return;
    const std::string_view name = trimmed(line.substr(0, colon));
    const std::string_view value = trimmed(line.substr(colon + 1));
    if (equalsIgnoringCase(name, "etag"))
        etag = value;
    else if (equalsIgnoringCase(name, "last-modified"))
        lastModified = value;
    else if (equalsIgnoringCase(name, "content-range"))
        contentRange = value;
    else if (equalsIgnoringCase(name, "content-length"))
        contentLength = number(value);
}

}  // namespace tensordict::http

namespace tensordict {

std::vector<std::pair<std::string, std::string>> parseHeaderLines(std::string_view text,
                                                                  const std::string& origin) {
    std::vector<std::pair<std::string, std::string>> headers;
    for (int number = 1; !text.empty(); ++number) {
        const std::size_t end = std::min(text.find('\n'), text.size());
        const std::string_view line = http::trimmed(text.substr(0, end));
        text.remove_prefix(std::min(end + 1, text.size()));
        if (line.empty())
            continue;
        const std::size_t colon = line.find(':');
        const std::string_view name = line.substr(0, std::min(colon, line.size()));
        if (colon == std::string_view::npos ||
            !http::isSendableHeader(name, line.substr(colon + 1)))
            throw Error::invalid(origin, "line " + std::to_string(number) + " (\"" +
                                             std::string(line) +
                                             "\") is not a header: \"Name: value\" expected");
        headers.emplace_back(std::string(name), std::string(http::trimmed(line.substr(colon + 1))));
    }
    return headers;
}

}  // namespace tensordict
