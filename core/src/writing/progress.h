#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

#include "tensordict/error.h"
#include "tensordict/save.h"

namespace tensordict {

// The one place a save reports progress and checks for cancel. Writer
// threads call add() as bytes go out; the user's callback sees throttled,
// monotonic totals.
class ProgressTracker {
public:
    ProgressTracker(const SaveOptions& options, std::uint64_t totalBytes, int totalFiles)
        : options_(options) {
        state_.bytesTotal = totalBytes;
        state_.filesTotal = totalFiles;
    }

    // The output exists, nothing is written yet: a report of 0 bytes and
    // the totals (not throttling the first report with bytes), then the
    // first cancel check.
    void started(const std::string& path) {
        if (options_.progress) {
            std::lock_guard<std::mutex> lock(mutex_);
            state_.currentPath = path;
            options_.progress(state_);
        }
        throwIfCancelled(path);
    }

    void add(std::uint64_t bytes, const std::string& path) {
        const std::uint64_t done = bytes_.fetch_add(bytes) + bytes;
        if (!options_.progress)
            return;
        std::lock_guard<std::mutex> lock(mutex_);
        state_.bytesDone = std::max(state_.bytesDone, done);
        state_.currentPath = path;
        const auto now = std::chrono::steady_clock::now();
        if (now - lastReport_ >= std::chrono::milliseconds(20))
            report(now);
    }

    void fileDone(const std::string& path) {
        const int files = files_.fetch_add(1) + 1;
        if (!options_.progress)
            return;
        std::lock_guard<std::mutex> lock(mutex_);
        state_.filesDone = std::max(state_.filesDone, files);
        state_.bytesDone = std::max(state_.bytesDone, bytes_.load());
        state_.currentPath = path;
        const auto now = std::chrono::steady_clock::now();
        if (files == state_.filesTotal || now - lastReport_ >= std::chrono::milliseconds(20))
            report(now);
    }

    bool cancelled() const { return options_.cancel.isCancelled(); }
    const CancelToken& cancelToken() const { return options_.cancel; }
    void throwIfCancelled(const std::string& where) const {
        options_.cancel.throwIfCancelled(where);
    }

private:
    void report(std::chrono::steady_clock::time_point now) {
        lastReport_ = now;
        options_.progress(state_);
    }

    const SaveOptions& options_;
    std::atomic<std::uint64_t> bytes_{0};
    std::atomic<int> files_{0};
    std::mutex mutex_;
    SaveProgress state_;
    std::chrono::steady_clock::time_point lastReport_{};
};

}  // namespace tensordict
