// Benchmarks of checkpoints at training scale, printed as medians and as
// ratios against anchors measured in the same run (shared machines are
// noisy; ratios are not). Data from tests/bench/make_scale.py:
//   S. a Hugging Face folder of 48 safetensors shards, 72,000 tensors (data
//      sparse): whole-process `tdstudio --info FOLDER` against make_scale.py
//      read-sharded (json of the index, each shard's header by struct +
//      json), time and peak RSS; bytes read per shard in process (goals:
//      <= 0.5x the baseline's time, < 2 MiB a shard)
//   M. a DCP .metadata of 100,000 chunks: load() in process against
//      pickle.load with stand-in classes inside /usr/bin/python3 (goal: >= 3x
//      faster)
//   H. sha256 of a 1 GiB tensor assembled from 8 chunks in 8 .distcp files,
//      whole-process `tdstudio --info --sha256`, against `openssl dgst
//      -sha256` of the same bytes in one file (goal >= 0.8x)
//   C. a 1 GiB 4-rank DCP directory converted to one .safetensors by
//      `tdstudio --save`, against `cp` of its .distcp files (goals >= 0.8x,
//      peak RSS < 300 MB)
//   F. statistics of a 1 GiB F8_E4M3 leaf, `tdstudio --info --stats`, against
//      `openssl dgst -sha256` of the same file (goal >= 0.8x)
// Each measurement gets one untimed warm-up run; the files are in the page cache.
// usage: bench_scale [--rounds N] [--cases SMHCF] [SCRATCH_DIR] (needs /usr/bin/python3
// with torch and numpy for the DCP cases, and about 3 GiB free)

#include <unistd.h>

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <cstdio>
#include <functional>

#include "bench_support.h"
#include "tensordict/report.h"
#include "tensordict/tensordict.h"

using namespace tensordict;
using bench::median;
using bench::ProcessRun;
using bench::runProcess;

namespace {

const QString kPython = "/usr/bin/python3";
const QString kMakeScale = TDSTUDIO_BENCH_DIR "/make_scale.py";

// Bytes this process has read (read(2) and friends) so far.
std::uint64_t bytesRead() {
    QFile io("/proc/self/io");
    if (!io.open(QIODevice::ReadOnly))
        return 0;
    for (const QByteArray& line : io.readAll().split('\n'))
        if (line.startsWith("rchar:"))
            return line.mid(6).trimmed().toULongLong();
    return 0;
}

bool make(const QStringList& args) {
    const ProcessRun run = runProcess(QStringList{kPython, kMakeScale} + args);
    if (!run.ok)
        std::printf("skipped: make_scale.py %s failed\n", qPrintable(args.join(' ')));
    return run.ok;
}

void line(const char* what, double ours, double anchor, const char* anchorName) {
    std::printf("  %-52s %8.3f s   %s %8.3f s   ratio %.2fx\n", what, ours, anchorName, anchor,
                anchor > 0 && ours > 0 ? anchor / ours : 0.0);
}

}  // namespace

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    const bench::Args args = bench::parseArgs(app.arguments(), 3, false);
    const bench::Scratch scratch =
        bench::makeScratch("bench_scale", args.scratch, 3ull << 30, "pass a SCRATCH_DIR");
    if (scratch.path().isEmpty())
        return 1;
    const QString dir = scratch.path();
    const QString tdstudio = TDSTUDIO_EXECUTABLE;
    std::printf("bench_scale: %d rounds, scratch %s\n", args.rounds, qPrintable(dir));

    if (args.runs('S') && make({"sharded", dir + "/sharded"})) {
        const QString folder = dir + "/sharded";
        // In turn, round by round (each takes a few tenths of a second; the
        // machine's speed drifts by more than that within a run).
        const bench::ProcessPair pair =
            bench::processPairMedian(args.rounds, {tdstudio, "--info", folder},
                                     {kPython, kMakeScale, "read-sharded", folder});
        const ProcessRun &ours = pair.first, &python = pair.second;
        const std::uint64_t before = bytesRead();
        const TensorDict td = load(folder.toStdString());
        const std::uint64_t read = bytesRead() - before;
        std::printf("S. a folder of 48 shards, %zu tensors\n", td.root().children().size());
        line("tdstudio --info FOLDER (whole process)", ours.seconds, python.seconds,
             "python json+struct");
        if (pair.ratio > 0)
            std::printf("  the median of each round's ratio: %.2fx (goal >= 2x)\n", 1 / pair.ratio);
        std::printf(
            "  read %.2f MiB in all, %.3f MiB a shard (goal < 2); peak RSS %.0f MB, "
            "python %.0f MB\n",
            read / 1048576.0, read / 48.0 / 1048576.0, ours.peakMB, python.peakMB);
    }

    if (args.runs('H') && make({"dcp", dir + "/dcp8", "8", "1024"})) {
        const QString folder = dir + "/dcp8";
        const QString single = dir + "/dcp8.safetensors";
        runProcess({tdstudio, "--save", folder, single});
        const ProcessRun ours =
            bench::processMedian(args.rounds, {tdstudio, "--info", "--sha256", folder});
        const ProcessRun openssl = bench::processMedian(
            args.rounds, {bench::findTool("openssl"), "dgst", "-sha256", single});
        std::printf("H. sha256 of a 1 GiB tensor in 8 chunks of 8 .distcp files\n");
        line("tdstudio --info --sha256 (goal >= 0.8x)", ours.seconds, openssl.seconds,
             "openssl one file");
        QFile::remove(single);
        QDir(folder).removeRecursively();
    }

    if (args.runs('C') && make({"dcp", dir + "/dcp4", "4", "1024"})) {
        const QString folder = dir + "/dcp4";
        const QString out = dir + "/dcp4.safetensors";
        // Each run writes new files with no dirty pages left by the last:
        // neither pays for freeing the other's output or for its writeback.
        const auto fresh = [&] {
            QFile::remove(out);
            QDir(dir + "/copy").removeRecursively();
            QDir(dir).mkpath("copy");
            ::sync();
        };
        const ProcessRun ours =
            bench::processMedian(args.rounds, {tdstudio, "--save", folder, out}, fresh);
        QStringList cp{bench::findTool("cp")};
        for (const QString& f : QDir(folder).entryList({"*.distcp"}))
            cp << folder + "/" + f;
        cp << dir + "/copy/";
        const ProcessRun copy = bench::processMedian(args.rounds, cp, fresh);
        std::printf("C. a 1 GiB 4-rank DCP directory to one .safetensors\n");
        line("tdstudio --save (goal >= 0.8x)", ours.seconds, copy.seconds, "cp .distcp");
        std::printf(
            "  peak RSS %.0f MB, the highest of the runs (goal < 300; mapped chunks count)\n",
            ours.peakMB);
    }
    if (args.runs('F') && make({"float8", dir + "/float8.safetensors", "1024"})) {
        const QString file = dir + "/float8.safetensors";
        const ProcessRun ours =
            bench::processMedian(args.rounds, {tdstudio, "--info", "--stats", file});
        const ProcessRun openssl = bench::processMedian(
            args.rounds, {bench::findTool("openssl"), "dgst", "-sha256", file});
        std::printf("F. statistics of a 1 GiB F8_E4M3 leaf\n");
        line("tdstudio --info --stats (goal >= 0.8x)", ours.seconds, openssl.seconds,
             "openssl sha256");
        QFile::remove(file);
    }

    // Last: M loads in this process, and a child's peak RSS (S's, C's) would
    // count the memory it inherits from this one at fork().
    if (args.runs('M') && make({"metadata", dir + "/metadata"})) {
        const QString folder = dir + "/metadata";
        const double ours =
            bench::timeMedian(args.rounds, [&] { (void)load(folder.toStdString()); });
        // Inside Python: pickle.load alone, after the stand-in classes are imported.
        const QString out = dir + "/pickle-time.txt";
        std::vector<double> python;
        for (int i = 0; i <= args.rounds; ++i) {
            runProcess({kPython, "-c",
                        "import sys, time, pickle\n"
                        "sys.path.insert(0, sys.argv[2])\n"
                        "import make_dcp\n"
                        "t = time.perf_counter()\n"
                        "pickle.load(open(sys.argv[1], 'rb'))\n"
                        "print(time.perf_counter() - t)\n",
                        folder + "/.metadata", TDSTUDIO_SUPPORT_DIR},
                       out);
            QFile f(out);
            if (i > 0 && f.open(QIODevice::ReadOnly))
                python.push_back(f.readAll().trimmed().toDouble());
        }
        std::printf("M. a DCP .metadata of 100,000 chunks (%.1f MB)\n",
                    QFileInfo(folder + "/.metadata").size() / 1e6);
        line("load() in process (goal >= 3x)", ours, median(python), "pickle.load");
    }
    return 0;
}
