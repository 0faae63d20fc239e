#pragma once

// The one way the core runs work on several threads (save's writers,
// compare's chunks): plain std::threads, started and joined in one place.

#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

namespace tensordict {

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
                threads_.emplace_back(work);
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

}  // namespace tensordict
