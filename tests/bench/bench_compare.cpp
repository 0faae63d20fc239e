// Benchmarks of compare(), printed as medians and as speed ratios against
// anchors measured in the same run (shared machines are noisy; ratios are
// not). Page cache only: every file is read once before anything is timed.
//   1. Two directories of 4 float32 leaves (SIZE in total, default 1 GiB), B a
//      copy of A with ONE element changed near the end of its last leaf:
//      compare() with 1 and 2 threads vs a plain memcmp of the same files,
//      mapped by hand, one thread (the anchor; goal: compare() with 2
//      threads >= 0.7x memcmp). Each run maps the files afresh (load() for
//      compare(), mmap for memcmp); unmapping is left out of the clock.
//      Diagnostics: memcmp and compare() over files mapped (and faulted in)
//      before the clock starts, which leaves the scanning alone.
//   2. The directory against its deflated .tdz (level 6): compare() streams
//      the compressed entries, 1 and 2 threads, vs `gzip -dc` and `pigz -dc`
//      of the same leaves gzipped at level 6 (one .gz) into /dev/null.
// Speed is the size of ONE side per second (both sides are read).
// usage: bench_compare [--mib N] [--rounds N] [SCRATCH_DIR]
//   --mib N (or BENCH_COMPARE_MIB): total size of the leaves in MiB, default
//   1024 (256 for a quick run); rounds also from BENCH_ROUNDS (default 5).
//   Needs ~3.5x SIZE of scratch, default a temporary directory in /var/tmp.

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <thread>
#include <utility>
#include <vector>

#include "bench_support.h"
#include "tensordict/compare.h"
#include "tensordict/node.h"
#include "tensordict/save.h"
#include "tensordict/tensordict.h"

using namespace tensordict;
using bench::median;

namespace {

constexpr std::uint64_t kMiB = 1 << 20;
constexpr int kLeaves = 4;

// Float32 values, somewhat compressible, fast: blocks of 1 Mi values rotating
// through full-precision noise, 12-bit noise, small integers and a noisy ramp
// (as bench_save).
void fillValues(float* v, std::size_t count, std::size_t offset, std::uint64_t& x) {
    for (std::size_t j = 0; j < count; ++j) {
        const std::size_t i = offset + j;
        x ^= x << 13;  // xorshift64
        x ^= x >> 7;
        x ^= x << 17;
        const float noise = float(x >> 40) * 0x1p-24f - 0.5f;
        switch ((i >> 20) % 4) {
            case 0:
                v[j] = noise;
                break;
            case 1:
                v[j] = float(int(x >> 52) - 2048) / 64.0f;
                break;
            case 2:
                v[j] = float(x >> 58);
                break;
            default:
                v[j] = float(i % 4096) / 4096.0f + 0.01f * noise;
        }
    }
}

// A memmap directory of kLeaves float32 leaves "x0".., written directly.
bool writeSource(const QString& dir, std::uint64_t leafBytes) {
    QDir().mkpath(dir);
    const std::uint64_t count = leafBytes / 4;
    QByteArray meta = "{";
    std::vector<float> buffer(4 * kMiB / 4);
    for (int l = 0; l < kLeaves; ++l) {
        meta += QString(R"("x%1": {"device": "cpu", "shape": [%2], "dtype": "torch.float32", )"
                        R"("is_nested": false}, )")
                    .arg(l)
                    .arg(count)
                    .toUtf8();
        QFile f(dir + QString("/x%1.memmap").arg(l));
        if (!f.open(QIODevice::WriteOnly))
            return false;
        std::uint64_t x = 0x9E3779B97F4A7C15ull * (l + 1) + 1;
        for (std::uint64_t i = 0; i < count; i += buffer.size()) {
            const std::size_t n = std::size_t(std::min<std::uint64_t>(buffer.size(), count - i));
            fillValues(buffer.data(), n, i, x);
            if (f.write(reinterpret_cast<const char*>(buffer.data()), qint64(n * 4)) !=
                qint64(n * 4))
                return false;
        }
    }
    meta += R"("shape": [], "device": "cpu", "_type": "<class 'tensordict._td.TensorDict'>"})";
    QFile m(dir + "/meta.json");
    return m.open(QIODevice::WriteOnly) && m.write(meta) == meta.size();
}

// Reads every file under `paths` once, so that the timed runs find them in the page cache.
void warm(const QStringList& paths) {
    std::vector<char> buffer(16 * kMiB);
    for (const QString& p : paths) {
        QFile f(p);
        if (!f.open(QIODevice::ReadOnly))
            continue;
        while (f.read(buffer.data(), qint64(buffer.size())) > 0) {
        }
    }
}

struct Mapped {
    void* data = MAP_FAILED;
    std::size_t size = 0;
};

Mapped mapFile(const QString& path) {
    Mapped m;
    const int fd = ::open(QFile::encodeName(path).constData(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return m;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && st.st_size > 0) {
        m.size = std::size_t(st.st_size);
        m.data = ::mmap(nullptr, m.size, PROT_READ, MAP_PRIVATE, fd, 0);
    }
    ::close(fd);
    return m;
}

struct Range {
    const char* a;
    const char* b;
    std::size_t n;
};

// The file pairs, mapped; their ranges: one per file (1 thread) or 1 MiB chunks.
struct MappedPairs {
    std::vector<std::pair<Mapped, Mapped>> maps;
    std::vector<Range> ranges;
    bool ok = true;

    MappedPairs(const QStringList& a, const QStringList& b, int threads) {
        for (int i = 0; i < a.size(); ++i)
            maps.emplace_back(mapFile(a[i]), mapFile(b[i]));
        for (const auto& [ma, mb] : maps) {
            if (ma.data == MAP_FAILED || mb.data == MAP_FAILED || ma.size != mb.size) {
                ok = false;
                continue;
            }
            const std::size_t step = threads == 1 ? ma.size : kMiB;
            for (std::size_t at = 0; at < ma.size; at += step)
                ranges.push_back({static_cast<const char*>(ma.data) + at,
                                  static_cast<const char*>(mb.data) + at,
                                  std::min(step, ma.size - at)});
        }
    }
    ~MappedPairs() {
        for (const auto& [ma, mb] : maps) {
            if (ma.data != MAP_FAILED)
                ::munmap(ma.data, ma.size);
            if (mb.data != MAP_FAILED)
                ::munmap(mb.data, mb.size);
        }
    }
    MappedPairs(const MappedPairs&) = delete;
    MappedPairs& operator=(const MappedPairs&) = delete;

    // memcmp of every range on `threads` threads; the number of ranges that differ.
    int compare(int threads) const {
        std::atomic<std::size_t> next{0};
        std::atomic<int> found{0};
        auto work = [&] {
            for (std::size_t i; (i = next.fetch_add(1)) < ranges.size();)
                if (std::memcmp(ranges[i].a, ranges[i].b, ranges[i].n) != 0)
                    ++found;
        };
        std::vector<std::thread> helpers;
        for (int t = 1; t < threads; ++t)
            helpers.emplace_back(work);
        work();
        for (auto& t : helpers)
            t.join();
        return found.load();
    }
};

// Seconds to map the file pairs and memcmp them on `threads` threads (the
// unmapping is not timed), or -1 on failure or if not exactly one range differs.
double memcmpRun(const QStringList& a, const QStringList& b, int threads) {
    QElapsedTimer timer;
    timer.start();
    const MappedPairs pairs(a, b, threads);
    const int differing = pairs.compare(threads);
    const double seconds = timer.nsecsElapsed() / 1e9;
    if (differing != 1)
        std::fprintf(stderr, "warning: memcmp found %d differing ranges, not 1\n", differing);
    return pairs.ok && differing == 1 ? seconds : -1;
}

// Seconds of one compare() of tensordicts loaded before (their leaves maybe
// mapped already), or -1 on failure. `check` looks at the result.
double compareLoaded(const TensorDict& ta, const TensorDict& tb, int threads,
                     const std::function<bool(const CompareResult&)>& check) {
    try {
        CompareOptions o;
        o.numThreads = threads;
        QElapsedTimer timer;
        timer.start();
        const CompareResult r = compare(ta, tb, o);
        const double seconds = timer.nsecsElapsed() / 1e9;
        if (!check(r))
            return -1;
        return seconds;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "warning: compare() failed: %s\n", e.what());
        return -1;
    }
}

// Seconds of one compare() of freshly loaded tensordicts (load() and the
// unmapping when they go are not timed).
double compareRun(const QString& a, const QString& b, int threads,
                  const std::function<bool(const CompareResult&)>& check) {
    try {
        const TensorDict ta = load(a.toStdString()), tb = load(b.toStdString());
        return compareLoaded(ta, tb, threads, check);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "warning: compare(%s, %s) failed: %s\n", qPrintable(a), qPrintable(b),
                     e.what());
        return -1;
    }
}

struct Method {
    QString name;
    std::function<double()> run;  // seconds, or -1 on failure
    std::vector<double> times;
    double seconds() const { return median(times); }
};

// Runs the methods round-robin (so drift hits all alike), `rounds` times,
// after one untimed warm-up run each.
void measure(std::vector<Method>& methods, int rounds) {
    for (Method& m : methods)
        m.run();
    for (int r = 0; r < rounds; ++r)
        for (Method& m : methods) {
            const double s = m.run();
            if (s >= 0)
                m.times.push_back(s);
        }
}

const Method* byName(const std::vector<Method>& methods, const QString& name) {
    for (const Method& m : methods)
        if (m.name == name && m.seconds() > 0)
            return &m;
    return nullptr;
}

void printCase(const std::vector<Method>& methods, const QString& anchor, std::uint64_t bytes) {
    const Method* a = byName(methods, anchor);
    std::printf("  %-44s %9s %9s %9s %10s\n", "", "median", "min", "GB/s", "vs anchor");
    for (const Method& m : methods) {
        const double s = m.seconds();
        if (s <= 0) {
            std::printf("  %-44s %9s\n", qPrintable(m.name), "FAILED");
            continue;
        }
        std::printf("  %-44s %7.3f s %7.3f s %9.2f", qPrintable(m.name), s,
                    *std::min_element(m.times.begin(), m.times.end()), bytes / s / 1e9);
        if (a)
            std::printf(" %9.2fx\n", a->seconds() / s);
        else
            std::printf(" %10s\n", "-");
    }
}

double speedRatio(const std::vector<Method>& methods, const QString& ours, const QString& other) {
    const Method* o = byName(methods, ours);
    const Method* t = byName(methods, other);
    return o && t ? t->seconds() / o->seconds() : -1;
}

void goal(const char* what, double ratio, double atLeast) {
    if (ratio < 0)
        std::printf("  %-52s %8s   goal >= %.1fx  skipped\n", what, "-", atLeast);
    else
        std::printf("  %-52s %7.3fx   goal >= %.1fx  %s\n", what, ratio, atLeast,
                    ratio >= atLeast ? "ok" : "MISSED");
}

void info(const char* what, double ratio) {
    if (ratio < 0)
        std::printf("  %-52s %8s\n", what, "-");
    else
        std::printf("  %-52s %7.3fx\n", what, ratio);
}

}  // namespace

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    QStringList arguments = app.arguments();
    std::uint64_t mib = 1024;
    if (const int env = qEnvironmentVariableIntValue("BENCH_COMPARE_MIB"); env > 0)
        mib = std::uint64_t(env);
    for (int i = 1; i + 1 < arguments.size(); ++i)
        if (arguments[i] == "--mib") {
            mib = std::max<std::uint64_t>(4, arguments[i + 1].toULongLong());
            arguments.remove(i, 2);
            break;
        }
    mib -= mib % (4 * kLeaves);  // whole float32 leaves
    const bench::Args args = bench::parseArgs(arguments, 5, false);
    const int rounds = args.rounds;
    const std::uint64_t total = mib * kMiB, leafBytes = total / kLeaves;
    const bench::Scratch scratch =
        bench::makeScratch("bench_compare", args.scratch, total * 7 / 2,
                           "Pass a directory on a larger file system, or a smaller --mib.");
    if (!scratch.dir)
        return 1;
    const QString dir = scratch.path();
    const double freeGB = scratch.freeGB;
    std::printf("scratch: %s (%.1f GB free), %d rounds + 1 warm-up, medians; %u cores\n",
                qPrintable(dir), freeGB, rounds, std::thread::hardware_concurrency());

    // The data: A, B (A with one element changed near the end), A as a deflated .tdz.
    const QString dirA = dir + "/A", dirB = dir + "/B", tdz = dir + "/A-deflate.tdz",
                  gz = dir + "/A.gz";
    QStringList filesA, filesB;
    for (int l = 0; l < kLeaves; ++l) {
        filesA << dirA + QString("/x%1.memmap").arg(l);
        filesB << dirB + QString("/x%1.memmap").arg(l);
    }
    const std::uint64_t elements = leafBytes / 4;
    const std::uint64_t changedIndex = elements - 1000;  // in the last leaf
    {
        QElapsedTimer timer;
        timer.start();
        if (!writeSource(dirA, leafBytes)) {
            std::fprintf(stderr, "bench_compare: cannot write %s\n", qPrintable(dirA));
            return 1;
        }
        QDir().mkpath(dirB);
        for (const QString& f : QDir(dirA).entryList(QDir::Files))
            QFile::copy(dirA + "/" + f, dirB + "/" + f);
        QFile last(filesB.back());
        float value = 0;
        if (!last.open(QIODevice::ReadWrite) || !last.seek(qint64(changedIndex * 4)) ||
            last.read(reinterpret_cast<char*>(&value), 4) != 4) {
            std::fprintf(stderr, "bench_compare: cannot patch %s\n", qPrintable(filesB.back()));
            return 1;
        }
        value += 1.0f;
        last.seek(qint64(changedIndex * 4));
        last.write(reinterpret_cast<const char*>(&value), 4);
        last.close();
        std::printf(
            "wrote A and B: %d float32 leaves x %llu MiB each; B differs at x%d[%llu] "
            "(%.1f s)\n",
            kLeaves, (unsigned long long)(leafBytes / kMiB), kLeaves - 1,
            (unsigned long long)changedIndex, timer.nsecsElapsed() / 1e9);
    }
    std::uint64_t tdzBytes = 0, gzBytes = 0;
    {
        QElapsedTimer timer;
        timer.start();
        SaveOptions o;
        o.copyExisting = true;
        o.compression = kZipDeflate;
        o.compressionLevel = 6;
        o.numThreads = 2;
        try {
            save(load(dirA.toStdString()), tdz.toStdString(), o);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "bench_compare: saving %s: %s\n", qPrintable(tdz), e.what());
            return 1;
        }
        tdzBytes = std::uint64_t(QFileInfo(tdz).size());
        std::printf("wrote A as a deflate-6 .tdz: %.1f MB (%.1f s)\n", tdzBytes / 1e6,
                    timer.nsecsElapsed() / 1e9);
    }
    const QString gzip = bench::findToolOrSkip("gzip"), pigz = bench::findToolOrSkip("pigz");
    if (!pigz.isEmpty() || !gzip.isEmpty()) {
        QStringList argv = pigz.isEmpty() ? QStringList{gzip, "-6", "-c"}
                                          : QStringList{pigz, "-6", "-p", "2", "-c"};
        argv << filesA;
        bench::runProcess(argv, gz);
        gzBytes = std::uint64_t(QFileInfo(gz).size());
        std::printf("wrote A's leaves as one .gz (level 6, for the anchors): %.1f MB\n",
                    gzBytes / 1e6);
    }
    {
        QElapsedTimer timer;
        timer.start();
        warm(filesA + filesB + QStringList{tdz, gz});
        std::printf("page cache warmed (%.1f s)\n", timer.nsecsElapsed() / 1e9);
    }

    // 1: directory against directory.
    const std::vector<std::string> lastKey{"x" + std::to_string(kLeaves - 1)};
    auto oneDifference = [&](const CompareResult& r) {
        const auto changed = r.changed();
        const bool ok = !r.cancelled && changed.size() == 1 && changed[0]->key == lastKey &&
                        changed[0]->values && changed[0]->values->differing == 1 &&
                        changed[0]->values->firstIndex == std::int64_t(changedIndex) &&
                        r.errors().empty() && r.onlyInA().empty() && r.onlyInB().empty();
        if (!ok)
            std::fprintf(stderr, "warning: compare(A, B) did not find exactly the one change\n");
        return ok;
    };
    auto equalResult = [](const CompareResult& r) {
        if (!r.equal())
            std::fprintf(stderr, "warning: compare(A, A.tdz) did not find them equal\n");
        return r.equal();
    };
    const QString anchor1 = "anchor: memcmp of the mapped files, 1 thread";
    std::vector<Method> one;
    one.push_back({anchor1, [&] { return memcmpRun(filesA, filesB, 1); }, {}});
    one.push_back(
        {"memcmp, 2 threads (1 MiB chunks)", [&] { return memcmpRun(filesA, filesB, 2); }, {}});
    for (int t : {1, 2})
        one.push_back({QString("compare(A, B), %1 thread(s)").arg(t),
                       [&, t] { return compareRun(dirA, dirB, t, oneDifference); },
                       {}});
    // Diagnostics: the same with the files mapped and faulted in before the
    // clock starts, which leaves only the scanning.
    const MappedPairs premapped(filesA, filesB, 1);
    const TensorDict loadedA = load(dirA.toStdString()), loadedB = load(dirB.toStdString());
    one.push_back({"memcmp, 1 thread, mapped before",
                   [&] {
                       QElapsedTimer timer;
                       timer.start();
                       const int differing = premapped.compare(1);
                       return differing == 1 ? timer.nsecsElapsed() / 1e9 : -1;
                   },
                   {}});
    for (int t : {1, 2})
        one.push_back({QString("compare(A, B), %1 thread(s), mapped before").arg(t),
                       [&, t] { return compareLoaded(loadedA, loadedB, t, oneDifference); },
                       {}});
    std::printf(
        "\ncase 1: directory vs directory, %d float32 leaves, %.2f GB a side, one element "
        "differs\n",
        kLeaves, total / 1e9);
    std::fflush(stdout);
    measure(one, rounds);
    printCase(one, anchor1, total);

    // 2: directory against its deflated archive.
    const QString anchor2 = "anchor: gzip -dc A.gz > /dev/null";
    std::vector<Method> two;
    if (!gzip.isEmpty() && gzBytes)
        two.push_back({anchor2,
                       [&] {
                           const bench::ProcessRun run = bench::runProcess({gzip, "-dc", gz});
                           return run.ok ? run.seconds : -1;
                       },
                       {}});
    if (!pigz.isEmpty() && gzBytes)
        two.push_back({"pigz -dc A.gz > /dev/null",
                       [&] {
                           const bench::ProcessRun run = bench::runProcess({pigz, "-dc", gz});
                           return run.ok ? run.seconds : -1;
                       },
                       {}});
    for (int t : {1, 2})
        two.push_back({QString("compare(A, A.tdz), %1 thread(s)").arg(t),
                       [&, t] { return compareRun(dirA, tdz, t, equalResult); },
                       {}});
    std::printf(
        "\ncase 2: directory vs its deflate-6 .tdz (%.1f MB; .gz %.1f MB), %.2f GB a side, "
        "equal\n",
        tdzBytes / 1e6, gzBytes / 1e6, total / 1e9);
    std::fflush(stdout);
    measure(two, rounds);
    printCase(two, anchor2, total);

    std::printf("\ngoals and ratios (speed ratios, > 1 means the first is faster)\n");
    goal("1: compare 2 threads / memcmp 1 thread",
         speedRatio(one, "compare(A, B), 2 thread(s)", anchor1), 0.7);
    info("1: compare 1 thread / memcmp 1 thread",
         speedRatio(one, "compare(A, B), 1 thread(s)", anchor1));
    info("1: compare 2 threads / memcmp 2 threads",
         speedRatio(one, "compare(A, B), 2 thread(s)", "memcmp, 2 threads (1 MiB chunks)"));
    info("1: mapped before: compare 1 thread / memcmp 1 thread",
         speedRatio(one, "compare(A, B), 1 thread(s), mapped before",
                    "memcmp, 1 thread, mapped before"));
    info("1: mapped before: compare 2 threads / memcmp 1 thread",
         speedRatio(one, "compare(A, B), 2 thread(s), mapped before",
                    "memcmp, 1 thread, mapped before"));
    info("1: compare 2 threads / 1 thread",
         speedRatio(one, "compare(A, B), 2 thread(s)", "compare(A, B), 1 thread(s)"));
    info("2: compare(A, A.tdz) 1 thread / gzip -dc",
         speedRatio(two, "compare(A, A.tdz), 1 thread(s)", anchor2));
    info("2: compare(A, A.tdz) 2 threads / gzip -dc",
         speedRatio(two, "compare(A, A.tdz), 2 thread(s)", anchor2));
    info("2: compare(A, A.tdz) 2 threads / pigz -dc",
         speedRatio(two, "compare(A, A.tdz), 2 thread(s)", "pigz -dc A.gz > /dev/null"));
    info("2: compare(A, A.tdz) 2 threads / 1 thread",
         speedRatio(two, "compare(A, A.tdz), 2 thread(s)", "compare(A, A.tdz), 1 thread(s)"));
    return 0;
}
