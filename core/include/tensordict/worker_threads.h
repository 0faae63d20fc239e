#pragma once

// The one way the library and its programs run work on several threads
// (save's writers, compare's chunks, the window's statistics): plain
// std::threads, started and joined in one place.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tensordict/cancel.h"

namespace tensordict {

// What every worker thread runs first, before its work: how a program tunes
// the threads the library starts (the app puts each thread's heap in huge
// pages). Set it once, before any worker starts; nullptr for nothing.
using WorkerThreadStart = void (*)();
void setWorkerThreadStart(WorkerThreadStart start);
WorkerThreadStart workerThreadStart();

// Up to `count` threads running `work`, joined on destruction after
// `beforeJoin` (which tells them to finish: a stop flag, a wake-up).
class WorkerThreads {
public:
    // `bestEffort`: threads the system refuses are done without (those that
    // run share the work); otherwise the refusal is thrown, once the threads
    // already started are joined.
    WorkerThreads(int count, const std::function<void()>& work, bool bestEffort,
                  std::function<void()> beforeJoin = {})
        : beforeJoin_(std::move(beforeJoin)) {
        for (int i = 0; i < count; ++i) {
            try {
                threads_.emplace_back([work, start = workerThreadStart()] {
                    if (start)
                        start();
                    work();
                });
            } catch (...) {
                if (bestEffort)
                    break;
                join();
                throw;
            }
        }
    }
    ~WorkerThreads() { join(); }
    WorkerThreads(const WorkerThreads&) = delete;
    WorkerThreads& operator=(const WorkerThreads&) = delete;

    std::size_t size() const { return threads_.size(); }

private:
    void join() {
        if (beforeJoin_)
            beforeJoin_();
        for (auto& t : threads_)
            t.join();
        threads_.clear();
    }

    std::function<void()> beforeJoin_;
    std::vector<std::thread> threads_;
};

// Runs `work` on the calling thread and on up to `threads - 1` more, and
// returns when all are done. `work` must not throw: it takes its tasks from
// a shared queue and keeps its own errors.
inline void runOnThreads(int threads, const std::function<void()>& work) {
    WorkerThreads helpers(threads - 1, work, true);
    work();
}

// Keeps the first exception of several threads, to rethrow on the thread
// that joins them: a cancel stays a cancel, an Error keeps its kind.
class FirstFailure {
public:
    // Call from a catch block.
    void keepCurrent() {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!first_)
            first_ = std::current_exception();
        failed_.store(true, std::memory_order_relaxed);
    }
    bool failed() const { return failed_.load(std::memory_order_relaxed); }
    void rethrow() const {
        if (first_)
            std::rethrow_exception(first_);
    }

private:
    std::mutex mutex_;
    std::exception_ptr first_;
    std::atomic<bool> failed_{false};
};

// task(state, i) for every i in [0, count), taken in turn by the calling
// thread and up to `threads - 1` more (fewer when the system refuses
// threads); each thread makes its own `state` with makeState() before its
// first task (a buffer it reuses). The first exception stops the taking of
// new tasks and is rethrown once every thread is joined; a cancelled
// `cancel` throws Cancelled(where) before the next task.
template <typename MakeState, typename Task>
void parallelFor(std::size_t count, int threads, MakeState makeState, Task task,
                 const CancelToken* cancel = nullptr, const std::string& where = {}) {
    std::atomic<std::size_t> next{0};
    FirstFailure failure;
    const auto work = [&] {
        try {
            auto state = makeState();
            for (std::size_t i; !failure.failed() && (i = next++) < count;) {
                if (cancel)
                    cancel->throwIfCancelled(where);
                task(state, i);
            }
        } catch (...) {
            failure.keepCurrent();
        }
    };
    const std::size_t wanted = std::min<std::size_t>(count, std::size_t(std::max(threads, 1)));
    {
        const WorkerThreads helpers(static_cast<int>(wanted) - 1, work, true);
        work();
    }
    failure.rethrow();
}

// The same without a per-thread state: task(i).
template <typename Task>
void parallelFor(std::size_t count, int threads, Task task, const CancelToken* cancel = nullptr,
                 const std::string& where = {}) {
    parallelFor(
        count, threads, [] { return 0; }, [&task](int, std::size_t i) { task(i); }, cancel, where);
}

}  // namespace tensordict
