// Benchmark of comparing checkpoints along training steps (`tdstudio
// --series`), printed with its anchor from the same run (shared machines
// are noisy; ratios are not): five 1 GiB safetensors checkpoints of 100
// float32 tensors, each step's weights a little moved from the last, one
// tensor frozen. Whole process, page cache warm, against `cat` of the five
// files to /dev/null. Goals: >= 0.8x cat's speed, peak RSS < 300 MB.
// usage: bench_series [--rounds N] [SCRATCH_DIR]   (needs ~5.2 GB of scratch)

#include <malloc.h>

#include <QCoreApplication>
#include <cstdio>

#include "bench_support.h"
#include "tensordict/save.h"
#include "tensordict/tensordict.h"

using namespace tensordict;

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    const bench::Args args = bench::parseArgs(app.arguments(), 3, false);
    const bench::Scratch scratch =
        bench::makeScratch("bench_series", args.scratch, 5600ull << 20, "a SCRATCH_DIR");
    if (!scratch.dir)
        return 1;
    const QString cat = bench::findToolOrSkip("cat");
    if (cat.isEmpty())
        return 1;

    constexpr int kSteps = 5, kTensors = 100;
    constexpr std::size_t kElements = (std::size_t(1) << 30) / 4 / kTensors;
    std::vector<std::vector<float>> weights(kTensors, std::vector<float>(kElements));
    bench::XorShift random;
    for (auto& w : weights)
        for (float& x : w)
            x = float(std::int64_t(random() % 2001) - 1000) / 1000.0f;
    QStringList files;
    for (int step = 0; step < kSteps; ++step) {
        TensorDict td = TensorDict::create();
        for (int t = 0; t < kTensors; ++t) {
            if (step > 0 && t != 0)  // tensor 0 frozen; the others move
                for (std::size_t i = t % 7; i < kElements; i += 7)
                    weights[t][i] += float(std::int64_t(random() % 201) - 100) / 1e5f;
            td.mutableRoot().addBytes("layers." + std::to_string(t) + ".weight", DType::Float32,
                                      {std::int64_t(kElements)},
                                      ownedBytes(std::vector<float>(weights[t])));
        }
        files << scratch.path() + "/step-" + QString::number(step * 1000) + ".safetensors";
        SaveOptions options;
        options.format = SaveFormat::Safetensors;
        save(td, files.back().toStdString(), options);
    }
    // Freed and given back before the runs: a child's peak RSS counts what
    // it shared with us at fork().
    std::vector<std::vector<float>>().swap(weights);
    malloc_trim(0);
    std::printf("bench_series: %d rounds, %d checkpoints of %d float32 tensors (1 GiB each)\n",
                args.rounds, kSteps, kTensors);
    const bench::ProcessRun ours =
        bench::processMedian(args.rounds, QStringList{TDSTUDIO_EXECUTABLE, "--series"} + files);
    const bench::ProcessRun anchor = bench::processMedian(args.rounds, QStringList{cat} + files);
    const double ratio = ours.seconds > 0 ? anchor.seconds / ours.seconds : 0;
    std::printf("  tdstudio --series (whole process) %.3f s, peak RSS %.0f MB (goal < 300: %s)\n",
                ours.seconds, ours.peakMB, ours.peakMB < 300 ? "ok" : "MISSED");
    std::printf("  cat of the five files             %.3f s\n", anchor.seconds);
    std::printf("  ratio %.2fx cat's speed (goal >= 0.8x: %s)\n", ratio,
                ratio >= 0.8 ? "ok" : "MISSED");
    return ours.ok && anchor.ok ? 0 : 1;
}
