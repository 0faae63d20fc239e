#include "compare_job.h"

#include <chrono>
#include <mutex>
#include <utility>

#include "compare_tree.h"

namespace {
// How often results reach the tree while comparing: each batch refilters
// the view, so one per key would stall the window on a large dataset.
constexpr std::chrono::milliseconds kBatchInterval{50};
}  // namespace

CompareJob::CompareJob(std::shared_ptr<const tensordict::TensorDict> a,
                       std::shared_ptr<const tensordict::TensorDict> b,
                       const tensordict::Tolerance& tolerance, QObject* parent)
    : QObject(parent), a_(std::move(a)), b_(std::move(b)), tolerance_(tolerance) {}

CompareJob::~CompareJob() {
    cancel();  // the tracker, destroyed first, then waits for the worker
}

void CompareJob::start() {
    if (isRunning())
        return;
    outcome_ = JobOutcome::done();
    partsInFlight_->store(0);
    tracker_.stream<Part>(
        [a = a_, b = b_, tolerance = tolerance_, inFlight = partsInFlight_](
            const tensordict::CancelToken& cancel, const JobSend<Part>& send) -> JobOutcome {
            // Keys and progress come from every comparing thread, one call
            // at a time each; the batch is shared between them. A batch
            // goes out at most every kBatchInterval, and only once the
            // window has taken the one before: a window slower than the
            // comparison gets fewer, larger batches, never a backlog.
            std::mutex mutex;
            Part batch;
            auto sentAt = std::chrono::steady_clock::now();
            auto flush = [&](bool force) {
                const auto now = std::chrono::steady_clock::now();
                if (!force && (now - sentAt < kBatchInterval || inFlight->load() > 0))
                    return;
                if (batch.keys.empty() && !batch.progressed)
                    return;
                inFlight->fetch_add(1);
                send(std::exchange(batch, Part{}));
                sentAt = now;
            };
            try {
                send({std::make_unique<CompareTree>(a->root(), b->root()), {}, false, {}});
                tensordict::CompareOptions options;
                options.tolerance = tolerance;
                options.cancel = cancel;
                options.onKey = [&](const tensordict::KeyComparison& k) {
                    const std::lock_guard<std::mutex> lock(mutex);
                    batch.keys.push_back(k);
                    flush(false);
                };
                options.progress = [&](const tensordict::CompareProgress& p) {
                    const std::lock_guard<std::mutex> lock(mutex);
                    batch.progress = p;
                    batch.progressed = true;
                    flush(false);
                };
                const bool cancelled = tensordict::compare(*a, *b, options).cancelled;
                flush(true);  // the last results, before the outcome
                return cancelled ? JobOutcome::cancelled() : JobOutcome::done();
            } catch (...) {  // out of memory, a key in neither: said, not thrown into the GUI
                // What was compared before the failure still shows (the
                // comparing threads are joined by now).
                JobOutcome failed = JobOutcome::ofCurrentException();
                try {
                    flush(true);
                } catch (...) {
                }
                return failed;
            }
        },
        [this](Part part) { receive(std::move(part)); },
        [this](JobOutcome outcome) { finish(std::move(outcome)); }, cancel_);
}

void CompareJob::cancel() {
    cancel_.cancel();
}

std::unique_ptr<CompareTree> CompareJob::takeTree() {
    return std::move(tree_);
}

void CompareJob::receive(Part part) {
    if (!part.tree)
        partsInFlight_->fetch_sub(1);  // the worker may send the next batch
    if (part.tree) {
        tree_ = std::move(part.tree);
        Q_EMIT treeReady();
    }
    if (!part.keys.empty())
        Q_EMIT keysCompared(part.keys);
    if (part.progressed) {
        progress_ = part.progress;
        Q_EMIT progressed(progress_);
    }
}

void CompareJob::finish(JobOutcome outcome) {
    outcome_ = std::move(outcome);
    Q_EMIT finished();
}
