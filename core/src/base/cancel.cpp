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

void CancelToken::cancel() const {
    {
        // Under the lock, so that a waiter between its check and its wait hears it.
        std::lock_guard<std::mutex> lock(state_->mutex);
        state_->cancelled.store(true, std::memory_order_relaxed);
    }
    state_->changed.notify_all();
}

bool CancelToken::waitUntilCancelled(std::chrono::milliseconds bound) const {
    std::unique_lock<std::mutex> lock(state_->mutex);
    return state_->changed.wait_for(lock, bound, [&] { return isCancelled(); });
}

const CancelToken* CancelScope::current() {
    return currentToken;
}

}  // namespace tensordict
