#include "tensordict/cancel.h"

namespace tensordict {
namespace {
thread_local const CancelToken* currentToken = nullptr;
}  // namespace

CancelScope::CancelScope(const CancelToken* token) : previous_(currentToken) {
    currentToken = token;
}

CancelScope::~CancelScope() {
    currentToken = previous_;
}

const CancelToken* CancelScope::current() {
    return currentToken;
}

}  // namespace tensordict
