// Writes tdstudio's demo dataset with libtensordict's own save(): a small
// labelled image dataset with features, audio-like signals, a nested dict
// and a string, the kind of data tdstudio is for. With a second path it
// also writes the same dataset as a later run left it (a few images and
// rewards changed, a key dropped, one added), to try the comparison on:
//   tdstudio demo.tdz --compare demo-next.tdz
// usage: make_demo OUTPUT.tdz [NEXT.tdz]

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "tensordict/save.h"

using namespace tensordict;

namespace {

constexpr int kCount = 300;

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2 && argc != 3) {
        std::fprintf(stderr, "usage: make_demo OUTPUT.tdz [NEXT.tdz]\n");
        return 2;
    }
    std::mt19937 rng(2026);
    std::normal_distribution<double> noise(0.0, 1.0);
    std::uniform_int_distribution<int> label(0, 9);

    std::vector<std::int64_t> labels(kCount);
    for (auto& l : labels)
        l = label(rng);

    // Grayscale 28x28: a ring whose radius and thickness follow the label, with noise.
    std::vector<std::uint8_t> images(std::size_t(kCount) * 28 * 28);
    for (int n = 0; n < kCount; ++n) {
        const double radius = 4 + labels[n] * 0.9, cx = 13.5 + noise(rng), cy = 13.5 + noise(rng);
        for (int y = 0; y < 28; ++y)
            for (int x = 0; x < 28; ++x) {
                const double d = std::hypot(x - cx, y - cy);
                const double v = 255 * std::exp(-std::pow((d - radius) / 1.6, 2)) + 12 * noise(rng);
                images[(std::size_t(n) * 28 + y) * 28 + x] =
                    static_cast<std::uint8_t>(std::clamp(v, 0.0, 255.0));
            }
    }
    // Colour 32x32x3: gradients and a disc whose hue follows the label.
    std::vector<std::uint8_t> rgb(std::size_t(kCount) * 32 * 32 * 3);
    for (int n = 0; n < kCount; ++n) {
        const double hue = labels[n] / 10.0 * 6.283;
        for (int y = 0; y < 32; ++y)
            for (int x = 0; x < 32; ++x) {
                const bool disc = std::hypot(x - 16, y - 16) < 9 + (n % 5);
                for (int c = 0; c < 3; ++c) {
                    const double base =
                        disc ? 127 + 127 * std::cos(hue + c * 2.094) : 8 * x + c * 30 - y * 2;
                    rgb[((std::size_t(n) * 32 + y) * 32 + x) * 3 + c] =
                        static_cast<std::uint8_t>(std::clamp(base + 6 * noise(rng), 0.0, 255.0));
                }
            }
    }
    // Features with some missing values.
    std::vector<float> features(std::size_t(kCount) * 16);
    for (std::size_t i = 0; i < features.size(); ++i)
        features[i] = i % 37 == 5 ? NAN : static_cast<float>(labels[i / 16] * 0.5 + noise(rng));
    features[123] = INFINITY;
    // Audio-like signals: chirps.
    std::vector<float> audio(std::size_t(kCount) * 4096);
    for (int n = 0; n < kCount; ++n)
        for (int t = 0; t < 4096; ++t) {
            const double s = t / 4096.0;
            audio[std::size_t(n) * 4096 + t] = static_cast<float>(
                std::sin(6.283 * (20 + 5 * labels[n]) * s * (1 + s)) * std::exp(-2 * s) +
                0.05 * noise(rng));
        }
    std::vector<double> reward(kCount);
    std::vector<std::int32_t> step(kCount);
    std::vector<std::uint8_t> done(kCount);
    for (int n = 0; n < kCount; ++n) {
        reward[n] = std::sin(n / 15.0) + 0.1 * noise(rng);
        step[n] = n % 50;
        done[n] = n % 50 == 49;
    }

    // The later run: a square patched into the first colour images, some
    // rewards re-estimated, "done" dropped and a priority added.
    auto writeDemo = [&](const char* path, bool later) {
        std::vector<std::uint8_t> rgbNow = rgb;
        std::vector<double> rewardNow = reward;
        if (later) {
            for (int n = 0; n < 3; ++n)
                for (int y = 20; y < 26; ++y)
                    for (int x = 20; x < 28; ++x)
                        rgbNow[((std::size_t(n) * 32 + y) * 32 + x) * 3] = 255;
            for (int n = 100; n < 110; ++n)
                rewardNow[n] += 0.25;
        }
        TensorDict td = TensorDict::create({kCount});
        Node& root = td.mutableRoot();
        root.addBytes("images", DType::UInt8, {kCount, 28, 28}, ownedBytes(images));
        root.addBytes("rgb", DType::UInt8, {kCount, 32, 32, 3}, ownedBytes(std::move(rgbNow)));
        root.addBytes("labels", DType::Int64, {kCount}, ownedBytes(labels));
        root.addBytes("features", DType::Float32, {kCount, 16}, ownedBytes(features));
        root.addBytes("audio", DType::Float32, {kCount, 4096}, ownedBytes(audio));
        Node& episode = root.addTensorDict("episode");
        episode.addBytes("reward", DType::Float64, {kCount}, ownedBytes(std::move(rewardNow)));
        episode.addBytes("step", DType::Int32, {kCount}, ownedBytes(step));
        if (!later)
            episode.addBytes("done", DType::Bool, {kCount}, ownedBytes(done));
        else
            episode.addBytes("priority", DType::Float32, {kCount},
                             ownedBytes(std::vector<float>(kCount, 1.0f)));
        root.addNonTensor(
            "description",
            Value("tdstudio demo: 300 synthetic samples (rings whose radius is the label, "
                  "colour discs, chirps) with features that miss some values"));
        SaveOptions options;
        options.atomic = true;
        save(td, path, options);
    };
    try {
        writeDemo(argv[1], false);
        if (argc == 3)
            writeDemo(argv[2], true);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "make_demo: %s\n", e.what());
        return 1;
    }
    return 0;
}
