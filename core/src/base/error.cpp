#include "tensordict/error.h"

#include <new>

namespace tensordict {

std::string_view errorKindName(ErrorKind kind) {
    switch (kind) {
        case ErrorKind::NotFound:
            return "not_found";
        case ErrorKind::Changed:
            return "changed";
        case ErrorKind::Corrupt:
            return "corrupt";
        case ErrorKind::Truncated:
            return "truncated";
        case ErrorKind::Unsupported:
            return "unsupported";
        case ErrorKind::NotReadHere:
            return "not_read_here";
        case ErrorKind::Unplaced:
            return "unplaced";
        case ErrorKind::Denied:
            return "denied";
        case ErrorKind::Untrusted:
            return "untrusted";
        case ErrorKind::Network:
            return "network";
        case ErrorKind::Io:
            return "io";
        case ErrorKind::Invalid:
            return "invalid";
    }
    return "corrupt";
}

std::string Failure::text() const {
    return where.empty() ? reason : where + ": " + reason;
}

Error::Error(Failure failure) : std::runtime_error(failure.text()), failure_(std::move(failure)) {}

Error Error::notFound(std::string where, std::string reason) {
    return Error({ErrorKind::NotFound, std::move(where), std::move(reason)});
}

Error Error::changed(std::string where, std::string_view how) {
    return Error({ErrorKind::Changed, std::move(where),
                  "the data changed while it was read (" + std::string(how) +
                      "); reload to see its current contents"});
}

Error Error::corrupt(std::string where, std::string reason) {
    return Error({ErrorKind::Corrupt, std::move(where), std::move(reason)});
}

Error Error::truncated(std::string where, std::string reason) {
    return Error({ErrorKind::Truncated, std::move(where), std::move(reason)});
}

Error Error::unsupported(std::string where, std::string reason) {
    return Error({ErrorKind::Unsupported, std::move(where), std::move(reason)});
}

Error Error::notReadHere(std::string where, std::string reason) {
    return Error({ErrorKind::NotReadHere, std::move(where), std::move(reason)});
}

Error Error::unplaced(std::string where, std::string reason) {
    return Error({ErrorKind::Unplaced, std::move(where), std::move(reason)});
}

Error Error::denied(std::string where, std::string reason) {
    return Error({ErrorKind::Denied, std::move(where), std::move(reason)});
}

Error Error::untrusted(std::string where, std::string reason) {
    return Error({ErrorKind::Untrusted, std::move(where), std::move(reason)});
}

Error Error::network(std::string where, std::string reason) {
    return Error({ErrorKind::Network, std::move(where), std::move(reason)});
}

Error Error::io(std::string where, std::string reason) {
    return Error({ErrorKind::Io, std::move(where), std::move(reason)});
}

Error Error::invalid(std::string where, std::string reason) {
    return Error({ErrorKind::Invalid, std::move(where), std::move(reason)});
}

Failure failureOf(const std::exception& e) {
    if (const auto* error = dynamic_cast<const Error*>(&e))
        return error->failure();
    if (dynamic_cast<const std::bad_alloc*>(&e))
        return {ErrorKind::Io, {}, "out of memory"};
    return {ErrorKind::Io, {}, e.what()};
}

}  // namespace tensordict
