// libFuzzer target: the headers of a web server's answer as the HTTP
// transport reads them (http_headers.h): each line of the input through
// ResponseHeaders::addLine, as libcurl hands them over, then the
// Content-Range found (and the whole input) through parseContentRange,
// whose result must be a range that makes sense: FIRST <= LAST < TOTAL.
// The input is also read as header lines (parseHeaderLines): each header
// accepted must have a name and no line break or control character.

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "sources/http_headers.h"
#include "tensordict/error.h"
#include "tensordict/transport_options.h"

namespace {

void checkRange(std::string_view value) {
    const auto range = tensordict::http::parseContentRange(value);
    if (range && (range->first > range->last || (range->total && range->last >= *range->total)))
        std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    tensordict::http::ResponseHeaders headers;
    for (std::size_t at = 0; at < input.size();) {
        const std::size_t end = std::min(input.find('\n', at), input.size());
        headers.addLine(
            input.substr(at, end + 1 - at > input.size() - at ? input.size() - at : end + 1 - at));
        at = end + 1;
    }
    checkRange(headers.contentRange);
    checkRange(input);
    (void)headers.validator();
    try {
        const auto control = [](unsigned char c) { return (c < 0x20 && c != '\t') || c == 0x7F; };
        for (const auto& [name, value] : tensordict::parseHeaderLines(input, "fuzz"))
            if (name.empty() || name.find(':') != std::string::npos ||
                std::any_of(name.begin(), name.end(), control) ||
                std::any_of(value.begin(), value.end(), control))
                std::abort();
    } catch (const tensordict::Error&) {
    }
    return 0;
}
