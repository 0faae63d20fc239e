// Benchmark of reading tensordicts from a web server (the http transport)
// against nginx on loopback, started here, in one run (ratios are what to
// read: the machine is shared and noisy). Page cache warm.
//   1. `tdstudio --info` of a .tdz of 10,000 small leaves, a new process
//      each time: requests, bytes and time, against the same file local and
//      against `curl` of the whole file
//   2. a [32768, 32768] uint8 leaf (1 GiB, stored) in the window: the first
//      table screen (goal < 4 MiB fetched) and the fit image (goal <= 10% of
//      the leaf), against the leaf's size
//   3. sha256 of that leaf over HTTP against `curl -o /dev/null` of the
//      archive (goal >= 0.5x)
//   4. the two libraries the transport could be built on, libcurl (ours)
//      and Qt Network's QNetworkAccessManager, reading the same ranges of
//      that archive into memory over one kept-alive connection each: 256
//      ranges of 4 MiB in order (a streamed leaf) and 400 of 64 KiB 2.5 MiB
//      apart (a picture's sampled rows)
//   5. the same over s3:// from s3rver (an S3 server, from npm) on loopback,
//      requests signed: --info of the 10,000-leaf .tdz (requests, bytes and
//      time), and sha256 of the 1 GiB leaf against `curl --aws-sigv4` of the
//      object (goal >= 0.5x)
// usage: bench_remote [--rounds N] [SCRATCH_DIR]   (needs ~1.2 GB of scratch)
// Run it under `tc qdisc add dev lo root netem delay 20ms` too (every round
// trip then costs 40 ms), or, where the kernel has no netem, with
// TDSTUDIO_BENCH_DELAY_MS=20 (a proxy that delays the same way).

#include <curl/curl.h>
#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFileInfo>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QProcess>
#include <QSettings>
#include <QThreadPool>
#include <QUrl>

#include <cstdio>
#include <cstring>
#include <functional>

#include "bench_support.h"
#include "document_page.h"
#include "image_view.h"
#include "main_window.h"
#include "nginx_server.h"
#include "preview_panel.h"
#include "s3_server.h"
#include "tensor_table_model.h"
#include "tensordict/http.h"
#include "tensordict/report.h"
#include "tensordict/save.h"
#include "tensordict/tensordict.h"
#include "testsupport.h"

using namespace tensordict;
using bench::median;

namespace {

double medianSeconds(int rounds, const std::function<void()>& f) {
    std::vector<double> t;
    f();  // untimed warm-up
    for (int i = 0; i < rounds; ++i) {
        QElapsedTimer timer;
        timer.start();
        f();
        t.push_back(timer.nsecsElapsed() / 1e9);
    }
    return median(t);
}

void waitUntil(const std::function<bool()>& done) {
    while (!done())
        QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents, 50);
}

struct Shown {
    double ms = 0;
    std::uint64_t requests = 0, bytes = 0;
};

// Opens `url` in a 1200 x 800 window, shows leaf x as a table, then as an
// image: what each fetched, and its time (from the selection, from the switch).
std::pair<Shown, Shown> showInWindow(const QString& url) {
    QCoreApplication::setOrganizationName("tdstudio-bench");  // settings of its own
    QSettings().clear();
    MainWindow w;
    w.resize(1200, 800);
    w.show();
    bool loaded = false;
    QObject::connect(&w, &MainWindow::documentLoaded, [&] { loaded = true; });
    w.openPath(url);
    waitUntil([&] { return loaded; });
    PreviewPanel* preview = w.documentPage()->previewPanel();
    preview->setMode(PreviewPanel::TableMode);
    bool ready = false;
    QObject::connect(preview, &PreviewPanel::leafReady, [&] { ready = true; });
    std::pair<Shown, Shown> out;
    HttpCounters before = httpCounters();
    QElapsedTimer timer;
    timer.start();
    w.selectKeyPath({"x"});
    TensorTableModel* table = preview->tableModel();
    waitUntil([&] { return ready && !table->isFilling() && table->rowCount() > 0; });
    w.grab();
    out.first = {timer.nsecsElapsed() / 1e6, httpCounters().requests - before.requests,
                 httpCounters().bytes - before.bytes};
    before = httpCounters();
    timer.restart();
    preview->setMode(PreviewPanel::ImageMode);
    ImageView* image = preview->imageView();
    waitUntil([&] { return !image->isRendering() && !image->image().isNull(); });
    w.grab();
    out.second = {timer.nsecsElapsed() / 1e6, httpCounters().requests - before.requests,
                  httpCounters().bytes - before.bytes};
    QThreadPool::globalInstance()->waitForDone();
    return out;
}

struct Range {
    std::uint64_t offset, length;
};

// Case 4 with libcurl: one easy handle (its connection kept alive), each
// answer written into `buffer`. False if an answer was not the range.
bool curlRanges(const QString& url, const std::vector<Range>& ranges, std::vector<char>& buffer) {
    CURL* h = curl_easy_init();
    struct Sink {
        char* at;
        std::size_t room;
    } sink{};
    curl_easy_setopt(h, CURLOPT_URL, url.toUtf8().constData());
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &sink);
    curl_write_callback write = [](char* data, std::size_t size, std::size_t n, void* user) {
        auto* s = static_cast<Sink*>(user);
        const std::size_t bytes = std::min(size * n, s->room);
        std::memcpy(s->at, data, bytes);
        s->at += bytes, s->room -= bytes;
        return size * n;
    };
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, write);
    bool ok = true;
    for (const Range& r : ranges) {
        sink = {buffer.data(), buffer.size()};
        const std::string range =
            std::to_string(r.offset) + "-" + std::to_string(r.offset + r.length - 1);
        curl_easy_setopt(h, CURLOPT_RANGE, range.c_str());
        long status = 0;
        ok = ok && curl_easy_perform(h) == CURLE_OK &&
             curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status) == CURLE_OK && status == 206 &&
             std::size_t(sink.at - buffer.data()) == r.length;
    }
    curl_easy_cleanup(h);
    return ok;
}

// Case 4 with Qt Network: one QNetworkAccessManager, a request at a time
// (its event loop run until the reply finished), each answer read into `buffer`.
bool qtRanges(const QString& url, const std::vector<Range>& ranges, std::vector<char>& buffer) {
    QNetworkAccessManager manager;
    bool ok = true;
    for (const Range& r : ranges) {
        QNetworkRequest request{QUrl(url)};
        request.setRawHeader("Range", QByteArray("bytes=") + QByteArray::number(r.offset) + "-" +
                                          QByteArray::number(r.offset + r.length - 1));
        QNetworkReply* reply = manager.get(request);
        std::size_t got = 0;
        QObject::connect(reply, &QNetworkReply::readyRead, [&] {
            got += std::size_t(reply->read(buffer.data() + std::min(got, buffer.size()),
                                           qint64(buffer.size() - std::min(got, buffer.size()))));
        });
        QEventLoop loop;
        QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
        loop.exec();
        ok = ok && reply->error() == QNetworkReply::NoError &&
             reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt() == 206 &&
             got == r.length;
        reply->deleteLater();
    }
    return ok;
}

}  // namespace

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    const bench::Args args = bench::parseArgs(app.arguments(), 3, false);
    const bench::Scratch scratch =
        bench::makeScratch("bench_remote", args.scratch, 1300ull << 20, "a SCRATCH_DIR");
    if (!scratch.dir)
        return 1;
    const QString dir = scratch.path(), curl = bench::findToolOrSkip("curl");
    testsupport::NginxServer server(dir);
    if (!server.isRunning()) {
        std::printf("nginx: %s\n", qPrintable(server.error()));
        return 1;
    }
    // TDSTUDIO_BENCH_DELAY_MS: every byte delayed that long each way by a
    // proxy in front of nginx (tests/support/delay_proxy.py), where the
    // kernel has no netem for `tc qdisc ... netem delay`.
    QString base = server.url();
    QProcess proxy;
    if (const int delayMs = qEnvironmentVariableIntValue("TDSTUDIO_BENCH_DELAY_MS"); delayMs > 0) {
        proxy.start("python3",
                    {TDSTUDIO_TEST_SUPPORT_DIR "/delay_proxy.py",
                     QString::number(QUrl(server.url()).port()), QString::number(delayMs)});
        if (!proxy.waitForReadyRead(30000)) {
            std::printf("the delay proxy did not start\n");
            return 1;
        }
        base = "http://127.0.0.1:" + QString::fromUtf8(proxy.readLine()).trimmed();
        std::printf("every byte delayed %d ms each way (a round trip: %d ms)\n", delayMs,
                    2 * delayMs);
    }

    // 1. the tree of 10,000 leaves
    {
        TensorDict td = TensorDict::create();
        for (int i = 0; i < 10000; ++i)
            td.mutableRoot().addBytes(
                "group_" + std::to_string(i / 100) + "/leaf_" + std::to_string(i % 100),
                DType::Float32, {16}, ownedBytes(std::vector<float>(16, float(i))));
        SaveOptions o;
        o.archive = true;
        save(td, (dir + "/many.tdz").toStdString(), o);
    }
    // `tdstudio --info` in a new process each time, as a user runs it: its
    // block cache starts empty. Requests and bytes from nginx's access log.
    const QString local = dir + "/many.tdz", remote = base + "/many.tdz";
    const double localSeconds = medianSeconds(args.rounds, [&] {
        bench::runProcess({TDSTUDIO_EXECUTABLE, "--info", local});
    });
    const qsizetype logBefore = server.requests().size();
    const double remoteSeconds = medianSeconds(args.rounds, [&] {
        bench::runProcess({TDSTUDIO_EXECUTABLE, "--info", remote});
    });
    double logged = 0;
    const QStringList served = server.requests().mid(logBefore);
    for (const QString& line : served)
        logged += line.section(' ', 1, 1).toDouble();
    const double perOpen = 1.0 + args.rounds;  // the warm-up too
    const double curlSeconds = curl.isEmpty() ? -1 : medianSeconds(args.rounds, [&] {
        bench::runProcess({curl, "-s", remote});
    });
    std::printf("case 1: --info of a .tdz of 10,000 leaves (%.1f MB), a new process each\n",
                QFileInfo(local).size() / 1e6);
    std::printf("  over HTTP: %.0f requests, %.0f KB per open, %.1f ms\n",
                double(served.size()) / perOpen, logged / perOpen / 1e3, remoteSeconds * 1e3);
    std::printf(
        "  anchor: the same file local %.1f ms (%.2fx); curl of the whole file %.1f ms "
        "(%.2fx)\n",
        localSeconds * 1e3, localSeconds / remoteSeconds, curlSeconds * 1e3,
        curlSeconds / remoteSeconds);

    // 2. a 1 GiB leaf in the window
    {
        TensorDict td = TensorDict::create();
        td.mutableRoot().addBytes("x", DType::UInt8, {32768, 32768},
                                  ownedBytes(bench::imageLikeBytes(1024, 1024)));
        SaveOptions o;
        o.archive = true;
        o.numThreads = 2;
        save(td, (dir + "/big.tdz").toStdString(), o);
    }
    const QString big = base + "/big.tdz";
    const double leafBytes = double(1ull << 30);
    std::vector<double> tableMs, imageMs, tableBytes, imageBytes, tableRequests, imageRequests;
    for (int i = 0; i < args.rounds; ++i) {
        const auto [table, image] = showInWindow(big);
        tableMs.push_back(table.ms), imageMs.push_back(image.ms);
        tableBytes.push_back(double(table.bytes)), imageBytes.push_back(double(image.bytes));
        tableRequests.push_back(double(table.requests)),
            imageRequests.push_back(double(image.requests));
    }
    std::printf("case 2: a [32768, 32768] uint8 leaf (1 GiB, stored) in a 1200 x 800 window\n");
    std::printf(
        "  the first table screen: %.2f MiB in %.0f requests, %.0f ms (goal < 4 MiB: %s; "
        "%.3f%% of the leaf)\n",
        median(tableBytes) / (1 << 20), median(tableRequests), median(tableMs),
        median(tableBytes) < (4 << 20) ? "ok" : "MISSED", 100 * median(tableBytes) / leafBytes);
    std::printf(
        "  the fit image: %.1f MiB in %.0f requests, %.0f ms (goal <= 10%% of the leaf: "
        "%.1f%%, %s)\n",
        median(imageBytes) / (1 << 20), median(imageRequests), median(imageMs),
        100 * median(imageBytes) / leafBytes,
        median(imageBytes) <= 0.1 * leafBytes ? "ok" : "MISSED");

    // 3. sha256 of the 1 GiB leaf
    HttpCounters before3 = httpCounters();
    const double perHash = 1.0 + args.rounds;  // the warm-up too
    const double hashSeconds = medianSeconds(args.rounds, [&] {
        const TensorDict td = load(big.toStdString());
        leafSha256(*td.root().child("x"));
    });
    const HttpCounters hashed = httpCounters();
    const double curlBig = curl.isEmpty() ? -1 : medianSeconds(args.rounds, [&] {
        bench::runProcess({curl, "-s", "-o", "/dev/null", big});
    });
    std::printf(
        "case 3: sha256 of the 1 GiB stored leaf over HTTP: %.2f s, %.0f requests and "
        "%.0f MB per hash\n",
        hashSeconds, (hashed.requests - before3.requests) / perHash,
        (hashed.bytes - before3.bytes) / perHash / 1e6);
    const double ratio = curlBig > 0 ? curlBig / hashSeconds : -1;
    std::printf("  anchor: curl -o /dev/null %.2f s: %.2fx its speed (goal >= 0.5x: %s)\n", curlBig,
                ratio, ratio >= 0.5 ? "ok" : "MISSED");

    // 4. libcurl against Qt Network
    std::vector<Range> stream, sampled;
    for (std::uint64_t at = 0; at < (1ull << 30); at += 4u << 20)
        stream.push_back({at, 4u << 20});
    for (std::uint64_t i = 0; i < 400; ++i)
        sampled.push_back({i * (5u << 19), 64u << 10});
    std::vector<char> buffer(4u << 20);
    bool ok = true;
    const double curlStream =
        medianSeconds(args.rounds, [&] { ok = curlRanges(big, stream, buffer) && ok; });
    const double qtStream =
        medianSeconds(args.rounds, [&] { ok = qtRanges(big, stream, buffer) && ok; });
    const double curlSampled =
        medianSeconds(args.rounds, [&] { ok = curlRanges(big, sampled, buffer) && ok; });
    const double qtSampled =
        medianSeconds(args.rounds, [&] { ok = qtRanges(big, sampled, buffer) && ok; });
    std::printf("case 4: libcurl against Qt Network (QNetworkAccessManager), the same ranges%s\n",
                ok ? "" : " (AN ANSWER WAS WRONG)");
    std::printf("  256 x 4 MiB in order:        libcurl %.2f s, Qt Network %.2f s (%.2fx)\n",
                curlStream, qtStream, qtStream / curlStream);
    std::printf("  400 x 64 KiB, 2.5 MiB apart: libcurl %.0f ms, Qt Network %.0f ms (%.2fx)\n",
                curlSampled * 1e3, qtSampled * 1e3, qtSampled / curlSampled);

    // 5. over s3://, requests signed (AWS Signature V4), from s3rver
    testsupport::S3Server s3("bench");
    QString error;
    if (!s3.isRunning() || !s3.put(local, "many.tdz", &error) ||
        !s3.put(dir + "/big.tdz", "big.tdz", &error)) {
        std::printf("case 5 skipped: %s\n", qPrintable(s3.isRunning() ? error : s3.error()));
        return ok ? 0 : 1;
    }
    qputenv("AWS_ACCESS_KEY_ID", s3.accessKey().toUtf8());
    qputenv("AWS_SECRET_ACCESS_KEY", s3.secretKey().toUtf8());
    qputenv("AWS_ENDPOINT_URL", s3.endpoint().toUtf8());
    qputenv("AWS_REGION", "us-east-1");
    const HttpCounters before5 = httpCounters();
    (void)load("s3://bench/many.tdz");  // the tree, as --info reads it
    const HttpCounters tree5 = httpCounters();
    const double s3Info = medianSeconds(args.rounds, [&] {
        bench::runProcess({TDSTUDIO_EXECUTABLE, "--info", "s3://bench/many.tdz"});
    });
    std::printf("case 5: over s3:// (s3rver on loopback, every request signed)\n");
    std::printf(
        "  --info of the 10,000-leaf .tdz: %llu requests, %.0f KB, %.1f ms (HTTP %.1f ms)\n",
        static_cast<unsigned long long>(tree5.requests - before5.requests),
        (tree5.bytes - before5.bytes) / 1e3, s3Info * 1e3, remoteSeconds * 1e3);
    const double s3Hash = medianSeconds(args.rounds, [&] {
        const TensorDict td = load("s3://bench/big.tdz");
        leafSha256(*td.root().child("x"));
    });
    // curl signs what it sends; S3 wants the (empty) payload's hash said.
    const QString emptyPayload =
        "x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    const QStringList curlGet{curl,
                              "-s",
                              "-f",
                              "-o",
                              "/dev/null",
                              "--aws-sigv4",
                              "aws:amz:us-east-1:s3",
                              "--user",
                              s3.accessKey() + ":" + s3.secretKey(),
                              "-H",
                              emptyPayload,
                              s3.endpoint() + "/bench/big.tdz"};
    if (!curl.isEmpty() && !bench::runProcess(curlGet).ok) {
        std::printf("  curl --aws-sigv4 failed: no anchor\n");
        return 1;
    }
    const double curlS3 =
        curl.isEmpty() ? -1 : medianSeconds(args.rounds, [&] { bench::runProcess(curlGet); });
    const double s3Ratio = curlS3 > 0 ? curlS3 / s3Hash : -1;
    std::printf(
        "  sha256 of the 1 GiB leaf: %.2f s; curl --aws-sigv4 -o /dev/null %.2f s: %.2fx its "
        "speed (goal >= 0.5x: %s)\n",
        s3Hash, curlS3, s3Ratio, s3Ratio >= 0.5 ? "ok" : "MISSED");
    return ok ? 0 : 1;
}
