#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
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
// and cancels it from any thread; the work polls it and stops soon after,
// or waits for it. Copies share one state.
class CancelToken {
public:
    CancelToken() : state_(std::make_shared<State>()) {}

    void cancel() const;
    bool isCancelled() const { return state_->cancelled.load(std::memory_order_relaxed); }
    // Throws Cancelled(where) once cancelled.
    void throwIfCancelled(const std::string& where) const {
        if (isCancelled())
            throw Cancelled(where);
    }
    // Blocks until cancelled or until `bound` passed (a bound that only
    // limits a hung run); whether cancelled.
    bool waitUntilCancelled(std::chrono::milliseconds bound) const;

private:
    struct State {
        std::atomic<bool> cancelled{false};
        std::mutex mutex;
        std::condition_variable changed;
    };
    std::shared_ptr<State> state_;
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
