#include "compare_job.h"

#include <QtConcurrent/QtConcurrentRun>
#include <atomic>
#include <mutex>
#include <utility>

#include "compare_tree.h"

namespace {
constexpr int kDrainIntervalMs = 50;  // how often results reach the tree while comparing
}

// What the worker hands over; everything but `cancel` under `mutex`.
struct CompareJob::Shared {
    std::mutex mutex;
    std::unique_ptr<CompareTree> tree;
    std::vector<tensordict::KeyComparison> keys;
    tensordict::CompareProgress progress;
    bool progressed = false;
    tensordict::CancelToken cancel;
};

CompareJob::CompareJob(std::shared_ptr<const tensordict::TensorDict> a,
                       std::shared_ptr<const tensordict::TensorDict> b,
                       const tensordict::Tolerance& tolerance, QObject* parent)
    : QObject(parent),
      a_(std::move(a)),
      b_(std::move(b)),
      tolerance_(tolerance),
      shared_(std::make_shared<Shared>()) {
    timer_.setInterval(kDrainIntervalMs);
    connect(&timer_, &QTimer::timeout, this, &CompareJob::drain);
    connect(&watcher_, &QFutureWatcherBase::finished, this, &CompareJob::done);
}

CompareJob::~CompareJob() {
    shared_->cancel.cancel();
    watcher_.waitForFinished();
}

void CompareJob::start() {
    if (running_)
        return;
    running_ = true;
    timer_.start();
    // The task holds its own references: the trees and the queue outlive this object if need be.
    watcher_.setFuture(
        QtConcurrent::run([a = a_, b = b_, tolerance = tolerance_, shared = shared_]() -> Outcome {
            Outcome outcome;
            try {
                auto tree = std::make_unique<CompareTree>(a->root(), b->root());
                const std::lock_guard<std::mutex> lock(shared->mutex);
                shared->tree = std::move(tree);
            } catch (const std::exception& e) {  // out of memory: said, not thrown into the GUI
                outcome.error = QString::fromUtf8(e.what());
                return outcome;
            }
            tensordict::CompareOptions options;
            options.tolerance = tolerance;
            options.cancel = shared->cancel;
            options.onKey = [&shared](const tensordict::KeyComparison& k) {
                const std::lock_guard<std::mutex> lock(shared->mutex);
                shared->keys.push_back(k);
            };
            options.progress = [&shared](const tensordict::CompareProgress& p) {
                const std::lock_guard<std::mutex> lock(shared->mutex);
                shared->progress = p;
                shared->progressed = true;
            };
            try {
                outcome.cancelled = tensordict::compare(*a, *b, options).cancelled;
            } catch (const std::exception& e) {
                outcome.error = QString::fromUtf8(e.what());
            }
            return outcome;
        }));
}

void CompareJob::cancel() {
    shared_->cancel.cancel();
}

std::unique_ptr<CompareTree> CompareJob::takeTree() {
    return std::move(tree_);
}

void CompareJob::drain() {
    std::vector<tensordict::KeyComparison> keys;
    bool moved = false;
    {
        const std::lock_guard<std::mutex> lock(shared_->mutex);
        if (!treeTaken_ && shared_->tree)
            tree_ = std::move(shared_->tree);
        // Results wait until the tree they belong to has been handed over.
        if (tree_ || treeTaken_) {
            keys.swap(shared_->keys);
            moved = std::exchange(shared_->progressed, false);
            progress_ = shared_->progress;
        }
    }
    if (tree_ && !treeTaken_) {
        treeTaken_ = true;
        Q_EMIT treeReady();
    }
    if (!keys.empty())
        Q_EMIT keysCompared(keys);
    if (moved)
        Q_EMIT progressed(progress_);
}

void CompareJob::done() {
    drain();  // the last results, before finished()
    timer_.stop();
    running_ = false;
    const Outcome outcome = watcher_.result();
    cancelled_ = outcome.cancelled;
    error_ = outcome.error;
    Q_EMIT finished();
}
