// Benchmark of the window's start, printed with its anchor from the same
// run (shared machines are noisy; ratios are not): `tdstudio DEMO
// --screenshot FILE` (start, open the bundled demo, draw its overview, save
// a PNG, quit) against bare_window, a Qt Widgets program that shows a tree
// of a few rows and saves it as a PNG. Both offscreen, whole process.
// Goal: <= 1.5x the anchor's time.
// usage: bench_start [--rounds N]

#include <QCoreApplication>
#include <QFile>
#include <QTemporaryDir>
#include <cstdio>

#include "bench_support.h"

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    const bench::Args args = bench::parseArgs(app.arguments(), 9, false);
    qputenv("QT_QPA_PLATFORM", "offscreen");  // the children's, as under xvfb-run
    QTemporaryDir scratch;
    qputenv("XDG_RUNTIME_DIR", QFile::encodeName(scratch.path()));
    const QString shot = scratch.path() + "/shot.png";
    std::printf("bench_start: %d rounds, offscreen\n", args.rounds);
    // In turn, round by round: the two take some 0.1 s each, and this
    // machine's speed drifts by more than the goal's margin within a run.
    const bench::ProcessPair pair = bench::processPairMedian(
        args.rounds, {TDSTUDIO_EXECUTABLE, TDSTUDIO_DEMO, "--screenshot", shot},
        {BENCH_BARE_WINDOW, shot});
    const bench::ProcessRun &ours = pair.first, &anchor = pair.second;
    std::printf("  tdstudio demo --screenshot (overview drawn)  %.1f ms, peak RSS %.0f MB\n",
                ours.seconds * 1e3, ours.peakMB);
    std::printf("  bare Qt window + tree + PNG                  %.1f ms, peak RSS %.0f MB\n",
                anchor.seconds * 1e3, anchor.peakMB);
    std::printf("  ratio %.2fx the anchor's time, the median of each round's (goal <= 1.5x: %s)\n",
                pair.ratio, pair.ratio > 0 && pair.ratio <= 1.5 ? "ok" : "MISSED");
    return ours.ok && anchor.ok ? 0 : 1;
}
