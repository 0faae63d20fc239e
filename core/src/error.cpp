#include "tensordict/error.h"

namespace tensordict {

Error::Error(std::string where, std::string reason)
    : std::runtime_error(where.empty() ? reason : where + ": " + reason),
      where_(std::move(where)),
      reason_(std::move(reason)) {}

}  // namespace tensordict
