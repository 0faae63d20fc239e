// The registry of transports, by URL scheme: local files, HTTP(S) and S3
// from the start; a program may register more or replace one.

#include <algorithm>
#include <cctype>
#include <mutex>
#include <vector>

#include "sources/http_transport.h"
#include "sources/local_file.h"
#include "sources/s3_transport.h"
#include "tensordict/error.h"
#include "tensordict/source.h"

namespace tensordict {
namespace {

struct Transports {
    std::mutex mutex;
    std::vector<std::shared_ptr<const Transport>> list{localTransport(), httpTransport("http"),
                                                       httpTransport("https"), s3Transport()};
};

Transports& transports() {
    static Transports instance;
    return instance;
}

// "https" of "https://host/x.tdz"; "" for a plain path.
std::string schemeOf(const std::string& location) {
    const auto colon = location.find("://");
    if (colon == std::string::npos || colon == 0)
        return {};
    std::string scheme = location.substr(0, colon);
    const bool valid = std::isalpha(static_cast<unsigned char>(scheme[0])) &&
                       std::all_of(scheme.begin(), scheme.end(), [](unsigned char c) {
                           return std::isalnum(c) || c == '+' || c == '-' || c == '.';
                       });
    if (!valid)
        return {};
    std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return scheme;
}

}  // namespace

std::string Transport::join(const std::string& location, const std::string& relative) const {
    if (relative.empty())
        return location;
    return !location.empty() && location.back() == '/' ? location + relative
                                                       : location + "/" + relative;
}

void registerTransport(std::shared_ptr<const Transport> transport) {
    Transports& r = transports();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto& list = r.list;
    list.erase(std::remove_if(list.begin(), list.end(),
                              [&](const auto& t) { return t->scheme() == transport->scheme(); }),
               list.end());
    list.push_back(std::move(transport));
}

std::shared_ptr<const Transport> transportFor(const std::string& location,
                                              const TransportOptions& options) {
    const std::string scheme = schemeOf(location);
    std::shared_ptr<const Transport> registered;
    {
        Transports& r = transports();
        std::lock_guard<std::mutex> lock(r.mutex);
        for (const auto& t : r.list)
            if (t->scheme() == (scheme.empty() ? "file" : scheme))
                registered = t;
    }
    if (!registered)
        throw Error::unsupported(location, "no transport for \"" + scheme + "://\" locations");
    auto configured = registered->withOptions(options, location);
    return configured ? configured : registered;
}

}  // namespace tensordict
