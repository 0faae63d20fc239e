// JobTracker: the newest job wins, a cancelled job's result is dropped,
// results arrive on the owner's thread, and the tracker waits for its jobs.
// Every ordering is made by semaphores the jobs wait on, never by time.

#include <QSemaphore>
#include <QThread>
#include <QThreadPool>
#include <QtTest>
#include <atomic>
#include <memory>
#include <vector>

#include "job_tracker.h"

class JobTrackerTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void newestJobWins() {
        QObject owner;
        JobTracker<int> tracker(&owner);
        QSemaphore firstMayEnd;
        std::atomic<bool> firstSawCancel{false};
        QList<int> delivered;
        QList<QThread*> threads;
        tracker.start(
            [&](const tensordict::CancelToken& cancel) {
                firstMayEnd.acquire();
                firstSawCancel = cancel.isCancelled();
                return 1;
            },
            [&](int v) { delivered << v, threads << QThread::currentThread(); });
        QVERIFY(tracker.isBusy());
        tracker.start([](const tensordict::CancelToken&) { return 2; },
                      [&](int v) { delivered << v, threads << QThread::currentThread(); });
        firstMayEnd.release();
        QTRY_COMPARE(delivered, QList<int>{2});
        tracker.waitForFinished();
        QCoreApplication::processEvents();  // the first job's finish, if it were delivered
        QCOMPARE(delivered, QList<int>{2});
        QVERIFY(firstSawCancel);  // starting the second cancelled the first
        QCOMPARE(threads.front(), QThread::currentThread());
        QVERIFY(!tracker.isBusy());
    }

    // What one job made, another job started from its delivery reads (the
    // "tsan" preset checks that ThreadSanitizer sees both hand-offs).
    void aJobsResultReachesTheNextJob() {
        QObject owner;
        JobTracker<std::shared_ptr<std::vector<int>>> make(&owner);
        JobTracker<int> read(&owner);
        int sum = -1;
        make.start(
            [](const tensordict::CancelToken&) {
                auto v = std::make_shared<std::vector<int>>(1000);
                for (int i = 0; i < 1000; ++i)
                    (*v)[std::size_t(i)] = i;
                return v;
            },
            [&](std::shared_ptr<std::vector<int>> v) {
                read.start(
                    [v](const tensordict::CancelToken&) {
                        int s = 0;
                        for (int x : *v)
                            s += x;
                        return s;
                    },
                    [&](int s) { sum = s; });
            });
        QTRY_COMPARE(sum, 999 * 1000 / 2);
    }

    void cancelDropsTheResult() {
        QObject owner;
        JobTracker<int> tracker(&owner);
        QSemaphore mayEnd;
        bool delivered = false;
        tracker.start(
            [&](const tensordict::CancelToken&) {
                mayEnd.acquire();
                return 1;
            },
            [&](int) { delivered = true; });
        tracker.cancel();
        QVERIFY(!tracker.isBusy());
        mayEnd.release();
        tracker.waitForFinished();
        QCoreApplication::processEvents();
        QVERIFY(!delivered);
    }

    void destroyingTheTrackerWaitsForItsJobs() {
        // The job ends only once it sees the tracker's cancel, so it is
        // still running when the tracker goes: its end is seen only if the
        // tracker waited for it.
        std::atomic<bool> ended{false};
        QSemaphore started;
        {
            QObject owner;
            JobTracker<int> tracker(&owner);
            tracker.start(
                [&](const tensordict::CancelToken& cancel) {
                    started.release();
                    while (!cancel.isCancelled())
                        QThread::yieldCurrentThread();
                    ended = true;
                    return 0;
                },
                [](int) { QFAIL("delivered after the owner went"); });
            started.acquire();
        }
        QVERIFY(ended);
    }
    // A job that holds only values (a look at a path that may hang) is not
    // waited for: the tracker goes while the job is still blocked, and its
    // result, when it comes, is dropped.
    void destroyingTheTrackerLeavesAnUnawaitedJob() {
        auto mayEnd = std::make_shared<QSemaphore>();
        auto ended = std::make_shared<QSemaphore>();
        // Were the tracker to wait, this would free the job after a minute
        // (a bound on a hung run, never a timing) and the test would fail.
        QSemaphore trackerGone;
        std::unique_ptr<QThread> unblocker(QThread::create([&] {
            if (!trackerGone.tryAcquire(1, 60000))
                mayEnd->release();
        }));
        unblocker->start();
        {
            QObject owner;
            JobTracker<int> tracker(&owner);
            tracker.startUnawaited(
                [mayEnd, ended](const tensordict::CancelToken&) {
                    mayEnd->acquire();  // a stat on a hung mount
                    ended->release();
                    return 1;
                },
                [](int) { QFAIL("delivered after the owner went"); });
            QVERIFY(tracker.isBusy());
        }
        trackerGone.release();
        unblocker->wait();
        QCOMPARE(ended->available(), 0);  // the job was still blocked when the tracker went
        mayEnd->release();
        QVERIFY(ended->tryAcquire(1, 60000));  // bounds a hung run only
        QThreadPool::globalInstance()->waitForDone();
        QCoreApplication::processEvents();
    }

    // A part that can only be moved (a tree being handed over) streams too.
    void moveOnlyPartsStream() {
        QObject owner;
        JobTracker<int> tracker(&owner);
        QList<int> seen;
        tracker.stream<std::unique_ptr<int>>(
            [](const tensordict::CancelToken&, const JobSend<std::unique_ptr<int>>& send) {
                send(std::make_unique<int>(7));
                return 1;
            },
            [&](std::unique_ptr<int> part) { seen << *part; }, [&](int) { seen << -1; });
        QTRY_COMPARE(seen, (QList<int>{7, -1}));
    }

    // stop() ends the job early but delivers what it returns.
    void stopDeliversTheEarlyResult() {
        QObject owner;
        JobTracker<int> tracker(&owner);
        QSemaphore started, mayEnd;
        QList<int> delivered;
        tracker.start(
            [&](const tensordict::CancelToken& cancel) {
                started.release();
                mayEnd.acquire();
                return cancel.isCancelled() ? -1 : 1;  // -1: "stopped early"
            },
            [&](int v) { delivered << v; });
        started.acquire();
        tracker.stop();
        QVERIFY(tracker.isBusy());  // its result is still to come
        mayEnd.release();
        QTRY_COMPARE(delivered, QList<int>{-1});
        QVERIFY(!tracker.isBusy());
    }

    // A job given its own token (an operation its caller may cancel too)
    // gets that token: the caller's cancel reaches the job, and the
    // tracker's stop() and destruction cancel the caller's token directly.
    void aJobRunsOnItsOwnToken() {
        QObject owner;
        QSemaphore started, mayEnd;
        QList<int> delivered;
        const tensordict::CancelToken callers, third;
        {
            JobTracker<int> tracker(&owner, JobDelivery::Every);
            tracker.start(
                [&](const tensordict::CancelToken& cancel) {
                    started.release();
                    mayEnd.acquire();
                    return cancel.isCancelled() ? -1 : 1;
                },
                [&](int v) { delivered << v; }, {}, callers);
            started.acquire();
            callers.cancel();  // the caller's Cancel
            mayEnd.release();
            QTRY_COMPARE(delivered, QList<int>{-1});

            const tensordict::CancelToken second;
            tracker.stream<int>(
                [&](const tensordict::CancelToken& cancel, const JobSend<int>&) {
                    started.release();
                    mayEnd.acquire();
                    return cancel.isCancelled() ? -1 : 1;
                },
                [](int) {}, [&](int v) { delivered << v; }, second);
            started.acquire();
            tracker.stop();
            QVERIFY(second.isCancelled());  // before the job looked: the same flag
            mayEnd.release();
            QTRY_COMPARE(delivered, (QList<int>{-1, -1}));

            // Destroying the tracker cancels the job's own token, then waits:
            // the job ends once it sees that (a minute at most, should it not).
            tracker.start(
                [&](const tensordict::CancelToken& cancel) {
                    started.release();
                    cancel.waitUntilCancelled(std::chrono::minutes(1));
                    return 1;
                },
                [&](int v) { delivered << v; }, {}, third);
            started.acquire();
            QVERIFY(!third.isCancelled());
        }
        QVERIFY(third.isCancelled());
        QCOMPARE(delivered, (QList<int>{-1, -1}));  // nothing delivered to a tracker destroyed
    }

    // Progress arrives on the owner's thread, in order, each step once, and
    // not after the job was replaced.
    void progressReachesTheOwnersThread() {
        QObject owner;
        JobTracker<int> tracker(&owner);
        QSemaphore reported, mayGoOn;
        QList<double> seen;
        QList<QThread*> threads;
        tracker.start(
            [&](const tensordict::CancelToken&, const JobProgress& progress) {
                for (double f : {0.25, 0.25, 0.5}) {  // the repeated value is posted once
                    progress(f);
                    reported.release();
                }
                mayGoOn.acquire();
                progress(0.75);  // after the job was replaced: never shown
                return 1;
            },
            [](int) {}, [&](double f) { seen << f, threads << QThread::currentThread(); });
        reported.acquire(3);
        QTRY_COMPARE(seen, (QList<double>{0.25, 0.5}));
        QCOMPARE(threads.front(), QThread::currentThread());
        tracker.start([](const tensordict::CancelToken&) { return 2; }, [](int) {});
        mayGoOn.release();
        tracker.waitForFinished();
        QCoreApplication::processEvents();
        QCOMPARE(seen, (QList<double>{0.25, 0.5}));
    }

    // Streamed parts arrive on the owner's thread, in order and before the
    // result; a replaced job's parts are dropped, even those already posted.
    void streamedPartsArriveInOrderBeforeTheResult() {
        QObject owner;
        JobTracker<int> tracker(&owner);
        QStringList seen;
        QList<QThread*> threads;
        tracker.stream<int>(
            [](const tensordict::CancelToken&, const JobSend<int>& send) {
                for (int i = 1; i <= 3; ++i)
                    send(i);
                return 3;
            },
            [&](int part) { seen << QString::number(part), threads << QThread::currentThread(); },
            [&](int parts) { seen << QStringLiteral("done %1").arg(parts); });
        QTRY_COMPARE(seen, (QStringList{"1", "2", "3", "done 3"}));
        QCOMPARE(threads.front(), QThread::currentThread());

        QSemaphore sent;
        seen.clear();
        tracker.stream<int>(
            [&](const tensordict::CancelToken&, const JobSend<int>& send) {
                send(10);  // posted, but not yet received when the job is replaced
                sent.release();
                return 1;
            },
            [&](int part) { seen << QString::number(part); },
            [&](int) { seen << QStringLiteral("old done"); });
        sent.acquire();
        tracker.waitForFinished();
        tracker.stream<int>(
            [](const tensordict::CancelToken&, const JobSend<int>& send) {
                send(20);
                return 1;
            },
            [&](int part) { seen << QString::number(part); },
            [&](int) { seen << QStringLiteral("new done"); });
        QTRY_COMPARE(seen, (QStringList{"20", "new done"}));
    }
};

QTEST_GUILESS_MAIN(JobTrackerTest)
#include "tst_job_tracker.moc"
