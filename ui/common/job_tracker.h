#pragma once

#include <QCoreApplication>
#include <QEvent>
#include <QFuture>
#include <QFutureWatcher>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

#include "tensordict/cancel.h"

#if defined(__SANITIZE_THREAD__)  // GCC's -fsanitize=thread
#define TDSTUDIO_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)  // Clang's
#define TDSTUDIO_TSAN 1
#endif
#endif
#ifdef TDSTUDIO_TSAN
extern "C" void __tsan_acquire(void* address);
extern "C" void __tsan_release(void* address);
#endif

// ThreadSanitizer sees no order in Qt's own locks (the thread pool's queue,
// QFuture, the event queue): it took every object one job made and a later
// job read, through the owner's thread, for a race (a LeafPages, a loaded
// tree). Each hand-over is told to it here, at one point for all trackers,
// as its manual asks for synchronisation it cannot see: what a thread did
// before handing over is ordered before what the receiver does after. Jobs
// that run at the same time are still checked against each other and
// against the owner's thread. No-ops in other builds.
namespace jobhandover {
#ifdef TDSTUDIO_TSAN
inline char point;
inline void send() {
    __tsan_release(&point);
}
inline void receive() {
    __tsan_acquire(&point);
}
#else
inline void send() {}
inline void receive() {}
#endif
}  // namespace jobhandover

// A call a job posts to its owner's thread: an event built on the job's
// thread before the hand-over is told (a functor queued with invokeMethod
// would be built inside Qt, after it), run by the tracker's mailbox.
class PostedCall final : public QEvent {
public:
    explicit PostedCall(std::function<void()> call) : QEvent(type()), call_(std::move(call)) {}
    static QEvent::Type type() {
        static const int registered = QEvent::registerEventType();
        return static_cast<QEvent::Type>(registered);
    }
    void run() { call_(); }

private:
    std::function<void()> call_;
};

// Where a tracker's posted calls arrive, on the owner's thread; deleting it
// drops the calls not yet run.
class JobMailbox final : public QObject {
public:
    bool event(QEvent* e) override {
        if (e->type() != PostedCall::type())
            return QObject::event(e);
        jobhandover::receive();
        static_cast<PostedCall*>(e)->run();
        return true;
    }
};

// How a tracker treats a job started while another runs.
enum class JobDelivery {
    NewestOnly,  // a view's work: the new job cancels the old one, whose result is dropped
    Every,       // operations (an export, a save, a check): each runs to its end, each
                 // result is delivered; cancel() asks them all to stop early
};

// The one way the window runs background work for an object that lives on
// the GUI thread, as hotspot's JobTracker: results are delivered on the
// owner's thread; with JobDelivery::NewestOnly starting a job cancels the
// one before it, and only the newest job's result is delivered. Jobs never
// touch the owner; they get what they need by value (a shared tree, a
// leaf's bytes) and a cancel token to poll: the tracker's, or the job's own
// when it is given one (an operation whose caller may cancel it too: a
// save's SaveOptions::cancel), which cancel() and stop() then cancel
// directly. Destroying the tracker cancels
// and waits for its jobs, so none that reports back outlives the owner (a
// job started unawaited reports nothing back, and is left to end alone).
//
// A job may also report how far it is: work that takes a second argument,
// a JobProgress, calls it with a fraction in [0, 1], and `progress` gets it
// on the owner's thread (each thousandth once). stop() asks the job to end
// early but still delivers what it returns (a result marked "cancelled"),
// where cancel() drops it. A job may also stream parts of its result
// (stream()), which arrive on the owner's thread in order.
using JobProgress = std::function<void(double fraction)>;
template <typename Part>
using JobSend = std::function<void(Part part)>;

template <typename Result>
class JobTracker {
public:
    explicit JobTracker(QObject* owner, JobDelivery delivery = JobDelivery::NewestOnly)
        : owner_(owner), delivery_(delivery) {}
    ~JobTracker() {
        cancel();
        ++generation_;  // nothing is delivered to an owner being destroyed
        for (Running& r : running_) {
            if (r.awaited)
                r.future.waitForFinished();
            else
                delete r.watcher.data();  // its finish, should it come, reaches nobody
        }
    }
    JobTracker(const JobTracker&) = delete;
    JobTracker& operator=(const JobTracker&) = delete;

    // Runs `work(const tensordict::CancelToken&) -> Result` (or
    // `work(token, const JobProgress&)`) on the thread pool, then
    // `deliver(Result)` on the owner's thread unless another job was started
    // or cancel() called since. `work` must not throw. `token`: the job's
    // own, given to `work` (one per job: cancelling it cancels this job).
    template <typename Work, typename Deliver>
    void start(Work work, Deliver deliver, std::function<void(double)> progress = {},
               tensordict::CancelToken token = {}) {
        const quint64 job = begin(std::move(token));
        JobProgress report = [this, job, last = std::make_shared<std::atomic<int>>(-1),
                              progress = std::move(progress)](double fraction) {
            const int permille = static_cast<int>(std::clamp(fraction, 0.0, 1.0) * 1000);
            if (progress && last->exchange(permille) != permille)
                post(job, [progress, permille] { progress(permille / 1000.0); });
        };
        run(
            job,
            [work = std::move(work),
             report = std::move(report)](const tensordict::CancelToken& token) -> Result {
                if constexpr (std::is_invocable_v<Work&, const tensordict::CancelToken&,
                                                  const JobProgress&>)
                    return work(token, report);
                else
                    return work(token);
            },
            std::move(deliver));
    }

    // A job that holds only the values it was given and sends nothing back
    // but its result (a look at a path on disk): destroying the tracker
    // drops its result without waiting for it, so a file system that hangs
    // cannot hang the window that closes. `work(token) -> Result`.
    template <typename Work, typename Deliver>
    void startUnawaited(Work work, Deliver deliver) {
        const quint64 job = begin({});
        run(job, std::move(work), std::move(deliver), /*awaited=*/false);
    }

    // A job that hands over parts of its result as it goes (matches found,
    // rows read): `work(token, const JobSend<Part>&) -> Result` calls the
    // sender from its thread, and `receive(Part)` gets each part on the
    // owner's thread, in order, before `deliver(Result)`; the parts of a job
    // that is no longer the newest are dropped, even those already posted.
    // `token` as for start().
    template <typename Part, typename Work, typename Receive, typename Deliver>
    void stream(Work work, Receive receive, Deliver deliver, tensordict::CancelToken token = {}) {
        const quint64 job = begin(std::move(token));
        JobSend<Part> send = [this, job, receive = std::move(receive)](Part part) {
            // Held by a shared pointer: a part may be move-only (a tree being handed over).
            post(job, [receive, held = std::make_shared<Part>(std::move(part))] {
                receive(std::move(*held));
            });
        };
        run(
            job,
            [work = std::move(work), send = std::move(send)](
                const tensordict::CancelToken& token) -> Result { return work(token, send); },
            std::move(deliver));
    }

    // NewestOnly: the running job, if any, stops soon; its result is
    // dropped. Every: each running job is asked to stop soon; what each
    // returns is still delivered.
    void cancel() {
        for (Running& r : running_)
            r.token.cancel();
        if (delivery_ == JobDelivery::NewestOnly) {
            ++generation_;
            busy_ = false;
        }
    }

    // The running jobs, if any, are asked to stop soon; what they return is
    // still delivered.
    void stop() {
        for (Running& r : running_)
            r.token.cancel();
    }

    // A job was started and its result is neither delivered nor dropped yet.
    bool isBusy() const {
        return delivery_ == JobDelivery::NewestOnly ? busy_ : !running_.isEmpty();
    }
    // Blocks until every job started so far has returned (tests, shutdown).
    void waitForFinished() {
        for (Running& r : running_)
            r.future.waitForFinished();
    }

private:
    struct Running {
        QFuture<Result> future;
        tensordict::CancelToken token;
        bool awaited = true;  // by the tracker's destruction
        QPointer<QFutureWatcher<Result>> watcher;
    };

    quint64 begin(tensordict::CancelToken token) {
        if (delivery_ == JobDelivery::NewestOnly)
            cancel();
        token_ = std::move(token);
        busy_ = true;
        return generation_;
    }

    template <typename Task, typename Deliver>
    void run(quint64 job, Task task, Deliver deliver, bool awaited = true) {
        auto* watcher = new QFutureWatcher<Result>(owner_);
        QObject::connect(watcher, &QFutureWatcherBase::finished, owner_,
                         [this, watcher, job, deliver = std::move(deliver)] {
                             jobhandover::receive();
                             watcher->deleteLater();
                             prune();
                             if (job != generation_)
                                 return;
                             if (running_.isEmpty())
                                 busy_ = false;
                             if (delivery_ == JobDelivery::NewestOnly)
                                 busy_ = false;
                             deliver(watcher->result());
                         });
        // The token reaches the reads too: a web server's transfer stops with it.
        jobhandover::send();
        const QFuture<Result> future =
            QtConcurrent::run([task = std::move(task), token = token_]() -> Result {
                jobhandover::receive();
                const tensordict::CancelScope scope(&token);
                Result result = task(token);
                jobhandover::send();
                return result;
            });
        watcher->setFuture(future);
        running_.append({future, token_, awaited, watcher});
    }

    // Calls `f` on the owner's thread, as an event posted now (so in order
    // with the job's other posts and before its finish, which arrives
    // through the same event queue), unless `job` is no longer the newest
    // by then. (The owner outlives every job that posts: the tracker waits
    // for them; an unawaited job posts nothing.)
    template <typename F>
    void post(quint64 job, F f) {
        auto* call = new PostedCall([this, job, f = std::move(f)]() mutable {
            if (job == generation_ && busy_)
                f();
        });
        jobhandover::send();
        QCoreApplication::postEvent(&mailbox_, call);
    }

    void prune() {
        running_.removeIf([](const Running& r) { return r.future.isFinished(); });
    }

    QObject* owner_;
    JobMailbox mailbox_;  // made on the owner's thread, with the tracker
    JobDelivery delivery_;
    quint64 generation_ = 0;
    bool busy_ = false;
    tensordict::CancelToken token_;
    QList<Running> running_;
};
