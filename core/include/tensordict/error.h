#pragma once

#include <stdexcept>
#include <string>

namespace tensordict {

// The one exception type at libtensordict's boundary. It names what failed
// (a file, an archive entry or a key path) and why, so that callers can show
// "where: why" without knowing which layer raised it.
class Error : public std::runtime_error {
public:
    Error(std::string where, std::string reason);

    const std::string& where() const noexcept { return where_; }
    const std::string& reason() const noexcept { return reason_; }

private:
    std::string where_;
    std::string reason_;
};

}  // namespace tensordict
