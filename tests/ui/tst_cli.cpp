// tdstudio's command line, run as a user would: --info (with --json and
// --sha256) against every fixture's .expected.json, errors, --screenshot.

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "testsupport.h"

namespace {

struct Run {
    int exitCode = -1;
    QByteArray out, err;
};

Run tdstudio(const QStringList& args, bool headless = true,
             const QProcessEnvironment& extra = QProcessEnvironment()) {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const QString& name : extra.keys())
        env.insert(name, extra.value(name));
    if (headless) {  // --info must not need a display at all
        env.remove("DISPLAY");
        env.remove("WAYLAND_DISPLAY");
        env.remove("QT_QPA_PLATFORM");
    }
    p.setProcessEnvironment(env);
    p.start(TDSTUDIO_EXECUTABLE, args);
    p.waitForFinished(60000);
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
            p.readAllStandardError()};
}

}  // namespace

class CliTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void neverLoadsLibtorch_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<bool>("headless");
        const QString archive = testsupport::fixturePath("archive_simple.tdz");
        QTest::newRow("--version") << QStringList{"--version"} << true;
        QTest::newRow("--info") << QStringList{"--info", archive, "--sha256"} << true;
        QTest::newRow("--save") << QStringList{"--save",
                                               archive,
                                               scratch_.path() + "/copy.tdz",
                                               "--compression",
                                               "deflate",
                                               "--threads",
                                               "2"}
                                << true;
        QTest::newRow("window") << QStringList{archive,
                                               "--select",
                                               "b/c",
                                               "--view",
                                               "table",
                                               "--screenshot",
                                               scratch_.path() + "/shot.png"}
                                << false;
    }
    void neverLoadsLibtorch() {
        // Every library the process maps, dlopen()ed plugins included, as the
        // dynamic loader reports them: none of libtorch, nor what it drags in.
        QFETCH(QStringList, args);
        QFETCH(bool, headless);
        QProcessEnvironment debug;
        debug.insert("LD_DEBUG", "files");
        if (!headless)
            debug.insert("QT_QPA_PLATFORM", "offscreen");
        const Run run = tdstudio(args, headless, debug);
        QVERIFY2(run.exitCode == 0, run.err.right(2000).constData());
        QVERIFY(run.err.contains("libQt6Core.so"));  // the loader's report is there
        for (const char* library : {"libtorch", "libc10", "libopencv", "libQt5", "libavcodec"})
            QVERIFY2(!run.err.contains(library), library);
    }

    void versionIsSmall() {
        const PeakRun run = runForPeak({"--version"});
        QCOMPARE(run.exitCode, 0);
        QVERIFY2(run.maxRssKiB < 80 * 1024, qPrintable(QString::number(run.maxRssKiB)));
    }

    void infoOfAZipBombStaysSmall() {
        // 1 GiB of deflated zeros in a few hundred KiB: --info --sha256 streams
        // each leaf; it never holds one inflated.
        const QString bomb = scratch_.path() + "/bomb.tdz";
        QString error;
        QVERIFY2(testsupport::runPython({TDSTUDIO_TEST_SUPPORT_DIR "/make_zip_bomb.py", bomb},
                                        nullptr, &error),
                 qPrintable(error));
        const PeakRun run = runForPeak({"--info", bomb, "--sha256"});
        QCOMPARE(run.exitCode, 0);
        QVERIFY2(run.maxRssKiB < 150 * 1024, qPrintable(QString::number(run.maxRssKiB)));
    }

    void infoJsonMatchesExpected_data() {
        QTest::addColumn<QString>("fixture");
        for (const QString& name : testsupport::fixtureNames())
            QTest::newRow(qPrintable(name)) << name;
    }
    void infoJsonMatchesExpected() {
        QFETCH(QString, fixture);
        QString path = testsupport::fixturePath(fixture);
        if (fixture.startsWith("archive_"))
            path += ".tdz";
        const Run run = tdstudio({"--info", path, "--json", "--sha256"});
        QVERIFY2(run.exitCode == 0, run.err.constData());
        const QJsonObject actual = QJsonDocument::fromJson(run.out).object();
        const QString mismatch = testsupport::compareWithExpected(
            actual, testsupport::readJsonFile(testsupport::fixturePath(fixture + ".expected.json")),
            !fixture.startsWith("archive_"));
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
    }

    void infoTextListsEveryNode() {
        const Run run =
            tdstudio({"--info", testsupport::fixturePath("nontensor_string"), "--sha256"});
        QCOMPARE(run.exitCode, 0);
        const QString out = QString::fromUtf8(run.out);
        QVERIFY(out.contains("[\"meta\", \"note\"]  non-tensor  NonTensorData  batch [3]"));
        QVERIFY(out.contains("\"\\u00fcn\\u00efcode \\u2713 \\\"quoted\\\"\""));
        QVERIFY(out.contains(
            "[\"a\"]  tensor  torch.float32  shape [3]  12 bytes  file a.memmap  sha256 "));
    }

    void infoReportsErrors() {
        const Run missing = tdstudio({"--info", "/nonexistent/dataset.tdz"});
        QCOMPARE(missing.exitCode, 1);
        QVERIFY(missing.err.contains("/nonexistent/dataset.tdz"));

        QTemporaryDir dir;
        testsupport::copyTree(testsupport::fixturePath("simple"), dir.path() + "/s");
        QFile::resize(dir.path() + "/s/a.memmap", 4);
        const Run partial = tdstudio({"--info", dir.path() + "/s"});
        QCOMPARE(partial.exitCode, 1);
        QVERIFY(partial.err.contains("a.memmap"));
        QVERIFY(partial.out.contains("[\"b\", \"c\"]  tensor"));  // the rest is still listed

        const Run usage = tdstudio({"--info"});
        QCOMPARE(usage.exitCode, 2);
    }

    void saveConvertsAndExports() {
        QTemporaryDir dir;
        const QString archive = dir.path() + "/out.tdz";
        Run run = tdstudio({"--save", testsupport::fixturePath("dtypes"), archive, "--compression",
                            "deflate", "--threads", "2", "--atomic"});
        QVERIFY2(run.exitCode == 0, run.err.constData());
        QVERIFY(run.err.contains("saved " + archive.toUtf8()));
        QVERIFY(run.err.contains("100.0%"));
        run = tdstudio({"--info", archive, "--json", "--sha256"});
        QCOMPARE(run.exitCode, 0);
        const QJsonObject info = QJsonDocument::fromJson(run.out).object();
        QCOMPARE(info["format"].toString(), QString("archive"));
        QCOMPARE(info["leaves"].toArray()[0].toObject()["zip_method"].toString(),
                 QString("deflate"));
        const QString mismatch = testsupport::compareWithExpected(
            info, testsupport::readJsonFile(testsupport::fixturePath("dtypes.expected.json")),
            false);
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));

        // Export one subtree only.
        const QString part = dir.path() + "/part";
        run = tdstudio({"--save", testsupport::fixturePath("nested3"), part, "--key", "l1/l2"});
        QVERIFY2(run.exitCode == 0, run.err.constData());
        run = tdstudio({"--info", part});
        QVERIFY(run.out.contains("[\"l1\", \"l2\", \"z\"]  tensor"));
        QVERIFY(!run.out.contains("[\"x\"]"));
        QVERIFY(!run.out.contains("[\"l1\", \"y\"]"));

        run = tdstudio({"--save", testsupport::fixturePath("simple"), dir.path() + "/d",
                        "--compression", "lzma"});
        QCOMPARE(run.exitCode, 1);
        QVERIFY2(run.err.contains("compression applies to archives only"), run.err.constData());
        QVERIFY(!QFileInfo::exists(dir.path() + "/d"));
        run = tdstudio(
            {"--save", testsupport::fixturePath("simple"), archive, "--compression", "zstd"});
        QCOMPARE(run.exitCode, 1);
        QVERIFY(run.err.contains("unknown compression"));
        run = tdstudio(
            {"--save", testsupport::fixturePath("simple"), dir.path() + "/x", "--key", "nope"});
        QCOMPARE(run.exitCode, 1);
        QVERIFY(run.err.contains("nope"));
    }

    void screenshotRendersTheWindow() {
        QTemporaryDir dir;
        const QString png = dir.path() + "/shot.png";
        const Run run = tdstudio({testsupport::fixturePath("simple"), "--screenshot", png}, false);
        QVERIFY2(run.exitCode == 0, run.err.constData());
        const QImage image(png);
        QVERIFY(!image.isNull());
        QVERIFY(image.width() >= 800 && image.height() >= 500);
    }

private:
    struct PeakRun {
        int exitCode = -1;
        long maxRssKiB = 0;
    };
    // Runs tdstudio with `args` (stdout discarded) and reports its peak
    // resident memory, whole process.
    static PeakRun runForPeak(const QStringList& args) {
        std::vector<QByteArray> storage{QByteArray(TDSTUDIO_EXECUTABLE)};
        for (const QString& a : args)
            storage.push_back(a.toLocal8Bit());
        std::vector<char*> argv;
        for (QByteArray& a : storage)
            argv.push_back(a.data());
        argv.push_back(nullptr);
        const pid_t pid = ::fork();
        if (pid == 0) {
            const int null = ::open("/dev/null", O_WRONLY);
            ::dup2(null, 1);
            ::execv(TDSTUDIO_EXECUTABLE, argv.data());
            ::_exit(127);
        }
        int status = 0;
        struct rusage usage {};
        PeakRun run;
        if (::wait4(pid, &status, 0, &usage) == pid && WIFEXITED(status))
            run.exitCode = WEXITSTATUS(status);
        run.maxRssKiB = usage.ru_maxrss;
        return run;
    }

    QTemporaryDir scratch_;
};

QTEST_GUILESS_MAIN(CliTest)
#include "tst_cli.moc"
