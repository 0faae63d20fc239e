#pragma once

#include <atomic>
#include <exception>
#include <memory>
#include <string>

#include "tensordict/error.h"

namespace tensordict {

// Work that stopped because its caller asked: an outcome of its own, never
// an Error (code that handles failures must not turn a cancel into one).
class Cancelled : public std::exception {
public:
    explicit Cancelled(std::string where)
        : where_(std::move(where)), what_(where_.empty() ? "cancelled" : where_ + ": cancelled") {}
    const char* what() const noexcept override { return what_.c_str(); }
    // What was under way when the cancel was seen (a file, a URL, a key).
    const std::string& where() const noexcept { return where_; }

private:
    std::string where_, what_;
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
