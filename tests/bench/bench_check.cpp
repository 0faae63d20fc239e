// Benchmark of `tdstudio --check`, whole processes, against the tools a user
// would otherwise run on the same archive in the same run (the machine is
// shared and noisy; ratios are what to read). Page cache warm: every file
// is read once before anything is timed.
//   1. A stored .tdz of 4 float32 leaves (SIZE, default 1 GiB): --check with
//      1 and 2 threads vs `unzip -tq` (goal: >= 10x) and Python's
//      zipfile.testzip().
//   2. The same leaves deflated (SIZE/4, default 256 MiB): --check vs
//      `unzip -tq` and `7z t`.
// usage: bench_check [--mib N] [--rounds N] [SCRATCH_DIR]
//   --mib N (or BENCH_CHECK_MIB): the stored archive's size in MiB; rounds
//   also from BENCH_ROUNDS (default 3). Needs ~1.5x SIZE of scratch.

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "bench_support.h"
#include "tensordict/save.h"
#include "tensordict/tensordict.h"

using namespace tensordict;
using bench::median;

namespace {

constexpr std::uint64_t kMiB = 1 << 20;
constexpr int kLeaves = 4;

// Float32 values, partly compressible: noise, 12-bit noise, small integers, a ramp.
std::vector<float> values(std::uint64_t count, std::uint64_t seed) {
    std::vector<float> v(count);
    std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (std::uint64_t i = 0; i < count; ++i) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        const float noise = float(x >> 40) * 0x1p-24f - 0.5f;
        switch ((i >> 20) % 4) {
            case 0:
                v[i] = noise;
                break;
            case 1:
                v[i] = float(int(x >> 52) - 2048) / 64.0f;
                break;
            case 2:
                v[i] = float(x >> 58);
                break;
            default:
                v[i] = float(i % 4096) / 4096.0f + 0.01f * noise;
        }
    }
    return v;
}

bool writeArchive(const QString& path, std::uint64_t bytes, int compression) {
    TensorDict td = TensorDict::create();
    const std::uint64_t count = bytes / kLeaves / 4;
    for (int l = 0; l < kLeaves; ++l)
        td.mutableRoot().addBytes("x" + std::to_string(l), DType::Float32, {std::int64_t(count)},
                                  ownedBytes(values(count, l)));
    SaveOptions options;
    options.compression = compression;
    options.numThreads = 2;
    try {
        save(td, path.toStdString(), options);
    } catch (const std::exception& e) {
        std::printf("cannot write %s: %s\n", qPrintable(path), e.what());
        return false;
    }
    return true;
}

// The median wall time of `argv` over `rounds` runs; -1 if a run failed.
double timed(const QStringList& argv, int rounds) {
    std::vector<double> seconds;
    for (int r = 0; r < rounds; ++r) {
        const bench::ProcessRun run = bench::runProcess(argv);
        if (!run.ok)
            return -1;
        seconds.push_back(run.seconds);
    }
    return median(seconds);
}

void warm(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return;
    std::vector<char> buffer(8 * kMiB);
    while (f.read(buffer.data(), qint64(buffer.size())) > 0) {
    }
}

void row(const char* what, double seconds, double anchor, std::uint64_t bytes) {
    if (seconds < 0) {
        std::printf("  %-34s failed\n", what);
        return;
    }
    std::printf("  %-34s %8.3f s  %7.0f MB/s", what, seconds, double(bytes) / seconds / 1e6);
    if (anchor > 0)
        std::printf("  %6.2fx the anchor's speed", anchor / seconds);
    std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    QStringList args = app.arguments();
    std::uint64_t mib = qEnvironmentVariableIntValue("BENCH_CHECK_MIB");
    const int at = int(args.indexOf("--mib"));
    if (at > 0 && at + 1 < args.size()) {
        mib = args[at + 1].toULongLong();
        args.remove(at, 2);
    }
    if (mib == 0)
        mib = 1024;
    const bench::Args a = bench::parseArgs(args, 3, false);
    const std::uint64_t size = mib * kMiB;
    const bench::Scratch scratch =
        bench::makeScratch("bench_check", a.scratch, size * 3 / 2, "a SCRATCH_DIR with room");
    if (!scratch.dir)
        return 1;
    const QString tdstudio = TDSTUDIO_EXECUTABLE;
    const QString unzip = bench::findToolOrSkip("unzip");
    const QString python = QFile::exists("/usr/bin/python3") ? "/usr/bin/python3" : QString();
    const QString sevenZip = bench::findToolOrSkip("7z");

    std::printf("bench_check: %d rounds, medians, warm page cache\n", a.rounds);
    const QString stored = scratch.path() + "/stored.tdz";
    if (!writeArchive(stored, size, kZipStored))
        return 1;
    warm(stored);
    std::printf("1. stored .tdz, %llu MiB, %d leaves\n", (unsigned long long)mib, kLeaves);
    const double unzipStored = unzip.isEmpty() ? -1 : timed({unzip, "-tq", stored}, a.rounds);
    row("unzip -tq (anchor)", unzipStored, -1, size);
    if (!python.isEmpty())
        row("python3 zipfile testzip()",
            timed({python, "-c",
                   "import sys, zipfile\nassert zipfile.ZipFile(sys.argv[1]).testzip() is None\n",
                   stored},
                  a.rounds),
            unzipStored, size);
    for (const char* threads : {"1", "2"})
        row(qPrintable(QString("tdstudio --check, %1 thread(s)").arg(threads)),
            timed({tdstudio, "--check", stored, "--threads", threads}, a.rounds), unzipStored,
            size);

    const QString deflated = scratch.path() + "/deflated.tdz";
    if (!writeArchive(deflated, size / 4, kZipDeflate))
        return 1;
    warm(deflated);
    std::printf("2. deflated .tdz, %llu MiB of leaves, %.1f MiB on disk\n",
                (unsigned long long)(mib / 4), double(QFileInfo(deflated).size()) / double(kMiB));
    const double unzipDeflated = unzip.isEmpty() ? -1 : timed({unzip, "-tq", deflated}, a.rounds);
    row("unzip -tq (anchor)", unzipDeflated, -1, size / 4);
    if (!sevenZip.isEmpty())
        row("7z t", timed({sevenZip, "t", deflated}, a.rounds), unzipDeflated, size / 4);
    for (const char* threads : {"1", "2"})
        row(qPrintable(QString("tdstudio --check, %1 thread(s)").arg(threads)),
            timed({tdstudio, "--check", deflated, "--threads", threads}, a.rounds), unzipDeflated,
            size / 4);
    return 0;
}
