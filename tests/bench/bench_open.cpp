// Benchmarks of opening many leaves, printed as medians and as ratios against
// anchors measured in the same run (shared machines are noisy; ratios are not).
// Data: 10,000 float32 leaves (100 groups "g00".."g99" of 100 leaves "x00".."x99"),
// small (16 floats a leaf) and 1000x larger (16,000 floats, ~640 MB), each written
// once by our save() as a memmap directory and as a stored .tdz.
//   1. in-process load() of the directory and of the .tdz, small and large
//      (goals: .tdz faster than Python's zipfile listing, measured inside Python;
//      the payload size makes no difference; the directory under 35 ms)
//   2. whole-process `tdstudio --info X.tdz > /dev/null` vs `unzip -l X.tdz`, run
//      in turn round by round, the ratio the median of each round's (goal <= 1x)
//   3. whole-process `tdstudio --version`: time and peak RSS (goals < 60 ms, <= 20 MB)
//   4. in-process load() of a torch.save checkpoint of 1,000 float32 tensors,
//      small (16 floats each) and 1 GiB (262,144 each), against torch.load of
//      the same file inside /usr/bin/python3 (goals: >= 10x faster; the
//      payload size makes no difference)
//   5. whole-process `tdstudio --info --sha256` of one uint8 leaf of 1024 x 1024
//      images, 96 of them (96 MiB) and 1024 (1 GiB), image-like: stored, against `openssl dgst
//      -sha256` of the leaf's file (goal >= 0.8x); deflated (level 6, with
//      and without access points), against `pigz -dc` of the same bytes
//      gzipped and against our zlib path (TENSORDICT_INFLATE=zlib on the
//      archive without access points: zlib inflating the entry front to
//      back, as before ISA-L) (goals >= 2x each)
// Each measurement gets one untimed warm-up run; the files are in the page cache.
// usage: bench_open [--quick] [--rounds N] [--cases OH] [SCRATCH_DIR]
//   --quick skips the large payload and case 5; --cases H runs case 5 only,
//   O cases 1-4; rounds also from BENCH_ROUNDS (default 5).

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <vector>

#include "bench_support.h"
#include "tensordict/node.h"
#include "tensordict/report.h"
#include "tensordict/save.h"
#include "tensordict/tensordict.h"

using namespace tensordict;
using bench::findTool;
using bench::median;
using bench::processMedian;
using bench::ProcessPair;
using bench::processPairMedian;
using bench::ProcessRun;
using bench::runProcess;
using bench::timeMedian;

namespace {

constexpr int kGroups = 100, kLeavesPerGroup = 100;

// 10,000 float32 leaves of `floatsPerLeaf` values each, varied content.
TensorDict makeTensorDict(std::int64_t floatsPerLeaf) {
    TensorDict td = TensorDict::create();
    Node& root = td.mutableRoot();
    for (int g = 0; g < kGroups; ++g) {
        Node& group = root.addTensorDict(QString("g%1").arg(g, 2, 10, QChar('0')).toStdString());
        for (int l = 0; l < kLeavesPerGroup; ++l) {
            std::vector<float> values(floatsPerLeaf);
            for (std::int64_t i = 0; i < floatsPerLeaf; ++i)
                values[i] = float(g * kLeavesPerGroup + l) + 0.25f * float(i % 1024);
            group.addBytes(QString("x%1").arg(l, 2, 10, QChar('0')).toStdString(), DType::Float32,
                           {floatsPerLeaf}, ownedBytes(std::move(values)));
        }
    }
    return td;
}

// Runs a Python script that prints one number of seconds (a median it
// measured itself, without interpreter start-up); nullopt when it fails.
std::optional<double> pythonSeconds(const QString& python, const char* script,
                                    const QStringList& args, const QString& scratch) {
    const QString out = scratch + "/python.out";
    if (!runProcess(QStringList{python, "-c", script} + args, out).ok)
        return std::nullopt;
    QFile f(out);
    if (!f.open(QIODevice::ReadOnly))
        return std::nullopt;
    bool ok = false;
    const double seconds = f.readAll().trimmed().toDouble(&ok);
    return ok ? std::optional<double>(seconds) : std::nullopt;
}

// Writes a torch.save checkpoint of 1,000 float32 tensors of `floats`
// values each ({"model": {"layer0000.weight": ..., ...}, "epoch": 3}) with
// /usr/bin/python3's torch, and returns the median seconds of torch.load of it.
std::optional<double> torchCheckpoint(const QString& python, const QString& path,
                                      std::int64_t floats, int rounds, const QString& scratch) {
    const char* script = R"(import sys, time, torch
path, floats, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
model = {'layer%04d.weight' % i: torch.full((floats,), float(i)) for i in range(1000)}
torch.save({'model': model, 'epoch': 3}, path)
del model
def once():
    t = time.perf_counter()
    torch.load(path)
    return time.perf_counter() - t
once()
ts = sorted(once() for _ in range(n))
print(ts[len(ts) // 2])
)";
    return pythonSeconds(python, script, {path, QString::number(floats), QString::number(rounds)},
                         scratch);
}

// Python's zipfile listing time.
std::optional<double> pythonListing(const QString& python, const QString& archive, int rounds,
                                    const QString& scratch) {
    const char* script = R"(import sys, time, zipfile
path, n = sys.argv[1], int(sys.argv[2])
def once():
    t = time.perf_counter()
    with zipfile.ZipFile(path) as z:
        z.infolist()
    return time.perf_counter() - t
once()
ts = sorted(once() for _ in range(n))
print(ts[len(ts) // 2])
)";
    return pythonSeconds(python, script, {archive, QString::number(rounds)}, scratch);
}

std::size_t leafCount(const TensorDict& td) {
    const Value report = describe(td, {});
    const Value* leaves = report.find("leaves");
    return leaves && leaves->isList() ? leaves->asList().size() : 0;
}

// One line of the goals table; value < 0 means skipped, no goalText means for information.
void goal(const char* what, double value, const char* unit, const char* goalText, bool met,
          const char* skippedWhy = "") {
    if (value < 0)
        std::printf("  %-44s %10s %-6s %-34s skipped%s\n", what, "-", "", goalText, skippedWhy);
    else if (!*goalText)
        std::printf("  %-44s %10.2f %s\n", what, value, unit);
    else
        std::printf("  %-44s %10.2f %-6s %-34s %s\n", what, value, unit, goalText,
                    met ? "ok" : "MISSED");
}

// Case 5: hashing a leaf of `images` 1024 x 1024 images, stored and deflated.
void hashing(const QString& dir, int rounds, const QString& tdstudio, int images) {
    const QString openssl = bench::findToolOrSkip("openssl"), pigz = bench::findToolOrSkip("pigz"),
                  env = bench::findToolOrSkip("env");
    if (tdstudio.isEmpty())
        return;
    QElapsedTimer timer;
    timer.start();
    const QString leafDir = dir + "/hash-dir", stored = dir + "/hash-stored.tdz",
                  deflated = dir + "/hash-deflate.tdz", plain = dir + "/hash-deflate-plain.tdz",
                  gz = dir + "/hash-leaf.gz";
    {
        TensorDict td = TensorDict::create();
        td.mutableRoot().addBytes("x", DType::UInt8, {images, 1024, 1024},
                                  ownedBytes(bench::imageLikeBytes(images, 1024)));
        SaveOptions o;
        o.numThreads = 2;
        save(td, leafDir.toStdString(), o);
        o.archive = true;
        save(td, stored.toStdString(), o);
        o.compression = kZipDeflate;
        save(td, deflated.toStdString(), o);
        o.deflateAccessPoints = false;
        save(td, plain.toStdString(), o);
    }
    if (!pigz.isEmpty())
        runProcess({pigz, "-6", "-p", "2", "-c", leafDir + "/x.memmap"}, gz);
    std::printf(
        "\nwrote case 5: %d MiB uint8 leaf, stored %.0f MB, deflated %.0f MB (%.0f MB "
        "without access points), gzip %.0f MB (%.1f s)\n",
        images, QFileInfo(stored).size() / 1e6, QFileInfo(deflated).size() / 1e6,
        QFileInfo(plain).size() / 1e6, QFileInfo(gz).size() / 1e6, timer.nsecsElapsed() / 1e9);
    const auto run = [&](const QStringList& argv) {
        const ProcessRun r = processMedian(rounds, argv);
        return r.ok ? r.seconds : -1.0;
    };
    const double infoStored = run({tdstudio, "--info", "--sha256", stored});
    const double dgst =
        openssl.isEmpty() ? -1 : run({openssl, "dgst", "-sha256", leafDir + "/x.memmap"});
    const double infoDeflated = run({tdstudio, "--info", "--sha256", deflated});
    const double infoPlain = run({tdstudio, "--info", "--sha256", plain});
    const double zlibPath =
        env.isEmpty()
            ? -1
            : run({env, "TENSORDICT_INFLATE=zlib", tdstudio, "--info", "--sha256", plain});
    const double pigzDc = pigz.isEmpty() || !QFileInfo::exists(gz) ? -1 : run({pigz, "-dc", gz});
    const auto ms = [](double s) {
        return s < 0 ? QString("-") : QString::number(s * 1e3, 'f', 0);
    };
    std::printf("  %-60s %10s\n", "", "median ms");
    std::printf("  %-60s %10s\n", "tdstudio --info --sha256 stored.tdz",
                qPrintable(ms(infoStored)));
    std::printf("  %-60s %10s\n", "anchor: openssl dgst -sha256 x.memmap", qPrintable(ms(dgst)));
    std::printf("  %-60s %10s\n", "tdstudio --info --sha256 deflated.tdz (access points)",
                qPrintable(ms(infoDeflated)));
    std::printf("  %-60s %10s\n", "tdstudio --info --sha256 deflated.tdz (none)",
                qPrintable(ms(infoPlain)));
    std::printf("  %-60s %10s\n", "TENSORDICT_INFLATE=zlib tdstudio --info --sha256 plain",
                qPrintable(ms(zlibPath)));
    std::printf("  %-60s %10s\n", "anchor: pigz -dc x.gz > /dev/null", qPrintable(ms(pigzDc)));
    const auto ratio = [](double a, double b) { return a < 0 || b <= 0 ? -1.0 : a / b; };
    std::printf("\ncase 5 goals, %d MiB (speed ratios: anchor time / ours)\n", images);
    const double vsOpenssl = ratio(dgst, infoStored);
    goal("5: sha256 stored / openssl dgst", vsOpenssl, "x", ">= 0.8", vsOpenssl >= 0.8);
    const double vsPigz = ratio(pigzDc, infoDeflated), vsPigzPlain = ratio(pigzDc, infoPlain);
    goal("5: sha256 deflated (points) / pigz -dc", vsPigz, "x", ">= 2", vsPigz >= 2);
    goal("5: sha256 deflated (none) / pigz -dc", vsPigzPlain, "x", ">= 2", vsPigzPlain >= 2);
    const double vsZlib = ratio(zlibPath, infoDeflated);
    goal("5: sha256 deflated (points) / our zlib path", vsZlib, "x", ">= 2", vsZlib >= 2);
    const double vsZlibPlain = ratio(zlibPath, infoPlain);
    goal("5: sha256 deflated (none) / our zlib path", vsZlibPlain, "x", ">= 2", vsZlibPlain >= 2);
    for (const QString& path : {stored, deflated, plain, gz})
        QFile::remove(path);
    QDir(leafDir).removeRecursively();
}

}  // namespace

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    const bench::Args args = bench::parseArgs(app.arguments(), 5, true);
    const QTemporaryDir tmp((args.scratch.isEmpty() ? QDir::tempPath() : args.scratch) +
                            "/bench-open-XXXXXX");
    if (!tmp.isValid()) {
        std::fprintf(stderr, "bench_open: cannot create a scratch directory: %s\n",
                     qPrintable(tmp.errorString()));
        return 1;
    }
    const int rounds = args.rounds;

    // External programs; each missing one is skipped.
#ifdef TDSTUDIO_EXECUTABLE
    const QString tdstudio = findTool(TDSTUDIO_EXECUTABLE);
#else
    const QString tdstudio;
#endif
    if (!args.runs('O')) {
        if (args.runs('H'))
            for (const int images : {96, 1024})
                hashing(tmp.path(), rounds, tdstudio, images);
        return 0;
    }
    const QString python = findTool("/usr/bin/python3"), unzip = findTool("unzip"),
                  trueBin = findTool("/bin/true");
    const std::pair<const char*, QString> tools[] = {{"tdstudio", tdstudio},
                                                     {"/usr/bin/python3", python},
                                                     {"unzip", unzip},
                                                     {"/bin/true", trueBin}};
    for (const auto& [name, path] : tools)
        if (path.isEmpty())
            std::printf("skipped: %s not installed\n", name);

    // Process start-up first, while we are small: a child's peak RSS includes what it inherits.
    ProcessRun version, bare;
    if (!tdstudio.isEmpty())
        version = processMedian(rounds, {tdstudio, "--version"});
    if (!trueBin.isEmpty())
        bare = processMedian(rounds, {trueBin});

    // Write the data: small and (unless --quick) large, as a directory and a stored .tdz.
    struct Payload {
        const char* name;
        std::int64_t floatsPerLeaf;
        QString dir, tdz;
    };
    std::vector<Payload> payloads = {{"small", 16, {}, {}}};
    if (!args.quick)
        payloads.push_back({"large", 16000, {}, {}});
    for (Payload& p : payloads) {
        QElapsedTimer timer;
        timer.start();
        p.dir = tmp.path() + "/" + p.name;
        p.tdz = tmp.path() + "/" + p.name + ".tdz";
        const TensorDict td = makeTensorDict(p.floatsPerLeaf);
        SaveOptions o;
        o.numThreads = 2;
        save(td, p.dir.toStdString(), o);
        o.archive = true;
        o.compression = kZipStored;
        save(td, p.tdz.toStdString(), o);
        const double seconds = timer.nsecsElapsed() / 1e9;
        const std::size_t dirLeaves = leafCount(load(p.dir.toStdString())),
                          tdzLeaves = leafCount(load(p.tdz.toStdString()));
        std::printf(
            "wrote %s: %d leaves x %lld floats, .tdz %.1f MB (%.1f s); leaves loaded back: "
            "directory %zu, .tdz %zu\n",
            p.name, kGroups * kLeavesPerGroup, static_cast<long long>(p.floatsPerLeaf),
            QFileInfo(p.tdz).size() / 1e6, seconds, dirLeaves, tdzLeaves);
    }

    // Measure. -1 marks what was not measured.
    struct Times {
        double loadDir = -1, loadTdz = -1, python = -1, info = -1, unzip = -1;
        double infoVsUnzip = -1;  // the median of each round's ratio
    };
    std::vector<Times> times(payloads.size());
    for (std::size_t i = 0; i < payloads.size(); ++i) {
        const Payload& p = payloads[i];
        Times& t = times[i];
        t.loadDir = timeMedian(rounds, [&] { load(p.dir.toStdString()); });
        t.loadTdz = timeMedian(rounds, [&] { load(p.tdz.toStdString()); });
        if (!python.isEmpty())
            t.python = pythonListing(python, p.tdz, rounds, tmp.path()).value_or(-1);
        // In turn, round by round: the machine's drift within a run is larger than the goal's
        // margin.
        if (!tdstudio.isEmpty() && !unzip.isEmpty()) {
            if (const ProcessPair r =
                    processPairMedian(rounds, {tdstudio, "--info", p.tdz}, {unzip, "-l", p.tdz});
                r.ratio > 0) {
                t.info = r.first.seconds;
                t.unzip = r.second.seconds;
                t.infoVsUnzip = r.ratio;
            }
        } else if (!tdstudio.isEmpty()) {  // no anchor: our time alone
            if (const ProcessRun r = processMedian(rounds, {tdstudio, "--info", p.tdz}); r.ok)
                t.info = r.seconds;
        }
    }

    // Checkpoints: written and torch.load-ed by Python, then load()-ed here.
    struct Checkpoint {
        const char* name;
        std::int64_t floats;
        double load = -1, torchLoad = -1;
    };
    std::vector<Checkpoint> checkpoints = {{"small", 16}};
    if (!args.quick)
        checkpoints.push_back({"1 GiB", 262144});
    if (!python.isEmpty()) {
        for (Checkpoint& c : checkpoints) {
            const QString pt = tmp.path() + "/checkpoint-" + QString::number(c.floats) + ".pt";
            c.torchLoad = torchCheckpoint(python, pt, c.floats, rounds, tmp.path()).value_or(-1);
            if (c.torchLoad < 0) {
                std::printf("skipped: torch.save / torch.load failed (no torch?)\n");
                break;
            }
            std::printf(
                "wrote checkpoint %s: 1000 float32 tensors x %lld, %.1f MB; leaves "
                "loaded back: %zu\n",
                c.name, static_cast<long long>(c.floats), QFileInfo(pt).size() / 1e6,
                leafCount(load(pt.toStdString())));
            c.load = timeMedian(rounds, [&] { load(pt.toStdString()); });
            QFile::remove(pt);
        }
    }

    // Report: medians in ms, then the ratios and goals.
    auto ms = [](double s) { return s < 0 ? QString("-") : QString::number(s * 1e3, 'f', 2); };
    std::printf("\nbench_open: %d float32 leaves (%d groups x %d), medians of %d rounds, ms\n",
                kGroups * kLeavesPerGroup, kGroups, kLeavesPerGroup, rounds);
    std::printf("  %-46s %16s %16s\n", "", "small", args.quick ? "large (--quick)" : "large");
    auto row = [&](const char* name, double Times::*field) {
        std::printf("  %-46s %16s %16s\n", name, qPrintable(ms(times[0].*field)),
                    qPrintable(times.size() > 1 ? ms(times[1].*field) : QString("-")));
    };
    row("load() directory (in process)", &Times::loadDir);
    row("load() stored .tdz (in process)", &Times::loadTdz);
    row("anchor: python zipfile listing (inside Python)", &Times::python);
    row("tdstudio --info .tdz > /dev/null (process)", &Times::info);
    row("anchor: unzip -l .tdz > /dev/null (process)", &Times::unzip);
    std::printf("  %-46s %16s %16s\n", "load() torch checkpoint (in process)",
                qPrintable(ms(checkpoints[0].load)),
                qPrintable(checkpoints.size() > 1 ? ms(checkpoints[1].load) : QString("-")));
    std::printf("  %-46s %16s %16s\n", "anchor: torch.load (inside Python)",
                qPrintable(ms(checkpoints[0].torchLoad)),
                qPrintable(checkpoints.size() > 1 ? ms(checkpoints[1].torchLoad) : QString("-")));
    std::printf("  %-46s %16s   peak RSS %.1f MB\n", "anchor: /bin/true (process)",
                qPrintable(ms(bare.ok ? bare.seconds : -1)), bare.peakMB);
    std::printf("  %-46s %16s   peak RSS %.1f MB\n", "tdstudio --version (process)",
                qPrintable(ms(version.ok ? version.seconds : -1)), version.peakMB);

    auto ratio = [](double a, double b) { return a < 0 || b <= 0 ? -1.0 : a / b; };
    const Times& s = times[0];
    const Times large = times.size() > 1 ? times[1] : Times{};
    const char* quick = args.quick ? " (--quick)" : "";
    std::printf("\nratios and goals\n");
    const double tdzVsPython = ratio(s.loadTdz, s.python);
    goal("load(.tdz small) / python zipfile listing", tdzVsPython, "x", "< 1 (faster than zipfile)",
         tdzVsPython < 1);
    const double tdzSize = ratio(large.loadTdz, s.loadTdz);
    goal("load(.tdz large) / load(.tdz small)", tdzSize, "x", "<= 1.2 (size makes no difference)",
         tdzSize <= 1.2, quick);
    const double dirSize = ratio(large.loadDir, s.loadDir);
    goal("load(dir large) / load(dir small)", dirSize, "x", "<= 1.2 (size makes no difference)",
         dirSize <= 1.2, quick);
    const double infoSmall = s.infoVsUnzip, infoLarge = large.infoVsUnzip;
    goal("tdstudio --info / unzip -l (small)", infoSmall, "x", "<= 1", infoSmall <= 1);
    goal("tdstudio --info / unzip -l (large)", infoLarge, "x", "<= 1", infoLarge <= 1, quick);
    goal("load(directory small)", s.loadDir * 1e3, "ms", "< 35 ms", s.loadDir < 0.035);
    goal("load(directory large)", large.loadDir < 0 ? -1 : large.loadDir * 1e3, "ms", "< 35 ms",
         large.loadDir < 0.035, quick);
    goal("tdstudio --version time", version.ok ? version.seconds * 1e3 : -1, "ms", "< 60 ms",
         version.seconds < 0.060);
    goal("tdstudio --version peak RSS", version.ok ? version.peakMB : -1, "MB", "<= 20 MB",
         version.peakMB <= 20);
    const Checkpoint& cs = checkpoints[0];
    const Checkpoint cl = checkpoints.size() > 1 ? checkpoints[1] : Checkpoint{"", 0};
    const double torchSmall = ratio(cs.torchLoad, cs.load),
                 torchLarge = ratio(cl.torchLoad, cl.load);
    goal("torch.load / load(checkpoint 1 GiB)", torchLarge, "x", ">= 10", torchLarge >= 10, quick);
    const double checkpointSize = ratio(cl.load, cs.load);
    goal("load(ckpt 1 GiB) / load(ckpt small)", checkpointSize, "x",
         "<= 1.2 (size makes no difference)", checkpointSize <= 1.2, quick);
    goal("torch.load / load(checkpoint small) (info)", torchSmall, "x", "", true);
    goal("python listing / load(.tdz small) (info)", ratio(s.python, s.loadTdz), "x", "", true);
    goal("unzip -l / /bin/true (info)", ratio(s.unzip, bare.seconds), "x", "", true);
    if (!args.quick && args.runs('H'))
        for (const int images : {96, 1024})
            hashing(tmp.path(), rounds, tdstudio, images);
    return 0;
}
