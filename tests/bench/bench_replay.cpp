// Benchmark of TorchRL replay buffer dumps, printed with anchors from the
// same run (shared machines are noisy; ratios are not):
//
//   A. The first table screen of a 10 GB dump's valid rows: a wrapped
//      buffer of 500,000 Atari-like frames (uint8 [3, 84, 84]), its files
//      sparse. Opening the dump and filling the pages the table's first
//      screen needs (row 0, the oldest, at the cursor), as the preview
//      does, in this process. Goal < 100 ms; anchored by the same bytes
//      read from the file with pread (the floor).
//   B. `tdstudio --save DUMP OUT --valid-rows` of a 1 GiB wrapped buffer,
//      whole process, page cache warm, against `cp -r` of its storage/.
//      Goal >= 0.8x cp's speed.
//
// usage: bench_replay [--rounds N] [--cases AB] [SCRATCH_DIR]   (B needs ~3.2 GB of scratch)

#include <fcntl.h>
#include <unistd.h>

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <chrono>
#include <cstdio>

#include "bench_support.h"
#include "tensordict/leaf_pages.h"
#include "tensordict/tensordict.h"

using namespace tensordict;

namespace {

bool writeText(const QString& path, const QByteArray& text) {
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(text) == text.size();
}

// A dump as ReplayBuffer.dumps() leaves it: a storage of `capacity` rows of
// obs (uint8 `frame`), action (int64) and next/reward (float32 [1]),
// full and wrapped at `cursor`. `fill` writes obs's bytes (else sparse).
bool makeDump(const QString& dir, std::int64_t capacity, std::int64_t cursor,
              const std::vector<std::int64_t>& frame,
              const std::function<void(int fd, std::uint64_t bytes)>& fill) {
    std::uint64_t frameBytes = 1;
    QString frameShape;
    for (const std::int64_t d : frame) {
        frameBytes *= std::uint64_t(d);
        frameShape += ", " + QString::number(d);
    }
    if (!QDir().mkpath(dir + "/storage/next") || !QDir().mkpath(dir + "/writer"))
        return false;
    const QString cap = QString::number(capacity);
    const auto sized = [&](const QString& path, std::uint64_t bytes, bool filled) {
        const int fd = ::open(path.toLocal8Bit().constData(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0)
            return false;
        const bool ok = ::ftruncate(fd, off_t(bytes)) == 0;
        if (ok && filled && fill)
            fill(fd, bytes);
        ::close(fd);
        return ok;
    };
    const QString td = "\"_type\": \"<class 'tensordict._td.TensorDict'>\"";
    return sized(dir + "/storage/obs.memmap", frameBytes * std::uint64_t(capacity), true) &&
           sized(dir + "/storage/action.memmap", 8 * std::uint64_t(capacity), false) &&
           sized(dir + "/storage/next/reward.memmap", 4 * std::uint64_t(capacity), false) &&
           writeText(dir + "/storage/meta.json",
                     QString("{\"obs\": {\"device\": \"cpu\", \"shape\": [%1%2], \"dtype\": "
                             "\"torch.uint8\", \"is_nested\": false}, \"action\": {\"device\": "
                             "\"cpu\", \"shape\": [%1], \"dtype\": \"torch.int64\", \"is_nested\": "
                             "false}, \"next\": {\"type\": \"TensorDict\"}, \"shape\": [%1], "
                             "\"device\": \"cpu\", %3}")
                         .arg(cap, frameShape, td)
                         .toUtf8()) &&
           writeText(dir + "/storage/next/meta.json",
                     QString("{\"reward\": {\"device\": \"cpu\", \"shape\": [%1, 1], \"dtype\": "
                             "\"torch.float32\", \"is_nested\": false}, \"shape\": [%1], "
                             "\"device\": \"cpu\", %2}")
                         .arg(cap, td)
                         .toUtf8()) &&
           writeText(dir + "/storage/storage_metadata.json",
                     QString("{\"metadata\": {}, \"is_pytree\": false, \"len\": %1}")
                         .arg(cap)
                         .toUtf8()) &&
           writeText(dir + "/writer/metadata.json", QString("{\"cursor\": %1, \"write_count\": %2}")
                                                        .arg(cursor)
                                                        .arg(capacity * 3 + cursor)
                                                        .toUtf8()) &&
           writeText(dir + "/buffer_metadata.json", "{\"batch_size\": 256}");
}

}  // namespace

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    const bench::Args args = bench::parseArgs(app.arguments(), 5, false);
    const bench::Scratch scratch =
        bench::makeScratch("bench_replay", args.scratch,
                           args.runs('B') ? 3400ull << 20 : 64ull << 20, "a SCRATCH_DIR");
    if (!scratch.dir)
        return 1;
    bool ok = true;
    std::printf("bench_replay: %d rounds\n", args.rounds);

    if (args.runs('A')) {
        constexpr std::int64_t kCapacity = 500000, kCursor = 123457;
        const std::vector<std::int64_t> frame = {3, 84, 84};
        const std::uint64_t frameBytes = 3 * 84 * 84;
        const QString dump = scratch.path() + "/atari";
        ok = makeDump(dump, kCapacity, kCursor, frame, {}) && ok;
        // The table's first screen of obs: the first 84 x 84 plane of the oldest row.
        const std::uint64_t screen = 84 * 84;
        std::vector<double> opened, shown;
        for (int round = 0; round <= args.rounds; ++round) {
            QElapsedTimer timer;
            timer.start();
            const auto td = std::make_shared<TensorDict>(load((dump).toStdString()));
            const double open = double(timer.nsecsElapsed()) / 1e6;
            const Node* obs = td->root().child("obs");
            const auto pages = LeafPages::create(td, *obs);
            const auto hold = pages->require(0, screen);
            if (round == 0)
                continue;  // warm-up
            opened.push_back(open);
            shown.push_back(double(timer.nsecsElapsed()) / 1e6);
        }
        // The floor: the same bytes read from the file where they are.
        const double floor = bench::timeMedian(args.rounds, [&] {
            const int fd =
                ::open((dump + "/storage/obs.memmap").toLocal8Bit().constData(), O_RDONLY);
            std::vector<char> buffer(screen);
            if (fd < 0 ||
                ::pread(fd, buffer.data(), screen, off_t(kCursor * frameBytes)) != ssize_t(screen))
                std::printf("  (pread of the floor failed)\n");
            ::close(fd);
        });
        const double ms = bench::median(shown);
        std::printf(
            "A. first table screen of a 10.6 GB dump's valid rows (500,000 frames, wrapped)\n"
            "  open %.1f ms, first screen shown %.1f ms (goal < 100: %s)\n"
            "  pread of the same bytes %.3f ms\n",
            bench::median(opened), ms, ms < 100 ? "ok" : "MISSED", floor * 1e3);
    }

    if (args.runs('B')) {
        const QString cp = bench::findToolOrSkip("cp");
        if (cp.isEmpty())
            return 1;
        constexpr std::int64_t kCapacity = 262144, kCursor = 87381;  // 1 GiB of 4 KiB frames
        const QString dump = scratch.path() + "/wrapped";
        bench::XorShift random;
        ok = makeDump(dump, kCapacity, kCursor, {4096},
                      [&](int fd, std::uint64_t bytes) {
                          std::vector<std::uint64_t> chunk((8u << 20) / 8);
                          for (std::uint64_t at = 0; at < bytes; at += 8u << 20) {
                              for (auto& x : chunk)
                                  x = random();
                              if (::pwrite(fd, chunk.data(), chunk.size() * 8, off_t(at)) < 0)
                                  return;
                          }
                      }) &&
             ok;
        const QString out = scratch.path() + "/valid_rows", copy = scratch.path() + "/copy";
        const bench::ProcessRun ours = bench::processMedian(
            args.rounds, {TDSTUDIO_EXECUTABLE, "--save", dump, out, "--valid-rows"},
            [&] { QDir(out).removeRecursively(); });
        const bench::ProcessRun anchor =
            bench::processMedian(args.rounds, {cp, "-r", dump + "/storage", copy},
                                 [&] { QDir(copy).removeRecursively(); });
        const double ratio = ours.seconds > 0 ? anchor.seconds / ours.seconds : 0;
        std::printf(
            "B. --save --valid-rows of a 1 GiB wrapped buffer (whole process)\n"
            "  tdstudio %.3f s, cp -r of its storage %.3f s\n"
            "  ratio %.2fx cp's speed (goal >= 0.8x: %s)\n",
            ours.seconds, anchor.seconds, ratio, ratio >= 0.8 ? "ok" : "MISSED");
        ok = ok && ours.ok && anchor.ok;
    }
    return ok ? 0 : 1;
}
