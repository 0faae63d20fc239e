// Benchmarks of the tensor preview, printed as ratios against baselines
// measured in the same run (shared machines are noisy; ratios are not):
//   1. time to first paint of the table: a 4 GiB leaf vs a 4 KiB leaf (goal <= 2)
//   2. resident memory after scrolling to the end of the 4 GiB leaf (goal < 100 MiB above baseline)
//   3. statistics throughput on a 1 GiB float32 leaf vs a plain single-pass loop
//      (goal >= 0.5x with 1 thread, faster with 2)
// usage: bench_preview [SCRATCH_DIR]   (needs ~1 GiB of disk; the 4 GiB leaf is sparse)

#include <fcntl.h>
#include <unistd.h>

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>

#include "statistics.h"
#include "tensor_table_model.h"
#include "tensor_table_view.h"
#include "tensordict/tensordict.h"

using namespace tensordict;

namespace {

double residentMiB() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("VmRSS:", 0) == 0)
            return std::stod(line.substr(6)) / 1024.0;
    return -1;
}

void writeLeaf(const QString& dir, std::int64_t count, bool randomData) {
    QDir().mkpath(dir);
    const QByteArray meta =
        QString(
            R"({"x": {"device": "cpu", "shape": [%1], "dtype": "torch.float32", "is_nested": false}, "shape": [], "device": "cpu", "_type": "<class 'tensordict._td.TensorDict'>"})")
            .arg(count)
            .toUtf8();
    QFile f(dir + "/meta.json");
    f.open(QIODevice::WriteOnly);
    f.write(meta);
    f.close();
    const int fd =
        ::open(QFile::encodeName(dir + "/x.memmap").constData(), O_CREAT | O_RDWR | O_TRUNC, 0644);
    if (!randomData) {
        if (::ftruncate(fd, count * 4) != 0)
            std::perror("ftruncate");
    } else {
        std::mt19937 rng(1);
        std::normal_distribution<float> normal(0, 1);
        std::vector<float> chunk(1 << 20);
        for (std::int64_t done = 0; done < count; done += std::int64_t(chunk.size())) {
            for (auto& v : chunk)
                v = normal(rng);
            if (::write(fd, chunk.data(), chunk.size() * 4) < 0)
                std::perror("write");
        }
    }
    ::close(fd);
}

// A leaf opened and painted in a table, as the preview shows it.
struct PaintedTable {
    explicit PaintedTable(const QString& dir)
        : td(load(dir.toStdString())), leaf(td.root().child("x")), view(&model) {
        model.setLeaf(leaf->dtype, leaf->bytes(), TensorSlice::defaultFor(leaf->shape));
        view.resize(900, 700);
        view.fitColumns();
        view.grab();
    }
    TensorDict td;
    const Node* leaf;
    TensorTableModel model;
    TensorTableView view;
};

// Seconds from opening the tensordict to the first painted table.
double firstPaint(const QString& dir) {
    QElapsedTimer t;
    t.start();
    PaintedTable table(dir);
    return t.nsecsElapsed() / 1e9;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QTemporaryDir tmp(argc > 1 ? QString(argv[1]) + "/bench-XXXXXX"
                               : QDir::tempPath() + "/bench-XXXXXX");
    const QString small = tmp.path() + "/small", big = tmp.path() + "/big",
                  real = tmp.path() + "/real";
    writeLeaf(small, 1024, true);                  // 4 KiB
    writeLeaf(big, std::int64_t(1) << 30, false);  // 4 GiB, sparse

    // 1. first paint
    std::vector<double> smallTimes, bigTimes;
    for (int i = 0; i < 7; ++i) {
        smallTimes.push_back(firstPaint(small));
        bigTimes.push_back(firstPaint(big));
    }
    const double s = median(smallTimes), b = median(bigTimes);
    std::printf("first paint: 4 KiB leaf %.2f ms, 4 GiB leaf %.2f ms, ratio %.2f (goal <= 2)\n",
                s * 1e3, b * 1e3, b / s);

    // 2. memory after scrolling to the end of the 4 GiB leaf
    {
        PaintedTable table(big);
        TensorTableView& view = table.view;
        const Node* x = table.leaf;
        const double before = residentMiB();
        for (int step = 1; step <= 100; ++step) {  // drag the scroll bar down to the end
            view.scrollTo(x->numel / 100 * step, 0);
            view.grab();
        }
        view.scrollToEnd();
        view.grab();
        std::printf(
            "resident memory: %.1f MiB before, %.1f MiB after scrolling to the end of 4 GiB: +%.1f "
            "MiB (goal < 100)\n",
            before, residentMiB(), residentMiB() - before);
    }

    // 3. statistics throughput vs a plain loop over the same mapped bytes
    const std::int64_t count = std::int64_t(1) << 28;  // 1 GiB of float32
    writeLeaf(real, count, true);
    const TensorDict td = load(real.toStdString());
    const Node* x = td.root().child("x");
    const LeafBytes bytes = x->bytes();
    const auto* data = reinterpret_cast<const float*>(bytes.data.get());
    volatile double sink = 0;
    auto plainLoop = [&] {
        float mn = INFINITY, mx = -INFINITY;
        double sum = 0;
        for (std::int64_t i = 0; i < count; ++i) {
            mn = std::min(mn, data[i]);
            mx = std::max(mx, data[i]);
            sum += data[i];
        }
        sink = sum + mn + mx;
    };
    plainLoop();  // bring the file into the page cache
    auto timeIt = [](auto f) {
        std::vector<double> t;
        for (int i = 0; i < 3; ++i) {
            QElapsedTimer timer;
            timer.start();
            f();
            t.push_back(timer.nsecsElapsed() / 1e9);
        }
        return median(t);
    };
    const double base = timeIt(plainLoop);
    auto stats = [&](int threads, int bins) {
        return timeIt([&] {
            StatisticsRequest r;
            r.bytes = bytes;
            r.numel = count;
            r.threads = threads;
            r.bins = bins;
            sink = computeStatistics(r).mean;
        });
    };
    const double gib = count * 4 / double(1 << 30);
    std::printf("plain single-pass loop (min, max, sum) over 1 GiB float32: %.2f GiB/s\n",
                gib / base);
    for (int bins : {0, 64}) {
        const double one = stats(1, bins), two = stats(2, bins);
        std::printf(
            "statistics %s: %.2f GiB/s with 1 thread (%.2fx), %.2f GiB/s with 2 threads (%.2fx) "
            "(goal >= 0.5x with 1 thread, faster with 2)\n",
            bins ? "with the 64-bin histogram pass"
                 : "summary (min, max, mean, std, NaN, Inf, zeros)",
            gib / one, base / one, gib / two, base / two);
    }
    return 0;
}
