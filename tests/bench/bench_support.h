// Helpers shared by the benchmarks in tests/bench (bench_open, bench_save, bench_compare,
// bench_preview).
#pragma once

#include <QString>
#include <QStringList>
#include <QTemporaryDir>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace bench {

// The command line: [--quick] [--rounds N] [--cases LETTERS] [SCRATCH_DIR]; rounds also
// from BENCH_ROUNDS.
struct Args {
    bool quick = false;  // --quick given (only where the benchmark takes it)
    int rounds = 0;      // parseArgs: BENCH_ROUNDS, --rounds or the default
    QString cases;       // --cases: the letters of the cases to run, "" for all
    QString scratch;     // "" if none given
    bool runs(char letter) const { return cases.isEmpty() || cases.contains(QChar(letter)); }
};

// Parses argv (argv[0] the program); `takesQuick` false leaves "--quick" to be a SCRATCH_DIR.
Args parseArgs(const QStringList& argv, int defaultRounds, bool takesQuick);

// The median of `v` (the upper one for an even count), or -1 if it is empty.
double median(std::vector<double> v);

// The absolute path of a program (a name on PATH or an absolute path), or "" if not installed.
QString findTool(const QString& name);

// findTool(), printing "skipped: NAME not installed" to stdout if it is not.
QString findToolOrSkip(const QString& name);

// One finished child process: wall time, peak RSS and whether it succeeded.
struct ProcessRun {
    double seconds = -1;  // wall time, -1 if it could not be waited for
    double peakMB = -1;   // ru_maxrss of the child
    bool ok = false;      // exited with status 0
};

// Runs argv (argv[0] an absolute path) in `cwd` ("" = ours) with stdout sent to `stdoutPath`
// (fork, exec, wait4), warning on stderr if it fails; the child's peak RSS includes what it
// inherits from us at fork().
ProcessRun runProcess(const QStringList& argv, const QString& stdoutPath = "/dev/null",
                      const QString& cwd = {});

// Median seconds of `rounds` timed calls of `f` after one untimed warm-up.
double timeMedian(int rounds, const std::function<void()>& f);

// Median time of whole-process runs of argv (after one warm-up) and their
// highest peak RSS; the failed run itself when one fails. `before` runs,
// untimed, before each run (removing a previous run's output, say).
ProcessRun processMedian(int rounds, const QStringList& argv,
                         const std::function<void()>& before = {});

// Two commands run in turn (each first in every other round), `rounds` times each after a warm-up
// of each: their medians, and the median of the per-round ratios (first's time over second's),
// which a machine slowing down or speeding up during the run moves far less than the ratio of
// medians taken one after the other.
struct ProcessPair {
    ProcessRun first, second;
    double ratio = -1;  // first / second, median over rounds; -1 when a run failed
};
ProcessPair processPairMedian(int rounds, const QStringList& first, const QStringList& second);

// A temporary directory for a benchmark's data, removed with this object.
struct Scratch {
    std::unique_ptr<QTemporaryDir> dir;  // null when it could not be made (the reason printed)
    double freeGB = 0;                   // free space of its file system when it was made
    QString path() const { return dir ? dir->path() : QString(); }
};

// A scratch directory under `base` ("": /var/tmp if writable, else the temporary
// directory) on a file system with at least `needed` bytes free. Otherwise
// prints why, naming `program`, with `hint` on what to pass instead.
Scratch makeScratch(const QString& program, QString base, std::uint64_t needed,
                    const QString& hint);

// A fast, fixed-seed pseudo-random sequence (xorshift64): the same data in
// every run, no <random> distribution differences between libraries.
struct XorShift {
    std::uint64_t x = 0x9E3779B97F4A7C15ull;
    std::uint64_t operator()() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return x;
    }
};

// `images` image-like uint8 images of side x side: a gradient per image, flat
// boxes, a little noise: deflates well, but not trivially.
std::vector<std::uint8_t> imageLikeBytes(std::size_t images, std::size_t side);

}  // namespace bench
