// Benchmarks of writing at disk speed, printed as medians and as speed ratios
// (ours / anchor, > 1 is faster) against tools measured in the same run
// (shared machines are noisy; ratios are not). Page cache only: no sync; the
// outputs are removed between runs.
//   A. 4 float32 leaves x 256 MiB, loaded from a memmap directory and saved
//      (copyExisting) to a stored .tdz and to a directory, 1 and 2 threads,
//      vs `cp -r SRC DST` (goal: stored .tdz >= 0.8x cp -r)
//   B. deflate level 6 of one 256 MiB leaf into a .tdz, 1 and 2 threads, vs
//      `pigz -6 -p 2` and `gzip -6` of the leaf's file (goal: 2 threads >= 1.5x
//      pigz, size <= 1.01x gzip -6's)
//   C. 20,000 leaves of 5 KiB (200 groups x 100) from a directory to a stored
//      .tdz, 1 and 2 threads, vs `zip -0 -r -q` of the directory (goal >= 1.5x),
//      and `tdstudio --save` of it, the whole process (goal >= 2x);
//      also with every leaf mapped instead of read (StoreOptions::mapLeavesFrom)
//   D. 100,000 leaves of 256 B (100 groups x 1000) from a directory to a
//      stored .tdz and to a directory, 2 threads, vs `zip -0 -r -q` (Python's
//      pack_memmap streams the files into a zip the same way)
//   E. deflate level 1 (ISA-L) of case B's leaf, 1 and 2 threads, vs
//      `pigz -1 -p 2` (goal: 2 threads >= 4x) with the size of `gzip -1`
//      (goal: <= 1.02x)
//   F. a dataset-like tensordict (96 MiB of structured uint8 images, small
//      int64 labels, rounded float32 rewards) at levels 1 and 6, 2 threads, vs
//      `pigz -1 -p 2`, `pigz -6 -p 2`, `gzip -1` and `gzip -6` of its leaves'
//      bytes (goals: level 1 as E's, level 6 as B's); and each level's codec
//      alone (ISA-L, libdeflate) on the same bytes and chunks in memory: its
//      own speed, which bounds what any save at that level can reach here
// and in every case 2 threads never slower than 1. Every save is timed from
// load() of its source on, as `tdstudio --save` runs and as the anchors
// read their input.
// usage: bench_save [--rounds N] [--cases ABCDEF] [SCRATCH_DIR]   (rounds also
// from BENCH_ROUNDS, default 3; needs ~3 GB of scratch, default a temporary
// directory in /var/tmp)

#include <isa-l/igzip_lib.h>
#include <libdeflate.h>
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
#include <functional>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "bench_support.h"
#include "codec/codec.h"
#include "tensordict/node.h"
#include "tensordict/save.h"
#include "tensordict/tensordict.h"
#include "testsupport.h"

using namespace tensordict;
using bench::median;

namespace {

constexpr std::uint64_t kMiB = 1 << 20;
constexpr std::uint64_t kScratchNeeded = 3ull << 30;

// Wall seconds of bench::runProcess(), or -1 if it did not exit with status 0.
double processSeconds(const QStringList& argv, const QString& stdoutPath = "/dev/null",
                      const QString& cwd = {}) {
    const bench::ProcessRun run = bench::runProcess(argv, stdoutPath, cwd);
    return run.ok ? run.seconds : -1;
}

// Seconds of one load() of the source and save() of it, or -1 on error; the
// returned (mapped) result is released after the clock stops.
double timedSave(const std::function<TensorDict()>& source, const QString& out,
                 const SaveOptions& o) {
    QElapsedTimer timer;
    timer.start();
    try {
        const TensorDict saved = save(source(), out.toStdString(), o);
        return timer.nsecsElapsed() / 1e9;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "warning: save to %s failed: %s\n", qPrintable(out), e.what());
        return -1;
    }
}

SaveOptions saveOptions(int threads, int compression = kZipStored, int level = -1) {
    SaveOptions o;
    o.copyExisting = true;
    o.numThreads = threads;
    o.compression = compression;
    o.compressionLevel = level;
    return o;
}

SaveOptions archiveOptions(int threads, int compression = kZipStored, int level = -1) {
    SaveOptions o = saveOptions(threads, compression, level);
    o.archive = true;
    return o;
}

void removePath(const QString& path) {
    if (path.isEmpty())  // a method in memory
        return;
    if (QFileInfo(path).isDir())
        QDir(path).removeRecursively();
    else
        QFile::remove(path);
}

// Float32 values with varied, somewhat compressible content, fast: blocks of
// 1 Mi values rotating through full-precision noise (barely compressible),
// noise quantised to 12 bits, small integers, and a ramp plus noise.
std::vector<float> makeValues(std::size_t count, std::uint64_t seed) {
    std::vector<float> v(count);
    std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (std::size_t i = 0; i < count; ++i) {
        x ^= x << 13;  // xorshift64
        x ^= x >> 7;
        x ^= x << 17;
        const float noise = float(x >> 40) * 0x1p-24f - 0.5f;  // uniform in [-0.5, 0.5)
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

// A dataset as replay buffers hold them: `count` 64x64 RGB uint8 frames
// (a lit gradient, a few flat boxes, sensor noise in the low bits),
// int64 labels below 10 and float32 rewards in steps of 0.1.
TensorDict makeDatasetLike(std::int64_t count) {
    constexpr std::int64_t kSide = 64;
    std::vector<std::uint8_t> frames(std::size_t(count) * kSide * kSide * 3);
    std::vector<std::int64_t> labels(std::size_t(count) * 100);
    std::vector<float> rewards(std::size_t(count) * 100);
    bench::XorShift next;
    for (std::int64_t n = 0; n < count; ++n) {
        std::uint8_t* frame = frames.data() + std::size_t(n) * kSide * kSide * 3;
        const int shift = int(next() % 64), boxes = 1 + int(next() % 4);
        for (int y = 0; y < kSide; ++y)
            for (int c = 0; c < kSide; ++c)
                for (int ch = 0; ch < 3; ++ch)
                    frame[(y * kSide + c) * 3 + ch] =
                        std::uint8_t((y * 2 + c + shift + ch * 40) & 0xFF);
        for (int b = 0; b < boxes; ++b) {
            const int y0 = int(next() % 48), x0 = int(next() % 48), h = 4 + int(next() % 16),
                      w = 4 + int(next() % 16);
            const std::uint8_t colour[3] = {std::uint8_t(next()), std::uint8_t(next()),
                                            std::uint8_t(next())};
            for (int y = y0; y < std::min<int>(kSide, y0 + h); ++y)
                for (int c = x0; c < std::min<int>(kSide, x0 + w); ++c)
                    for (int ch = 0; ch < 3; ++ch)
                        frame[(y * kSide + c) * 3 + ch] = colour[ch];
        }
        for (int i = 0; i < kSide * kSide * 3; i += 1 + int(next() % 7))
            frame[i] ^= std::uint8_t(next() & 3);
    }
    for (auto& label : labels)
        label = std::int64_t(next() % 10);
    for (auto& reward : rewards)
        reward = float(int(next() % 21) - 10) / 10.0f;
    TensorDict td = TensorDict::create();
    td.mutableRoot().addBytes("frames", DType::UInt8, {count, kSide, kSide, 3},
                              ownedBytes(std::move(frames)));
    td.mutableRoot().addBytes("labels", DType::Int64, {count * 100}, ownedBytes(std::move(labels)));
    td.mutableRoot().addBytes("rewards", DType::Float32, {count * 100},
                              ownedBytes(std::move(rewards)));
    return td;
}

// Seconds for a codec alone to compress `raw` in 1 MiB chunks, as the
// writer gives them out, on two threads, in memory and writing nothing: no
// save at that level can be faster than its codec. `makeCompressor()` gives
// each thread its `compress(chunk, size, previous32KiB, previousSize)`,
// false when the codec failed (then -1: the row shows as skipped). The
// levels are the writer's own (codec.h: isalLevelFor, libdeflateLevelFor).
template <typename MakeCompressor>
double codecAloneSeconds(const QByteArray& raw, MakeCompressor makeCompressor) {
    constexpr std::size_t kChunk = 1u << 20;
    const std::size_t size = std::size_t(raw.size());
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(raw.constData());
    std::atomic<std::size_t> next{0};
    std::atomic<bool> failed{false};
    const auto compressChunks = [&] {
        auto compress = makeCompressor();
        for (std::size_t at; (at = next.fetch_add(kChunk)) < size;) {
            const std::size_t primed = std::min<std::size_t>(at, 32768);
            if (!compress(bytes + at, std::min(kChunk, size - at), bytes + at - primed, primed))
                failed = true;
        }
    };
    QElapsedTimer timer;
    timer.start();
    std::thread other(compressChunks);
    compressChunks();
    other.join();
    return failed || size == 0 ? -1 : double(timer.nsecsElapsed()) / 1e9;
}

// libdeflate at zip level `zipLevel`'s level, unprimed (it takes no dictionary).
double libdeflateAloneSeconds(const QByteArray& raw, int zipLevel) {
    return codecAloneSeconds(raw, [zipLevel] {
        struct Free {
            void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
        };
        auto c = std::shared_ptr<libdeflate_compressor>(
            libdeflate_alloc_compressor(tensordict::libdeflateLevelFor(zipLevel)), Free());
        auto out = std::make_shared<std::vector<char>>(
            libdeflate_deflate_compress_bound(c.get(), 1u << 20));
        return [c, out](const std::uint8_t* data, std::size_t n, const std::uint8_t*, std::size_t) {
            return libdeflate_deflate_compress(c.get(), data, n, out->data(), out->size()) != 0;
        };
    });
}

// ISA-L at zip level `zipLevel`'s level, primed with the 32 KiB before.
double isalAloneSeconds(const QByteArray& raw, int zipLevel) {
    const int level = tensordict::isalLevelFor(zipLevel);
    return codecAloneSeconds(raw, [level] {
        auto levelBuffer =
            std::make_shared<std::vector<std::uint8_t>>(tensordict::isalLevelBufferSize(level));
        auto out = std::make_shared<std::vector<std::uint8_t>>(2u << 20);
        return [level, levelBuffer, out](const std::uint8_t* data, std::size_t n,
                                         const std::uint8_t* previous, std::size_t previousSize) {
            isal_zstream z;
            isal_deflate_init(&z);
            z.level = std::uint32_t(level);
            z.level_buf = levelBuffer->data();
            z.level_buf_size = std::uint32_t(levelBuffer->size());
            if (previousSize)
                isal_deflate_set_dict(&z, const_cast<std::uint8_t*>(previous),
                                      std::uint32_t(previousSize));
            z.next_in = const_cast<std::uint8_t*>(data);
            z.avail_in = std::uint32_t(n);
            z.end_of_stream = 1;
            z.next_out = out->data();
            z.avail_out = std::uint32_t(out->size());
            return isal_deflate(&z) == COMP_OK && z.avail_in == 0 &&
                   z.internal_state.state == ZSTATE_END;
        };
    });
}

// One method of a case: a timed run and its output, removed after each run.
struct Method {
    Method(QString name, std::function<double()> run, QString output)
        : name(std::move(name)), run(std::move(run)), output(std::move(output)) {}
    QString name;
    std::function<double()> run;  // seconds, or -1 on failure
    QString output;
    std::vector<double> times;
    qint64 outputBytes = -1;  // size of the last output file
    double seconds() const { return median(times); }
};

// Runs the methods round-robin (so drift hits all alike), `rounds` times.
// Each run starts with no dirty pages left by the one before (an untimed
// sync): otherwise whoever runs while the kernel writes back pays for the
// others, and the page cache decides the ranking.
void measure(std::vector<Method>& methods, int rounds) {
    for (int r = 0; r < rounds; ++r)
        for (Method& m : methods) {
            removePath(m.output);
            ::sync();
            const double s = m.run();
            if (s >= 0) {
                m.times.push_back(s);
                m.outputBytes = QFileInfo(m.output).size();
            }
            removePath(m.output);
        }
}

const Method* byName(const std::vector<Method>& methods, const QString& name) {
    for (const Method& m : methods)
        if (m.name == name && m.seconds() > 0)
            return &m;
    return nullptr;
}

// Prints each method's median time, speed and speed ratio to the anchor.
void printCase(const std::vector<Method>& methods, const QString& anchor, std::uint64_t bytes,
               bool sizes = false) {
    const Method* a = byName(methods, anchor);
    std::printf("  %-40s %9s %11s %10s%s\n", "", "median", "speed", "vs anchor",
                sizes ? "   output" : "");
    for (const Method& m : methods) {
        const double s = m.seconds();
        if (s <= 0) {
            std::printf("  %-40s %9s\n", qPrintable(m.name), "skipped");
            continue;
        }
        std::printf("  %-40s %7.3f s %6.0f MB/s", qPrintable(m.name), s, bytes / s / 1e6);
        if (a)
            std::printf(" %9.2fx", a->seconds() / s);
        else
            std::printf(" %10s", "-");
        if (sizes && m.output.isEmpty())  // in memory
            std::printf("   %9s", "-");
        else if (sizes)
            std::printf("   %6.1f MB", m.outputBytes / 1e6);
        std::printf("\n");
    }
}

// Speed ratio of method `ours` over method `other` (their time over ours); -1 if either is missing.
double speedRatio(const std::vector<Method>& methods, const QString& ours, const QString& other) {
    const Method* o = byName(methods, ours);
    const Method* t = byName(methods, other);
    return o && t ? t->seconds() / o->seconds() : -1;
}

// Output size of method `ours` over method `other`; -1 if either is missing.
double sizeRatio(const std::vector<Method>& methods, const QString& ours, const QString& other) {
    const Method* o = byName(methods, ours);
    const Method* t = byName(methods, other);
    return o && t && t->outputBytes > 0 ? double(o->outputBytes) / t->outputBytes : -1;
}

void printSizeRatio(const std::vector<Method>& methods, const QString& ours, const QString& other) {
    const Method* o = byName(methods, ours);
    const Method* t = byName(methods, other);
    if (o && t)
        std::printf("  compressed size %s / %s: %.4f (%.1f MB / %.1f MB)\n", qPrintable(ours),
                    qPrintable(other), sizeRatio(methods, ours, other), o->outputBytes / 1e6,
                    t->outputBytes / 1e6);
}

void goalAtMost(const char* what, double ratio, double atMost) {
    if (ratio < 0)
        std::printf("  %-56s %8s   goal <= %.2fx skipped\n", what, "-", atMost);
    else
        std::printf("  %-56s %7.3fx   goal <= %.2fx %s\n", what, ratio, atMost,
                    ratio <= atMost ? "ok" : "MISSED");
}

void goal(const char* what, double ratio, double atLeast) {
    if (ratio < 0)
        std::printf("  %-56s %8s   goal >= %.1fx  skipped\n", what, "-", atLeast);
    else
        std::printf("  %-56s %7.3fx   goal >= %.1fx  %s\n", what, ratio, atLeast,
                    ratio >= atLeast ? "ok" : "MISSED");
}

}  // namespace

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    const bench::Args args = bench::parseArgs(app.arguments(), 3, false);
    const int rounds = args.rounds;
    // Free space first: the run needs ~3 GB.
    const bench::Scratch scratch =
        bench::makeScratch("bench_save", args.scratch, kScratchNeeded,
                           "Pass a directory on a larger file system: bench_save SCRATCH_DIR");
    if (!scratch.dir)
        return 1;
    const QString dir = scratch.path();
    const double freeGB = scratch.freeGB;
    std::printf("scratch: %s (%.1f GB free), %d rounds, medians; speed = input bytes / time\n",
                qPrintable(dir), freeGB, rounds);

    const QString cp = bench::findToolOrSkip("cp"), pigz = bench::findToolOrSkip("pigz"),
                  gzip = bench::findToolOrSkip("gzip"), zip = bench::findToolOrSkip("zip");

    // The sources: case A's four leaves (leaf a0 is also case B's), case C's small leaves.
    const QString srcA = dir + "/big", srcC = dir + "/small";
    const std::uint64_t leafBytes = 256 * kMiB, bytesA = 4 * leafBytes;
    const int leavesA = args.runs('A') ? 4 : 1;  // B and E use a0 only
    {
        QElapsedTimer timer;
        timer.start();
        TensorDict td = TensorDict::create();
        for (int i = 0; i < leavesA; ++i)
            td.mutableRoot().addBytes("a" + std::to_string(i), DType::Float32,
                                      {std::int64_t(leafBytes / 4)},
                                      ownedBytes(makeValues(leafBytes / 4, i + 1)));
        save(td, srcA.toStdString(), saveOptions(2));
        std::printf("wrote source A: %d leaves x 256 MiB (%.1f s)\n", leavesA,
                    timer.nsecsElapsed() / 1e9);
    }
    constexpr int kGroupsC = 200, kLeavesC = 100;
    constexpr std::int64_t kFloatsC = 1280;  // 5 KiB
    const std::uint64_t bytesC = std::uint64_t(kGroupsC) * kLeavesC * kFloatsC * 4;
    if (args.runs('C')) {
        QElapsedTimer timer;
        timer.start();
        TensorDict td = TensorDict::create();
        for (int g = 0; g < kGroupsC; ++g) {
            Node& group = td.mutableRoot().addTensorDict(
                QString("g%1").arg(g, 3, 10, QChar('0')).toStdString());
            for (int l = 0; l < kLeavesC; ++l)
                group.addBytes(QString("x%1").arg(l, 2, 10, QChar('0')).toStdString(),
                               DType::Float32, {kFloatsC},
                               ownedBytes(makeValues(kFloatsC, g * kLeavesC + l + 1)));
        }
        save(td, srcC.toStdString(), saveOptions(2));
        std::printf("wrote source C: %d leaves x 5 KiB (%.1f s)\n", kGroupsC * kLeavesC,
                    timer.nsecsElapsed() / 1e9);
    }
    const auto sourceA = [&] { return load(srcA.toStdString()); };
    const auto sourceB = [&] { return select(load(srcA.toStdString()), {{"a0"}}); };
    const auto sourceC = [&] { return load(srcC.toStdString()); };
    const QString leafFile = srcA + "/a0.memmap";
    if (!QFileInfo(leafFile).isFile() || QFileInfo(leafFile).size() != qint64(leafBytes)) {
        std::fprintf(stderr, "bench_save: %s is not the 256 MiB leaf\n", qPrintable(leafFile));
        return 1;
    }

    // A: stored copy of 1 GiB.
    std::vector<Method> a;
    if (!cp.isEmpty())
        a.push_back({"anchor: cp -r SRC DST",
                     [&] {
                         return processSeconds({cp, "-r", srcA, dir + "/A-cp"});
                     },
                     dir + "/A-cp"});
    for (int t : {1, 2}) {
        const QString out = dir + "/A.tdz";
        a.push_back({QString("save -> stored .tdz, %1 thread(s)").arg(t),
                     [&, t, out] { return timedSave(sourceA, out, archiveOptions(t)); }, out});
    }
    for (int t : {1, 2}) {
        const QString out = dir + "/A-dir";
        a.push_back({QString("save -> directory, %1 thread(s)").arg(t),
                     [&, t, out] { return timedSave(sourceA, out, saveOptions(t)); }, out});
    }
    if (args.runs('A')) {
        std::printf("\ncase A: 4 float32 leaves x 256 MiB (%.2f GB), stored\n", bytesA / 1e9);
        std::fflush(stdout);
        measure(a, rounds);
        printCase(a, "anchor: cp -r SRC DST", bytesA);
    }

    // B: deflate level 6 of one 256 MiB leaf.
    std::vector<Method> b;
    if (!pigz.isEmpty())
        b.push_back(
            {"anchor: pigz -6 -p 2 -c LEAF > out",
             [&] {
                 return processSeconds({pigz, "-6", "-p", "2", "-c", leafFile}, dir + "/B.gz");
             },
             dir + "/B.gz"});
    if (!gzip.isEmpty())
        b.push_back({"gzip -6 -c LEAF > out",
                     [&] {
                         return processSeconds({gzip, "-6", "-c", leafFile}, dir + "/B-gzip.gz");
                     },
                     dir + "/B-gzip.gz"});
    for (int t : {1, 2}) {
        const QString out = dir + "/B.tdz";
        b.push_back(
            {QString("save -> deflate-6 .tdz, %1 thread(s)").arg(t),
             [&, t, out] { return timedSave(sourceB, out, archiveOptions(t, kZipDeflate, 6)); },
             out});
    }
    if (args.runs('B')) {
        std::printf("\ncase B: deflate level 6 of one 256 MiB float32 leaf\n");
        std::fflush(stdout);
        measure(b, rounds);
        printCase(b, "anchor: pigz -6 -p 2 -c LEAF > out", leafBytes, true);
        printSizeRatio(b, "save -> deflate-6 .tdz, 2 thread(s)", "gzip -6 -c LEAF > out");
    }

    // E: deflate level 1 (ISA-L) of the same leaf.
    std::vector<Method> e;
    if (!pigz.isEmpty())
        e.push_back(
            {"anchor: pigz -1 -p 2 -c LEAF > out",
             [&] {
                 return processSeconds({pigz, "-1", "-p", "2", "-c", leafFile}, dir + "/E.gz");
             },
             dir + "/E.gz"});
    if (!gzip.isEmpty())
        e.push_back({"gzip -1 -c LEAF > out",
                     [&] {
                         return processSeconds({gzip, "-1", "-c", leafFile}, dir + "/E-gzip.gz");
                     },
                     dir + "/E-gzip.gz"});
    for (int t : {1, 2}) {
        const QString out = dir + "/E.tdz";
        e.push_back(
            {QString("save -> deflate-1 .tdz, %1 thread(s)").arg(t),
             [&, t, out] { return timedSave(sourceB, out, archiveOptions(t, kZipDeflate, 1)); },
             out});
    }
    if (args.runs('E')) {
        std::printf("\ncase E: deflate level 1 of one 256 MiB float32 leaf\n");
        std::fflush(stdout);
        measure(e, rounds);
        printCase(e, "anchor: pigz -1 -p 2 -c LEAF > out", leafBytes, true);
        printSizeRatio(e, "save -> deflate-1 .tdz, 2 thread(s)", "gzip -1 -c LEAF > out");
    }

    // F: a dataset-like tensordict at levels 1 and 6; the anchors compress
    // its leaves' bytes, one file after another.
    std::vector<Method> f;
    std::uint64_t bytesF = 0;
    const QString srcF = dir + "/dataset", rawF = dir + "/dataset.raw";
    if (args.runs('F')) {
        save(makeDatasetLike(8192), srcF.toStdString(), saveOptions(2));
        QFile raw(rawF);
        raw.open(QIODevice::WriteOnly);
        for (const char* leaf : {"frames", "labels", "rewards"}) {
            QFile in(srcF + "/" + leaf + ".memmap");
            in.open(QIODevice::ReadOnly);
            raw.write(in.readAll());
        }
        bytesF = std::uint64_t(raw.size());
        std::printf("wrote source F: dataset-like, %.1f MB\n", bytesF / 1e6);
    }
    const auto sourceF = [&] { return load(srcF.toStdString()); };
    for (int level : {1, 6})
        if (!pigz.isEmpty())
            f.push_back({QString("anchor: pigz -%1 -p 2 -c RAW > out").arg(level),
                         [&, level] {
                             return processSeconds(
                                 {pigz, QString("-%1").arg(level), "-p", "2", "-c", rawF},
                                 dir + "/F.gz");
                         },
                         dir + "/F.gz"});
    if (!gzip.isEmpty())
        for (int level : {1, 6})
            f.push_back({QString("gzip -%1 -c RAW > out").arg(level),
                         [&, level] {
                             return processSeconds({gzip, QString("-%1").arg(level), "-c", rawF},
                                                   dir + "/F-gzip.gz");
                         },
                         dir + "/F-gzip.gz"});
    QByteArray rawBytesF;  // read once, untimed, for the codecs alone
    if (args.runs('F')) {
        QFile raw(rawF);
        raw.open(QIODevice::ReadOnly);
        rawBytesF = raw.readAll();
    }
    const QString isalAlone =
        QString("ISA-L %1 alone, 2 threads, in memory").arg(tensordict::isalLevelFor(1));
    const QString libdeflateAlone =
        QString("libdeflate %1 alone, 2 threads, in memory").arg(tensordict::libdeflateLevelFor(6));
    f.push_back({isalAlone, [&] { return isalAloneSeconds(rawBytesF, 1); }, QString()});
    f.push_back({libdeflateAlone, [&] { return libdeflateAloneSeconds(rawBytesF, 6); }, QString()});
    for (int level : {1, 6}) {
        const QString out = dir + "/F.tdz";
        f.push_back({QString("save -> deflate-%1 .tdz, 2 thread(s)").arg(level),
                     [&, level, out] {
                         return timedSave(sourceF, out, archiveOptions(2, kZipDeflate, level));
                     },
                     out});
    }
    if (args.runs('F')) {
        std::printf("\ncase F: dataset-like tensordict, deflate levels 1 and 6\n");
        std::fflush(stdout);
        measure(f, rounds);
        printCase(f, "anchor: pigz -1 -p 2 -c RAW > out", bytesF, true);
        printSizeRatio(f, "save -> deflate-1 .tdz, 2 thread(s)", "gzip -1 -c RAW > out");
        printSizeRatio(f, "save -> deflate-6 .tdz, 2 thread(s)", "gzip -6 -c RAW > out");
        for (const auto& [level, codec] : {std::pair{1, isalAlone}, {6, libdeflateAlone}}) {
            const QString anchor = QString("anchor: pigz -%1 -p 2 -c RAW > out").arg(level);
            const QString save = QString("save -> deflate-%1 .tdz, 2 thread(s)").arg(level);
            const double bound = speedRatio(f, codec, anchor), reached = speedRatio(f, save, codec);
            if (bound > 0 && reached > 0)
                std::printf(
                    "  level %d's bound here: %s / pigz -%d -p 2: %.3fx; the save reaches "
                    "%.0f%% of its codec's speed\n",
                    level, qPrintable(codec), level, bound, 100 * reached);
        }
        rawBytesF = QByteArray();
    }

    // C: 20,000 small leaves into one stored archive.
    std::vector<Method> c;
    if (!zip.isEmpty())
        c.push_back({"anchor: zip -0 -r -q out.zip SRC",
                     [&] {
                         return processSeconds(
                             {zip, "-0", "-r", "-q", dir + "/C.zip", QFileInfo(srcC).fileName()},
                             "/dev/null", QFileInfo(srcC).path());
                     },
                     dir + "/C.zip"});
    for (int t : {1, 2}) {
        const QString out = dir + "/C.tdz";
        c.push_back({QString("save -> stored .tdz, %1 thread(s)").arg(t),
                     [&, t, out] { return timedSave(sourceC, out, archiveOptions(t)); }, out});
    }
#ifdef TDSTUDIO_EXECUTABLE
    c.push_back({"tdstudio --save SRC out.tdz (whole process)",
                 [&] {
                     return processSeconds({TDSTUDIO_EXECUTABLE, "--save", srcC, dir + "/C.tdz"});
                 },
                 dir + "/C.tdz"});
#endif
    {
        const QString out = dir + "/C.tdz";
        c.push_back({"save -> stored .tdz, 2 thread(s), every leaf mapped",
                     [&, out] {
                         return timedSave(
                             [&] {
                                 LoadOptions mapped;
                                 mapped.store.mapLeavesFrom = 1;
                                 return load(srcC.toStdString(), mapped);
                             },
                             out, archiveOptions(2));
                     },
                     out});
    }
    if (args.runs('C')) {
        std::printf("\ncase C: %d float32 leaves x 5 KiB (%d groups x %d, %.1f MB), stored\n",
                    kGroupsC * kLeavesC, kGroupsC, kLeavesC, bytesC / 1e6);
        std::fflush(stdout);
        measure(c, rounds);
        printCase(c, "anchor: zip -0 -r -q out.zip SRC", bytesC, true);
    }

    // D: 100,000 tiny leaves: more than a process may map at once.
    constexpr int kGroupsD = 100, kLeavesD = 1000, kFloatsD = 64;
    const QString srcD = dir + "/wide";
    if (args.runs('D'))
        testsupport::writeWideTree(srcD, kGroupsD, kLeavesD, kFloatsD);
    const std::uint64_t bytesD = std::uint64_t(kGroupsD) * kLeavesD * kFloatsD * 4;
    const auto sourceD = [&] { return load(srcD.toStdString()); };
    std::vector<Method> d;
    if (!zip.isEmpty())
        d.push_back({"anchor: zip -0 -r -q out.zip SRC",
                     [&] {
                         return processSeconds(
                             {zip, "-0", "-r", "-q", dir + "/D.zip", QFileInfo(srcD).fileName()},
                             "/dev/null", QFileInfo(srcD).path());
                     },
                     dir + "/D.zip"});
    d.push_back({"save -> stored .tdz, 2 thread(s)",
                 [&] { return timedSave(sourceD, dir + "/D.tdz", archiveOptions(2)); },
                 dir + "/D.tdz"});
    d.push_back({"save -> directory, 2 thread(s)",
                 [&] { return timedSave(sourceD, dir + "/D-dir", saveOptions(2)); },
                 dir + "/D-dir"});
    if (args.runs('D')) {
        std::printf("\ncase D: %d float32 leaves x 256 B (%d groups x %d, %.1f MB), stored\n",
                    kGroupsD * kLeavesD, kGroupsD, kLeavesD, bytesD / 1e6);
        std::fflush(stdout);
        measure(d, rounds);
        printCase(d, "anchor: zip -0 -r -q out.zip SRC", bytesD, true);
    }

    // Goals, as speed ratios (> 1: ours faster).
    std::printf("\ngoals (speed ratios, > 1 means the first is faster)\n");
    const QString tdz1 = "save -> stored .tdz, 1 thread(s)",
                  tdz2 = "save -> stored .tdz, 2 thread(s)";
    goal("A: stored .tdz 1 thread / cp -r", speedRatio(a, tdz1, "anchor: cp -r SRC DST"), 0.8);
    goal("A: stored .tdz 2 threads / cp -r", speedRatio(a, tdz2, "anchor: cp -r SRC DST"), 0.8);
    goal("B: deflate-6 .tdz 2 threads / pigz -6 -p 2",
         speedRatio(b, "save -> deflate-6 .tdz, 2 thread(s)", "anchor: pigz -6 -p 2 -c LEAF > out"),
         1.5);
    goalAtMost("B: deflate-6 .tdz size / gzip -6 size",
               sizeRatio(b, "save -> deflate-6 .tdz, 2 thread(s)", "gzip -6 -c LEAF > out"), 1.01);
    goal("C: 20k small leaves .tdz 1 thread / zip -0 -r",
         speedRatio(c, tdz1, "anchor: zip -0 -r -q out.zip SRC"), 1.5);
    goal("C: 20k small leaves .tdz 2 threads / zip -0 -r",
         speedRatio(c, tdz2, "anchor: zip -0 -r -q out.zip SRC"), 1.5);
    goal("C: 20k small leaves, tdstudio --save process / zip -0 -r",
         speedRatio(c, "tdstudio --save SRC out.tdz (whole process)",
                    "anchor: zip -0 -r -q out.zip SRC"),
         2.0);
    goal("C: small leaves read / every leaf mapped, 2 threads",
         speedRatio(c, tdz2, "save -> stored .tdz, 2 thread(s), every leaf mapped"), 1.0);
    goal("D: 100k leaves .tdz 2 threads / zip -0 -r",
         speedRatio(d, tdz2, "anchor: zip -0 -r -q out.zip SRC"), 1.5);
    goal("A: directory 2 threads / 1 thread",
         speedRatio(a, "save -> directory, 2 thread(s)", "save -> directory, 1 thread(s)"), 1.0);
    goal("A: stored .tdz 2 threads / 1 thread", speedRatio(a, tdz2, tdz1), 1.0);
    goal(
        "B: deflate-6 .tdz 2 threads / 1 thread",
        speedRatio(b, "save -> deflate-6 .tdz, 2 thread(s)", "save -> deflate-6 .tdz, 1 thread(s)"),
        1.0);
    goal("C: stored .tdz 2 threads / 1 thread", speedRatio(c, tdz2, tdz1), 1.0);
    goal("E: deflate-1 .tdz 2 threads / pigz -1 -p 2",
         speedRatio(e, "save -> deflate-1 .tdz, 2 thread(s)", "anchor: pigz -1 -p 2 -c LEAF > out"),
         4.0);
    goal(
        "E: deflate-1 .tdz 2 threads / 1 thread",
        speedRatio(e, "save -> deflate-1 .tdz, 2 thread(s)", "save -> deflate-1 .tdz, 1 thread(s)"),
        1.0);
    goalAtMost("E: deflate-1 .tdz size / gzip -1 size",
               sizeRatio(e, "save -> deflate-1 .tdz, 2 thread(s)", "gzip -1 -c LEAF > out"), 1.02);
    goal("F: dataset deflate-1 .tdz 2 threads / pigz -1 -p 2",
         speedRatio(f, "save -> deflate-1 .tdz, 2 thread(s)", "anchor: pigz -1 -p 2 -c RAW > out"),
         4.0);
    goal("F: dataset deflate-6 .tdz 2 threads / pigz -6 -p 2",
         speedRatio(f, "save -> deflate-6 .tdz, 2 thread(s)", "anchor: pigz -6 -p 2 -c RAW > out"),
         1.5);
    goalAtMost("F: dataset deflate-6 .tdz size / gzip -6 size",
               sizeRatio(f, "save -> deflate-6 .tdz, 2 thread(s)", "gzip -6 -c RAW > out"), 1.01);
    goalAtMost("F: dataset deflate-1 .tdz size / gzip -1 size",
               sizeRatio(f, "save -> deflate-1 .tdz, 2 thread(s)", "gzip -1 -c RAW > out"), 1.02);
    return 0;
}
