// Benchmark of reading tensordicts from a web server (the http transport)
// against nginx on loopback, started here, in one run (ratios are what to
// read: the machine is shared and noisy). Page cache warm.
//   1. the tree of a .tdz of 10,000 small leaves (what --info reads):
//      requests, bytes and time, against the same file local and against
//      `curl` of the whole file
//   2. sha256 of a 1 GiB stored leaf (image-like bytes) over HTTP against
//      `curl -o /dev/null` of the archive (goal >= 0.5x)
// usage: bench_remote [--rounds N] [SCRATCH_DIR]   (needs ~1.2 GB of scratch)

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFileInfo>
#include <cstdio>
#include <functional>

#include "bench_support.h"
#include "nginx_server.h"
#include "tensordict/http.h"
#include "tensordict/report.h"
#include "tensordict/save.h"
#include "tensordict/tensordict.h"
#include "testsupport.h"

using namespace tensordict;
using bench::median;

namespace {

double medianSeconds(int rounds, const std::function<void()>& f) {
    std::vector<double> t;
    f();  // untimed warm-up
    for (int i = 0; i < rounds; ++i) {
        QElapsedTimer timer;
        timer.start();
        f();
        t.push_back(timer.nsecsElapsed() / 1e9);
    }
    return median(t);
}

}  // namespace

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    const bench::Args args = bench::parseArgs(app.arguments(), 3, false);
    const bench::Scratch scratch =
        bench::makeScratch("bench_remote", args.scratch, 1300ull << 20, "a SCRATCH_DIR");
    if (!scratch.dir)
        return 1;
    const QString dir = scratch.path(), curl = bench::findToolOrSkip("curl");
    testsupport::NginxServer server(dir);
    if (!server.isRunning()) {
        std::printf("nginx: %s\n", qPrintable(server.error()));
        return 1;
    }

    // 1. the tree of 10,000 leaves
    {
        TensorDict td = TensorDict::create();
        for (int i = 0; i < 10000; ++i)
            td.mutableRoot().addBytes(
                "group_" + std::to_string(i / 100) + "/leaf_" + std::to_string(i % 100),
                DType::Float32, {16}, ownedBytes(std::vector<float>(16, float(i))));
        SaveOptions o;
        o.archive = true;
        save(td, (dir + "/many.tdz").toStdString(), o);
    }
    const QString local = dir + "/many.tdz", remote = server.url() + "/many.tdz";
    const double localSeconds = medianSeconds(
        args.rounds, [&] { testsupport::countNodes(load(local.toStdString()).root()); });
    HttpCounters before = httpCounters();
    const double remoteSeconds = medianSeconds(
        args.rounds, [&] { testsupport::countNodes(load(remote.toStdString()).root()); });
    const HttpCounters after = httpCounters();
    const double perOpen = 1.0 + args.rounds;  // the warm-up too
    const double curlSeconds = curl.isEmpty() ? -1 : medianSeconds(args.rounds, [&] {
        bench::runProcess({curl, "-s", remote});
    });
    std::printf("case 1: the tree of a .tdz of 10,000 leaves (%.1f MB)\n",
                QFileInfo(local).size() / 1e6);
    std::printf("  over HTTP: %.0f requests, %.0f KB per open, %.1f ms\n",
                (after.requests - before.requests) / perOpen,
                (after.bytes - before.bytes) / perOpen / 1e3, remoteSeconds * 1e3);
    std::printf(
        "  anchor: the same file local %.1f ms (%.2fx); curl of the whole file %.1f ms "
        "(%.2fx)\n",
        localSeconds * 1e3, localSeconds / remoteSeconds, curlSeconds * 1e3,
        curlSeconds / remoteSeconds);

    // 2. sha256 of a 1 GiB leaf
    {
        TensorDict td = TensorDict::create();
        td.mutableRoot().addBytes("x", DType::UInt8, {1024, 1024, 1024},
                                  ownedBytes(bench::imageLikeBytes(1024, 1024)));
        SaveOptions o;
        o.archive = true;
        o.numThreads = 2;
        save(td, (dir + "/big.tdz").toStdString(), o);
    }
    const QString big = server.url() + "/big.tdz";
    before = httpCounters();
    const double hashSeconds = medianSeconds(args.rounds, [&] {
        const TensorDict td = load(big.toStdString());
        leafSha256(*td.root().child("x"));
    });
    const HttpCounters hashed = httpCounters();
    const double curlBig = curl.isEmpty() ? -1 : medianSeconds(args.rounds, [&] {
        bench::runProcess({curl, "-s", big});
    });
    std::printf(
        "case 2: sha256 of a 1 GiB stored leaf over HTTP: %.2f s, %.0f requests and "
        "%.0f MB per hash\n",
        hashSeconds, (hashed.requests - before.requests) / perOpen,
        (hashed.bytes - before.bytes) / perOpen / 1e6);
    const double ratio = curlBig > 0 ? curlBig / hashSeconds : -1;
    std::printf("  anchor: curl -o /dev/null %.2f s: %.2fx its speed (goal >= 0.5x: %s)\n", curlBig,
                ratio, ratio >= 0.5 ? "ok" : "MISSED");
    return 0;
}
