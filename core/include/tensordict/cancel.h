#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "tensordict/error.h"

namespace tensordict {

// Work that stopped because its caller asked. An Error, so that code that
// only catches Error still sees it; told apart by its type.
class Cancelled : public Error {
public:
    explicit Cancelled(std::string where, std::string reason = "cancelled")
        : Error(std::move(where), std::move(reason)) {}
};

// The one way to stop long work (save, compare): the caller keeps a copy
// and cancels it from any thread; the work polls it and stops soon after.
// Copies share one flag.
class CancelToken {
public:
    CancelToken() : flag_(std::make_shared<std::atomic<bool>>(false)) {}

    void cancel() const { flag_->store(true, std::memory_order_relaxed); }
    bool isCancelled() const { return flag_->load(std::memory_order_relaxed); }
    // Throws Cancelled(where) once cancelled.
    void throwIfCancelled(const std::string& where) const {
        if (isCancelled())
            throw Cancelled(where);
    }

private:
    std::shared_ptr<std::atomic<bool>> flag_;
};

// Makes `token` the one this thread's reads obey while the scope lives:
// a read that waits on a network (a slow web server) ends with Cancelled
// soon after it is cancelled, though no parameter carries the token down
// to it. Scopes nest; null means none.
class CancelScope {
public:
    explicit CancelScope(const CancelToken* token);
    ~CancelScope();
    CancelScope(const CancelScope&) = delete;
    CancelScope& operator=(const CancelScope&) = delete;
    // The innermost scope's token on this thread, or null.
    static const CancelToken* current();

private:
    const CancelToken* previous_;
};

}  // namespace tensordict
