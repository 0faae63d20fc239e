// tdstudio's command line, run as a user would: --info (with --json and
// --sha256) against every fixture's .expected.json, errors, --screenshot.

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLibraryInfo>
#include <QProcess>
#include <QSettings>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <functional>

#include "common/node_properties.h"
#include "libzip_reader.h"
#include "nginx_server.h"
#include "s3_server.h"
#include "tensordict/compare.h"
#include "tensordict/report.h"
#include "tensordict/save.h"
#include "tensordict/tensordict.h"
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
    // The program's settings (recent files, modes) go to a folder of the
    // suite's, never to the user's.
    static QTemporaryDir config;
    env.insert("XDG_CONFIG_HOME", config.path());
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
        // The window's libraries are loaded for the window only.
        QCOMPARE(run.err.contains("tdstudio-window.so"), !headless);
        QCOMPARE(run.err.contains("libQt6Widgets.so"), !headless);
    }

    // Without its window module beside it (nor installed), tdstudio still
    // runs every console mode, and says where it looked for the window.
    void windowModuleMissing() {
        const QString alone = scratch_.path() + "/alone/tdstudio";
        QVERIFY(QDir().mkpath(QFileInfo(alone).path()));
        QFile::remove(alone);
        QVERIFY(QFile::copy(TDSTUDIO_EXECUTABLE, alone));
        const QString archive = testsupport::fixturePath("archive_simple.tdz");
        QProcess p;
        p.start(alone, {"--info", archive});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 0);
        QVERIFY(p.readAllStandardOutput().contains("b/c"));
        p.start(alone, {archive});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 1);
        QByteArray err = p.readAllStandardError();
        QVERIFY2(err.contains("cannot open the window: no tdstudio-window.so in " +
                              QFile::encodeName(QFileInfo(alone).path())),
                 err.constData());
        p.start(alone, {archive, "--select", "b/c", "--view", "table"});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 2);
        err = p.readAllStandardError();
        QVERIFY2(err.contains("cannot load the window"), err.constData());
        // A library of that name that is not the window module is refused.
        const QString impostor = QFileInfo(alone).path() + "/tdstudio-window.so";
        QVERIFY(QFile::copy(QLibraryInfo::path(QLibraryInfo::LibrariesPath) + "/libQt6Core.so.6",
                            impostor));
        p.start(alone, {archive});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 1);
        err = p.readAllStandardError();
        QVERIFY2(err.contains("cannot open the window: " + QFile::encodeName(impostor) +
                              ": not tdstudio's window module"),
                 err.constData());
        QFile::remove(impostor);
    }

    void versionIsSmall() {
        const PeakRun run = runForPeak({"--version"});
        QCOMPARE(run.exitCode, 0);
#ifdef TDSTUDIO_SANITIZED
        // A sanitizer's own memory (shadow, quarantine) dwarfs the program's:
        // the bound is the release build's.
        qInfo("--version peaked at %lld KiB (sanitized build: bound not applied)",
              static_cast<long long>(run.maxRssKiB));
#else
        QVERIFY2(run.maxRssKiB < 80 * 1024, qPrintable(QString::number(run.maxRssKiB)));
#endif
    }

    void infoOfAZipBombStaysSmall() {
        // 1 GiB of deflated zeros in a few hundred KiB: --info --sha256 streams
        // each leaf; it never holds one inflated.
        const QString bomb = scratch_.path() + "/bomb.tdz";
        QString error;
        QVERIFY2(testsupport::runPython({TDSTUDIO_TEST_SUPPORT_DIR "/make_zip_bomb.py", bomb},
                                        nullptr, &error),
                 qPrintable(error));
        const PeakRun run = runForPeak({"--info", bomb, "--sha256", "--stats"});
        QCOMPARE(run.exitCode, 0);
#ifdef TDSTUDIO_SANITIZED
        // A sanitizer's shadow and quarantine add ~170 MiB: the bound still
        // tells a streamed leaf from a 1 GiB one held whole.
        constexpr long long boundKiB = 512 * 1024;
#else
        constexpr long long boundKiB = 150 * 1024;
#endif
        QVERIFY2(run.maxRssKiB < boundKiB, qPrintable(QString::number(run.maxRssKiB)));
    }

    // A tensorclass whose fields differ is reported with both sets of
    // fields (they are not a non-tensor value; asking one for its value
    // once made --diff fail with exit 2).
    void diffNamesTensorclassFields() {
        const QString a = scratch_.path() + "/tc-a", b = scratch_.path() + "/tc-b";
        testsupport::copyTree(testsupport::fixturePath("tensorclass"), a);
        testsupport::copyTree(testsupport::fixturePath("tensorclass"), b);
        QFile meta(b + "/meta.json");
        QVERIFY(meta.open(QIODevice::WriteOnly | QIODevice::Truncate));
        meta.write(R"({"_type": "<class 'fixture_classes.MyTC'>", "label": "run-2"})");
        meta.close();
        const Run run = tdstudio({"--diff", a, b});
        QVERIFY2(run.exitCode == 1, run.err.constData());
        const QString text = QString::fromUtf8(run.out);
        QVERIFY2(text.contains("changed:   []\n    non_tensor: {} -> {\"label\": \"run-2\"}\n"),
                 qPrintable(text));
    }

    // Checkpoints compare as tensordicts do: two epochs name the one changed
    // element, and a .pt equals the .tdz that --save converts it to.
    // --check as a script runs it: exit 0 sound, 1 problems, 2 not checkable;
    // one line per problem; --json's document; --repair, then sound. No display.
    void checkExitCodesAndJson() {
        const QString clean = testsupport::fixturePath("archive_simple.tdz");
        Run r = tdstudio({"--check", clean});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.endsWith(": ok\n"), r.out.constData());

        const QString damaged = scratch_.path() + "/check-me.tdz";
        QFile::remove(damaged);
        QVERIFY(QFile::copy(clean, damaged));
        QVERIFY(QFile::setPermissions(damaged, QFile::ReadOwner | QFile::WriteOwner));
        {
            QFile f(damaged);
            QVERIFY(f.open(QIODevice::ReadWrite));
            QVERIFY(f.seek(320));  // a.memmap's payload (the fixture's zip_entries)
            QVERIFY(f.putChar('\x7f'));
        }
        r = tdstudio({"--check", damaged});
        QCOMPARE(r.exitCode, 1);
        const QList<QByteArray> lines = r.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 2);
        QVERIFY2(
            lines[0].startsWith("error  crc_mismatch  " + damaged.toUtf8() + ":a.memmap  \"a\": "),
            lines[0].constData());
        QVERIFY2(lines[1].contains("1 error, 0 warnings (1 repairable: tdstudio --check"),
                 lines[1].constData());

        r = tdstudio({"--check", damaged, "--json"});
        QCOMPARE(r.exitCode, 1);
        const QJsonObject doc = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(doc["sound"].toBool(true), false);
        QCOMPARE(doc["checked"].toObject()["entries"].toInt(), 4);
        const QJsonObject problem = doc["problems"].toArray().first().toObject();
        QCOMPARE(problem["kind"].toString(), QString("crc_mismatch"));
        QCOMPARE(problem["severity"].toString(), QString("error"));
        QCOMPARE(problem["file"].toString(), damaged + ":a.memmap");
        QCOMPARE(problem["key"].toArray(), QJsonArray({"a"}));
        QVERIFY(!problem["message"].toString().isEmpty());

        r = tdstudio({"--check", damaged, "--repair", "--dry-run"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY(r.out.startsWith("would re-stamp the CRC-32 of "));
        r = tdstudio({"--check", damaged, "--repair"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.startsWith("re-stamped the CRC-32 of " + damaged.toUtf8() + ":a.memmap"));
        QVERIFY(r.out.endsWith(": ok\n"));

        r = tdstudio({"--check", scratch_.path() + "/no-such-thing"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.err.contains("no-such-thing: No such file or directory"));
    }

    // Clean data that only deserves a look passes: an archive made by
    // `zip -0` (unaligned payloads) and a directory whose leaf file is
    // longer than its leaf (a stale tail of Python's in-place saves) load
    // exactly, so --check exits 0, counting the warnings; --strict fails them.
    void checkPassesWarningsUnlessStrict_data() {
        QTest::addColumn<QString>("kind");
        QTest::newRow("zip -0") << "unaligned_payload";
        QTest::newRow("stale tail") << "stale_tail";
    }
    void checkPassesWarningsUnlessStrict() {
        QFETCH(QString, kind);
        const QString dir = scratch_.path() + "/warned-" + kind;
        QDir(dir).removeRecursively();
        testsupport::copyTree(testsupport::fixturePath("simple"), dir);
        QString path = dir;
        if (kind == "unaligned_payload") {
            path = dir + ".zip.tdz";
            QFile::remove(path);
            QProcess zip;
            zip.setWorkingDirectory(dir);
            zip.start("zip", {"-q", "-0", "-r", path, "."});
            QVERIFY(zip.waitForFinished() && zip.exitCode() == 0);
        } else {
            QFile leaf(dir + "/a.memmap");
            QVERIFY(leaf.open(QIODevice::Append));
            leaf.write(QByteArray(64, '\0'));
        }
        Run r = tdstudio({"--check", path});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.contains("warning  " + kind.toUtf8()), r.out.constData());
        QVERIFY2(r.out.contains(": 0 errors, 1 warning"), r.out.constData());
        r = tdstudio({"--check", path, "--strict"});
        QCOMPARE(r.exitCode, 1);
        r = tdstudio({"--check", path, "--json"});
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(QJsonDocument::fromJson(r.out)["problems"].toArray().size(), 1);
        QVERIFY(tdstudio({"--help"}).out.contains("--strict"));
    }

    // What --json prints is strict JSON: Python's json.load with every bare
    // constant (NaN, Infinity) refused reads --info, --diff and --check.
    void jsonOutputIsStrict() {
        const QString nan = scratch_.path() + "/nan.pt";
        const QString other = scratch_.path() + "/nan-other.pt";
        QString error;
        QVERIFY2(testsupport::runPython(
                     {"-c", QString("import torch\n"
                                    "torch.save({'x': float('nan'), 'y': float('inf'), "
                                    "'z': float('-inf'), 't': torch.tensor([float('nan'), 1.0])}, "
                                    "'%1')\n"
                                    "torch.save({'x': 1.5, 'y': float('inf'), 'z': 0.0, "
                                    "'t': torch.tensor([2.0, float('inf')])}, '%2')\n")
                                .arg(nan, other)},
                     nullptr, &error),
                 qPrintable(error));
        const QString strict =
            "import json, sys\n"
            "def refuse(c): raise ValueError('bare ' + c)\n"
            "doc = json.load(sys.stdin, parse_constant=refuse)\n"
            "print(json.dumps(doc))\n";
        for (const QStringList& args :
             {QStringList{"--info", nan, "--json", "--sha256"},
              QStringList{"--diff", nan, other, "--json"}, QStringList{"--check", nan, "--json"}}) {
            const Run r = tdstudio(args);
            QVERIFY2(r.exitCode == 0 || r.exitCode == 1, r.err.constData());
            QProcess py;
            py.start("/usr/bin/python3", {"-c", strict});
            py.write(r.out);
            py.closeWriteChannel();
            QVERIFY(py.waitForFinished());
            QVERIFY2(py.exitCode() == 0,
                     qPrintable(args.join(' ') + ": " + py.readAllStandardError()));
        }
        const Run info = tdstudio({"--info", nan, "--json"});
        QVERIFY2(info.out.contains("\"nan\"") && info.out.contains("\"-inf\""),
                 info.out.constData());
    }

    // Two leaves that differ only where their NaNs are: --diff says so
    // instead of a maximum difference of 0.
    void diffOfNanPositionsSaysSo() {
        const QString a = scratch_.path() + "/nan-a.pt", b = scratch_.path() + "/nan-b.pt";
        QString error;
        QVERIFY2(testsupport::runPython(
                     {"-c", QString("import torch\n"
                                    "nan = float('nan')\n"
                                    "torch.save({'x': torch.tensor([nan, 1.0, 2.0, 3.0])}, '%1')\n"
                                    "torch.save({'x': torch.tensor([0.0, 1.0, nan, 3.0])}, '%2')\n")
                                .arg(a, b)},
                     nullptr, &error),
                 qPrintable(error));
        Run r = tdstudio({"--diff", a, b});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.out.contains("2 of 4 elements differ") &&
                     r.out.contains("differing only in NaN positions") &&
                     !r.out.contains("max abs diff"),
                 r.out.constData());
        r = tdstudio({"--diff", a, b, "--json"});
        const QJsonObject changed =
            QJsonDocument::fromJson(r.out)["changed"].toArray().first().toObject();
        QCOMPARE(changed["nan_differing"].toInt(), 2);
        QVERIFY(changed["max_abs_diff"].isNull());
        QCOMPARE(tdstudio({"--diff", a, b, "--equal-nan"}).exitCode,
                 1);  // 0.0 vs NaN still differs
    }

    // A file of one tensor is saved under a key of its own; one that no
    // format reads says what it looks like and what opens.
    void saveAFileOfOneTensorUnderAKey() {
        const QString npy = testsupport::torchFixturesDir() + "/array.npy";
        const QString out = scratch_.path() + "/one.tdz";
        QFile::remove(out);
        Run r = tdstudio({"--save", npy, out});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("one tensor") && r.err.contains("--key-name"), r.err.constData());
        QVERIFY(!QFile::exists(out));
        r = tdstudio({"--save", npy, out, "--key-name", "array"});
        QCOMPARE(r.exitCode, 0);
        r = tdstudio({"--info", out});
        QVERIFY2(r.out.contains("[\"array\"]  tensor"), r.out.constData());

        const QString text = scratch_.path() + "/notes.txt";
        QFile f(text);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("hello\n");
        f.close();
        r = tdstudio({"--info", text});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("none of the formats tdstudio opens") &&
                     r.err.contains("safetensors") && r.err.contains("text (\"hello\")"),
                 r.err.constData());
    }

    // A distributed checkpoint (make_dcp.py): --info lists its tensors with
    // their chunks, --check exits 0 when sound, 1 for each kind of damage and
    // for a .metadata that would run code (which stays unrun).
    void distributedCheckpointsInfoAndCheck() {
        const QString dir = scratch_.path() + "/dcp", marker = scratch_.path() + "/dcp-marker";
        QString error;
        QVERIFY2(testsupport::runPython(
                     {TDSTUDIO_TEST_SUPPORT_DIR "/make_dcp.py", dir, "--marker", marker}, nullptr,
                     &error),
                 qPrintable(error));
        // A tensor gathered from chunks names no one file.
        const Run text = tdstudio({"--info", dir + "/four_ranks"});
        QCOMPARE(text.exitCode, 0);
        QVERIFY2(QString::fromUtf8(text.out).split('\n').contains(
                     R"(["model", "layers.0.w_row"]  tensor  torch.float32  shape [8, 6])"
                     R"(  192 bytes  chunks)"),
                 text.out.constData());
        Run info = tdstudio({"--info", "--json", dir + "/four_ranks"});
        QCOMPARE(info.exitCode, 0);
        const QJsonObject json = QJsonDocument::fromJson(info.out).object();
        QCOMPARE(json["format"].toString(), QString("dcp"));
        bool found = false;
        for (const auto leaf : json["leaves"].toArray()) {
            const QJsonObject o = leaf.toObject();
            if (o["key"].toArray() != QJsonArray{"model", "layers.0.w_uneven"})
                continue;
            found = true;
            QCOMPARE(o["storage"].toString(), QString("chunks"));
            const QJsonArray chunks = o["chunks"].toArray();
            QCOMPARE(chunks.size(), 4);  // 10 rows over 4 ranks: 3, 3, 3, 1
            QCOMPARE(chunks[3].toObject()["offsets"].toArray(), (QJsonArray{9, 0}));
            QCOMPARE(chunks[3].toObject()["sizes"].toArray(), (QJsonArray{1, 4}));
        }
        QVERIFY2(found, info.out.constData());
        // The details: one line per chunk, its block of the tensor, file and bytes.
        const tensordict::TensorDict td = tensordict::load((dir + "/four_ranks").toStdString());
        const tensordict::Node* uneven = td.root().find({"model", "layers.0.w_uneven"});
        QVERIFY(uneven);
        const auto rows = nodetext::propertyRows(*uneven);
        const auto chunkRow = std::find_if(rows.begin(), rows.end(),
                                           [](const auto& row) { return row.name == "chunks"; });
        QVERIFY(chunkRow != rows.end() && chunkRow->isLong);
        QCOMPARE(chunkRow->label, QString("Chunks (4)"));
        const QStringList lines = chunkRow->text.split('\n');
        QCOMPARE(lines.size(), 4);
        QVERIFY2(lines[3].startsWith("[9:10, 0:4] in __3_0.distcp, bytes "), qPrintable(lines[3]));
        QVERIFY(!lines[3].contains("through"));
        // A compressed checkpoint's chunks say what their streams were written through.
        const tensordict::TensorDict zstd =
            tensordict::load((dir + "/four_ranks_zstd").toStdString());
        const tensordict::Node* compressed = zstd.root().find({"model", "layers.0.w_uneven"});
        QVERIFY(compressed);
        for (const auto& row : nodetext::propertyRows(*compressed))
            if (row.name == "chunks")
                for (const QString& line : row.text.split('\n'))
                    QVERIFY2(line.endsWith(", through stream.zstd/1"), qPrintable(line));
        // Chunks in their files' safetensors data say where that data starts.
        const tensordict::TensorDict inSafetensors =
            tensordict::load((dir + "/four_ranks_safetensors").toStdString());
        const tensordict::Node* st = inSafetensors.root().find({"model", "layers.0.w_uneven"});
        QVERIFY(st);
        bool stChunks = false;
        for (const auto& row : nodetext::propertyRows(*st))
            if (row.name == "chunks") {
                stChunks = true;
                const QStringList stLines = row.text.split('\n');
                QCOMPARE(stLines.size(), 4);
                QVERIFY2(stLines[0].startsWith("[0:3, 0:4] in __") &&
                             stLines[0].contains(".distcp, in the safetensors data from byte "),
                         qPrintable(stLines[0]));
            }
        QVERIFY(stChunks);

        struct Case {
            const char* fixture;
            int exitCode;
            const char* said;
        };
        for (const Case& c :
             {Case{"four_ranks", 0, "ok"}, Case{"gap", 1, "error  chunks"},
              Case{"overlap", 1, "overlap"}, Case{"missing_distcp", 1, "error  missing_file"},
              Case{"bad_crc", 1, "error  crc_mismatch"}, Case{"hostile", 1, "os.system"},
              Case{"four_ranks_zstd", 0, "ok"}, Case{"four_ranks_safetensors", 0, "ok"}}) {
            const Run r = tdstudio({"--check", dir + "/" + c.fixture});
            QVERIFY2(r.exitCode == c.exitCode && r.out.contains(c.said),
                     qPrintable(QString("%1: exit %2\n%3%4")
                                    .arg(c.fixture)
                                    .arg(r.exitCode)
                                    .arg(QString::fromUtf8(r.out), QString::fromUtf8(r.err))));
        }
        QVERIFY(!QFile::exists(marker));
    }

    void diffOfCheckpointsNamesTheChangedElement() {
        const QString a = scratch_.path() + "/epoch1.pt", b = scratch_.path() + "/epoch2.pt";
        QString error;
        QVERIFY2(testsupport::runPython(
                     {"-c",
                      "import sys, torch\n"
                      "torch.manual_seed(0)\n"
                      "ck = {'model': {'w': torch.randn(4, 5), 'b': torch.zeros(5)}, 'epoch': 3}\n"
                      "torch.save(ck, sys.argv[1])\n"
                      "ck['model']['w'][2, 3] += 1.0\n"
                      "torch.save(ck, sys.argv[2])\n",
                      a, b},
                     nullptr, &error),
                 qPrintable(error));
        Run run = tdstudio({"--diff", a, b});
        QVERIFY2(run.exitCode == 1, run.err.constData());
        const QString text = QString::fromUtf8(run.out);
        QVERIFY2(
            text.contains("changed:   [\"model\", \"w\"]\n    values: 1 of 20 elements differ") &&
                text.contains("first at [2, 3]") && text.contains("5 keys: 4 same, 1 changed") &&
                text.endsWith("different\n"),
            qPrintable(text));

        const QString tdz = scratch_.path() + "/epoch1.tdz";
        run = tdstudio({"--save", a, tdz});
        QVERIFY2(run.exitCode == 0, run.err.constData());
        run = tdstudio({"--diff", a, tdz});
        QVERIFY2(run.exitCode == 0, (run.out + run.err).constData());
    }

    // --info, --diff (local against remote) and --save URL local.tdz read
    // from a web server (nginx, started here) as from the disk.
    void commandsTakeUrls() {
        QTemporaryDir served;
        QVERIFY(served.isValid());
        const QString fixture = testsupport::fixturePath("archive_simple.tdz");
        QVERIFY(QFile::copy(fixture, served.path() + "/simple.tdz"));
        testsupport::NginxServer server(served.path());
        QVERIFY2(server.isRunning(), qPrintable(server.error()));
        const QString url = server.url() + "/simple.tdz";

        Run run = tdstudio({"--info", url});
        QVERIFY2(run.exitCode == 0, run.err.constData());
        const Run local = tdstudio({"--info", fixture});
        QCOMPARE(QString::fromUtf8(run.out).section('\n', 1),
                 QString::fromUtf8(local.out).section('\n', 1));  // all but the path line

        run = tdstudio({"--diff", fixture, url});
        QVERIFY2(run.exitCode == 0, (run.out + run.err).constData());
        const QString other = scratch_.path() + "/other.tdz";
        run = tdstudio({"--save", server.url() + "/simple.tdz", other});
        QVERIFY2(run.exitCode == 0, run.err.constData());
        QVERIFY(tensordict::compare(tensordict::load(other.toStdString()),
                                    tensordict::load(fixture.toStdString()))
                    .equal());
        // A changed copy on the server: the diff says what differs, exit 1.
        QVERIFY(QFile::remove(served.path() + "/simple.tdz"));
        run = tdstudio(
            {"--save", testsupport::fixturePath("nested3"), served.path() + "/simple.tdz"});
        QVERIFY2(run.exitCode == 0, run.err.constData());
        run = tdstudio({"--diff", fixture, url});
        QVERIFY2(run.exitCode == 1, (run.out + run.err).constData());
        QVERIFY2(run.out.endsWith("different\n"), run.out.constData());
        // Nothing there: the URL and the server's answer, exit 1.
        run = tdstudio({"--info", server.url() + "/missing.tdz"});
        QVERIFY2(run.exitCode == 1 && run.err.contains("/missing.tdz: HTTP 404 Not Found"),
                 run.err.constData());
    }

    // A server's credentials come from tdstudio's environment: without
    // them a refusal that says which variables to set; with them every
    // command reads; headers that cannot be sent stop the program before
    // any request, and leave --version alone.
    void httpSettingsComeFromTheEnvironment() {
        QTemporaryDir served;
        QVERIFY(served.isValid());
        QVERIFY(QFile::copy(testsupport::fixturePath("archive_simple.tdz"),
                            served.path() + "/simple.tdz"));
        testsupport::NginxServer server(served.path(), QString(R"(
        location /private/ {
            alias %1/;
            if ($http_authorization != "Bearer t0ken") { return 401; }
            if ($http_x_team != "vision") { return 401; }
        })")
                                                           .arg(served.path()));
        QVERIFY2(server.isRunning(), qPrintable(server.error()));
        const QString url = server.url() + "/private/simple.tdz";

        Run run = tdstudio({"--info", url});
        QVERIFY2(run.exitCode == 1 && run.err.contains("HTTP 401 Unauthorized") &&
                     run.err.contains("TDSTUDIO_HTTP_BEARER"),
                 run.err.constData());
        QProcessEnvironment credentials;
        credentials.insert("TDSTUDIO_HTTP_BEARER", "t0ken");
        credentials.insert("TDSTUDIO_HTTP_HEADERS", "X-Team: vision\n");
        run = tdstudio({"--info", url}, true, credentials);
        QVERIFY2(run.exitCode == 0, run.err.constData());
        run = tdstudio({"--check", url}, true, credentials);
        QVERIFY2(run.exitCode == 0, (run.out + run.err).constData());
        // The window (a module of its own) is given them too: it opens the
        // URL and is saved once it shows it; without them it cannot.
        const QString png = scratch_.path() + "/private.png";
        run = tdstudio({url, "--screenshot", png}, false, credentials);
        QVERIFY2(run.exitCode == 0 && !QImage(png).isNull(), run.err.constData());
        run = tdstudio({url, "--screenshot", png}, false);
        QVERIFY2(run.exitCode == 1 && run.err.contains("401"), run.err.constData());

        const int before = server.requests().size();
        QProcessEnvironment bad = credentials;
        bad.insert("TDSTUDIO_HTTP_HEADERS", "X-Team: vision\nX-Team vision");
        run = tdstudio({"--info", url}, true, bad);
        QVERIFY2(run.exitCode == 2 && run.err.contains("TDSTUDIO_HTTP_HEADERS") &&
                     run.err.contains("line 2"),
                 run.err.constData());
        QCOMPARE(server.requests().size(), before);
        QCOMPARE(tdstudio({"--version"}, true, bad).exitCode, 0);
    }

    // --info, --check, --diff and --save take s3:// locations (s3rver,
    // started here), credentials and endpoint from the environment.
    void commandsTakeS3Locations() {
        testsupport::S3Server server("cli");
        QVERIFY2(server.isRunning(), qPrintable(server.error()));
        const QString fixture = testsupport::fixturePath("archive_simple.tdz");
        QString error;
        QVERIFY2(server.put(fixture, "runs/simple.tdz", &error), qPrintable(error));
        QVERIFY2(server.put(testsupport::fixturePath("nested3"), "runs/nested3", &error),
                 qPrintable(error));
        QProcessEnvironment aws;
        aws.insert("AWS_ACCESS_KEY_ID", server.accessKey());
        aws.insert("AWS_SECRET_ACCESS_KEY", server.secretKey());
        aws.insert("AWS_ENDPOINT_URL", server.endpoint());
        aws.insert("AWS_SHARED_CREDENTIALS_FILE", scratch_.path() + "/none");
        const QString location = "s3://cli/runs/simple.tdz";

        Run run = tdstudio({"--info", location}, true, aws);
        QVERIFY2(run.exitCode == 0, run.err.constData());
        const Run local = tdstudio({"--info", fixture});
        QCOMPARE(QString::fromUtf8(run.out).section('\n', 1),
                 QString::fromUtf8(local.out).section('\n', 1));  // all but the path line
        // A memmap directory through its meta.json files, no listing.
        run = tdstudio({"--info", "s3://cli/runs/nested3/"}, true, aws);
        QVERIFY2(run.exitCode == 0, run.err.constData());
        QCOMPARE(QString::fromUtf8(run.out).section('\n', 1),
                 QString::fromUtf8(tdstudio({"--info", testsupport::fixturePath("nested3")}).out)
                     .section('\n', 1));
        run = tdstudio({"--check", location}, true, aws);
        QVERIFY2(run.exitCode == 0, (run.out + run.err).constData());
        run = tdstudio({"--diff", fixture, location}, true, aws);
        QVERIFY2(run.exitCode == 0, (run.out + run.err).constData());
        const QString copy = scratch_.path() + "/from-s3.tdz";
        run = tdstudio({"--save", location, copy}, true, aws);
        QVERIFY2(run.exitCode == 0, run.err.constData());
        QVERIFY(tensordict::compare(tensordict::load(copy.toStdString()),
                                    tensordict::load(fixture.toStdString()))
                    .equal());
        // Nothing there: the location and S3's code, exit 1.
        run = tdstudio({"--info", "s3://cli/runs/missing.tdz"}, true, aws);
        QVERIFY2(run.exitCode == 1 && run.err.contains("s3://cli/runs/missing.tdz: S3 NoSuchKey"),
                 run.err.constData());
    }

    // A replay buffer dump on the command line: its facts in --info --json,
    // its valid rows saved oldest first (Python reads them back), --check's
    // verdict on files that disagree, and what is refused.
    void replayBuffers() {
        const QString dir = scratch_.path() + "/replay";
        QString out, error;
        QVERIFY2(testsupport::runPython({TDSTUDIO_TEST_SUPPORT_DIR "/make_replay.py", dir}, &out,
                                        &error),
                 qPrintable(error));
        const QJsonObject expected = QJsonDocument::fromJson(out.toUtf8()).object();
        for (const char* name : {"wrapped", "prioritized", "ted"}) {
            const QJsonObject want = expected[name].toObject();
            Run run = tdstudio({"--info", dir + "/" + name, "--json"});
            QVERIFY2(run.exitCode == 0, run.err.constData());
            const QJsonObject buffer = QJsonDocument::fromJson(run.out)["replay_buffer"].toObject();
            for (const char* field : {"capacity", "valid", "cursor", "write_count"})
                QCOMPARE(buffer[field].toInteger(), want[field].toInteger());
            QCOMPARE(buffer["sampler"].toString(), want["sampler"].toString());
            QCOMPARE(buffer["writer"].toString(), want["writer"].toString());
            QCOMPARE(buffer.contains("episodes"), want.contains("episodes"));
            if (want.contains("episodes"))
                QCOMPARE(buffer["episodes"].toArray().size(), want["episodes"].toArray().size());
        }
        // --valid-rows: the rows oldest first and the priorities, read back by Python.
        const QString saved = scratch_.path() + "/valid_rows";
        Run run = tdstudio({"--save", dir + "/prioritized", saved, "--valid-rows"});
        QVERIFY2(run.exitCode == 0, run.err.constData());
        QString report;
        QVERIFY2(testsupport::runPython({TDSTUDIO_TEST_SUPPORT_DIR "/verify_output.py", saved},
                                        &report, &error),
                 qPrintable(error));
        const QJsonObject leaves = QJsonDocument::fromJson(report.toUtf8())["leaves"].toObject();
        const QJsonObject want = expected["prioritized"].toObject()["leaves"].toObject();
        for (auto it = want.begin(); it != want.end(); ++it)
            QCOMPARE(leaves[it.key()]["sha256"].toString(),
                     it.value().toObject()["sha256"].toString());
        QCOMPARE(leaves["priority"]["shape"].toArray().at(0).toInteger(),
                 expected["prioritized"]["valid"].toInteger());
        // Every row, in storage order.
        run = tdstudio(
            {"--info", dir + "/wrapped", "--json", "--all-rows", "--storage-order", "--sha256"});
        QVERIFY2(run.exitCode == 0, run.err.constData());
        const QJsonDocument all = QJsonDocument::fromJson(run.out);
        QCOMPARE(all["replay_buffer"]["first_shown_row"].toInteger(), 0);
        QCOMPARE(all["batch_size"].toArray().at(0).toInteger(), 12);
        // --check: the stale writer is an error naming its file.
        run = tdstudio({"--check", dir + "/disagree"});
        QCOMPARE(run.exitCode, 1);
        QVERIFY2(run.out.contains("replay_cursor") && run.out.contains("writer/metadata.json"),
                 run.out.constData());
        run = tdstudio({"--check", dir + "/wrapped"});
        QVERIFY2(run.exitCode == 0, run.out.constData());
        // --valid-rows of what is not a replay buffer.
        run = tdstudio({"--save", dir + "/stack", scratch_.path() + "/x", "--valid-rows"});
        QCOMPARE(run.exitCode, 1);
        QVERIFY2(run.err.contains("not a replay buffer dump"), run.err.constData());
        QVERIFY(!QFileInfo::exists(scratch_.path() + "/x"));
    }

    // --series over a real torch run (tests/support/make_series.py): every
    // figure of every key and step within 1e-6 of numpy's, nulls where a key
    // is missing and for the first step, the frozen layer unchanged, the
    // folder in natural order (step-5 before step-10).
    void seriesFiguresMatchNumpy() {
        const QString dir = scratch_.path() + "/series";
        QString out, error;
        QVERIFY2(testsupport::runPython({TDSTUDIO_TEST_SUPPORT_DIR "/make_series.py", dir}, &out,
                                        &error),
                 qPrintable(error));
        const QJsonObject expected = QJsonDocument::fromJson(out.toUtf8()).object();
        Run run = tdstudio({"--series", dir, "--json"});
        QVERIFY2(run.exitCode == 0, run.err.constData());
        const QJsonObject got = QJsonDocument::fromJson(run.out).object();
        const QJsonArray steps = got["steps"].toArray();
        QCOMPARE(steps.size(), expected["steps"].toArray().size());
        for (int i = 0; i < steps.size(); ++i)
            QCOMPARE(QFileInfo(steps[i].toString()).fileName(),
                     expected["steps"].toArray()[i].toString());
        const QJsonObject keys = expected["keys"].toObject();
        QCOMPARE(got["keys"].toArray().size(), keys.size());
        int compared = 0;
        for (const QJsonValue& k : got["keys"].toArray()) {
            const QString key = k["key"].toArray()[0].toString();
            QVERIFY2(keys.contains(key), qPrintable(key));
            const QJsonArray want = keys[key].toArray(), have = k["steps"].toArray();
            QCOMPARE(have.size(), want.size());
            for (int s = 0; s < want.size(); ++s) {
                const QString where = QString("%1 at step %2").arg(key).arg(s);
                QVERIFY2(want[s].isNull() == have[s].isNull(), qPrintable(where));
                if (want[s].isNull())
                    continue;
                const QJsonObject w = want[s].toObject(), h = have[s].toObject();
                for (const QString field : {"count", "nan", "inf", "norm", "mean", "std", "min",
                                            "max", "max_abs_delta", "changed_fraction", "cosine"}) {
                    QVERIFY2(w[field].isNull() == h[field].isNull(),
                             qPrintable(where + " " + field));
                    const double a = w[field].toDouble(), b = h[field].toDouble();
                    QVERIFY2(std::fabs(a - b) <= 1e-6 * std::max(std::fabs(a), 1e-6),
                             qPrintable(QString("%1 %2: %3 against numpy's %4")
                                            .arg(where, field)
                                            .arg(b, 0, 'g', 17)
                                            .arg(a, 0, 'g', 17)));
                    ++compared;
                }
            }
        }
        QVERIFY(compared > 300);
        const auto ours = [&](const QString& key) {
            for (const QJsonValue& k : got["keys"].toArray())
                if (k["key"].toArray()[0].toString() == key)
                    return k["steps"].toArray();
            return QJsonArray();
        };
        // The frozen layer: nothing changed, all along.
        const QJsonArray frozen = ours("0.weight");
        QCOMPARE(frozen.size(), 5);
        for (int s = 1; s < frozen.size(); ++s)
            QCOMPARE(frozen[s]["changed_fraction"].toDouble(), 0.0);
        // The key added at the end: missing before.
        QVERIFY(ours("head.temperature").at(0).isNull());
        QVERIFY(!ours("head.temperature").at(4).isNull());
        // NaNs and an Inf counted apart, in the steps that have them.
        QCOMPARE(ours("probe.nan").at(2)["nan"].toInt(), 3);
        QCOMPARE(ours("probe.nan").at(3)["inf"].toInt(), 1);

        // The text form, and what is refused.
        run = tdstudio({"--series", dir + "/step-0.pt", dir + "/step-5.pt", "--key", "0.weight"});
        QVERIFY2(run.exitCode == 0, run.err.constData());
        QVERIFY2(run.out.contains("0.weight") && !run.out.contains("1.weight"),
                 run.out.constData());
        run = tdstudio({"--series", dir + "/step-0.pt"});
        QVERIFY2(run.exitCode == 1 && run.err.contains("two checkpoints or more"),
                 run.err.constData());
        run = tdstudio({"--series", dir + "/step-0.pt", dir + "/absent.pt"});
        QVERIFY2(run.exitCode == 1 && run.err.contains("absent.pt"), run.err.constData());
        run = tdstudio({"--series"});
        QCOMPARE(run.exitCode, 2);
    }

    // --info reads every format PyTorch users have, naming what it is.
    void infoReadsCheckpointsSafetensorsAndNumpy_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("expected");
        QTest::newRow("pt") << "state_dict.pt"
                            << "(torch)";
        QTest::newRow("legacy") << "legacy.pt"
                                << "(torch legacy)";
        QTest::newRow("safetensors") << "model.safetensors"
                                     << "(safetensors)";
        QTest::newRow("npy") << "array.npy"
                             << "(npy)";
        QTest::newRow("npz") << "arrays_deflated.npz"
                             << "(npz)";
    }

    void infoReadsCheckpointsSafetensorsAndNumpy() {
        QFETCH(QString, file);
        QFETCH(QString, expected);
        const Run run = tdstudio({"--info", testsupport::torchFixturesDir() + "/" + file});
        QVERIFY2(run.exitCode == 0, run.err.constData());
        QVERIFY2(QString::fromUtf8(run.out).section('\n', 0, 0).endsWith(expected),
                 run.out.constData());
    }

    // --diff as diff(1): 0 equal (a directory and its deflated archive), 1
    // different (saying what and where), 2 on an error; text and JSON.
    void diffExitCodesTextAndJson() {
        const QString a = scratch_.path() + "/diff-a", c = scratch_.path() + "/diff-c";
        const QString tdz = scratch_.path() + "/diff-a.tdz";
        testsupport::copyTree(testsupport::fixturePath("batch_4x2"), a);
        testsupport::copyTree(testsupport::fixturePath("batch_4x2"), c);
        QCOMPARE(tdstudio({"--save", a, tdz, "--compression", "deflate"}).exitCode, 0);

        Run run = tdstudio({"--diff", a, tdz});
        QVERIFY2(run.exitCode == 0, run.err.constData());
        QVERIFY2(run.out.endsWith("equal\n"), run.out.constData());

        // obs is [4, 2, 3] float32: element [2, 1, 2] (flat 17) gets 0.5 more.
        QFile obs(c + "/obs.memmap");
        QVERIFY(obs.open(QIODevice::ReadWrite));
        float value = 0;
        QVERIFY(obs.seek(17 * 4) && obs.read(reinterpret_cast<char*>(&value), 4) == 4);
        value += 0.5f;
        QVERIFY(obs.seek(17 * 4) && obs.write(reinterpret_cast<const char*>(&value), 4) == 4);
        obs.close();
        run = tdstudio({"--diff", tdz, c});
        QVERIFY2(run.exitCode == 1, run.err.constData());
        const QString text = QString::fromUtf8(run.out);
        QVERIFY2(text.contains("changed:   [\"obs\"]\n    values: 1 of 24 elements differ, max abs "
                               "diff 0.5") &&
                     text.contains("first at [2, 1, 2]") && text.endsWith("different\n"),
                 qPrintable(text));
        // Within the tolerance it is equal again.
        QCOMPARE(tdstudio({"--diff", tdz, c, "--atol", "0.6"}).exitCode, 0);

        run = tdstudio({"--diff", tdz, c, "--json"});
        QCOMPARE(run.exitCode, 1);
        const QJsonObject doc = QJsonDocument::fromJson(run.out).object();
        QCOMPARE(doc.value("equal").toBool(true), false);
        QCOMPARE(doc.value("only_in_a").toArray().size(), 0);
        QCOMPARE(doc.value("only_in_b").toArray().size(), 0);
        const QJsonArray changed = doc.value("changed").toArray();
        QCOMPARE(changed.size(), 1);
        const QJsonObject obsChange = changed[0].toObject();
        QCOMPARE(obsChange.value("key").toArray(), QJsonArray({"obs"}));
        QCOMPARE(obsChange.value("kinds").toArray(), QJsonArray({"values"}));
        QCOMPARE(obsChange.value("differing").toInt(), 1);
        QCOMPARE(obsChange.value("max_abs_diff").toDouble(), 0.5);
        QCOMPARE(obsChange.value("first_index").toArray(), QJsonArray({2, 1, 2}));

        // A key dropped from B's metadata: only in A; exit 1.
        QFile meta(c + "/meta.json");
        QVERIFY(meta.open(QIODevice::ReadOnly));
        QByteArray json = meta.readAll();
        meta.close();
        json.replace(
            R"("done": {"device": "cpu", "shape": [4, 2, 1], "dtype": "torch.bool", "is_nested": false}, )",
            "");
        QVERIFY(meta.open(QIODevice::WriteOnly | QIODevice::Truncate));
        meta.write(json);
        meta.close();
        run = tdstudio({"--diff", a, c, "--json", "--key", "done"});
        QCOMPARE(run.exitCode, 1);
        QCOMPARE(QJsonDocument::fromJson(run.out).object().value("only_in_a").toArray(),
                 QJsonArray({QJsonArray({"done"})}));

        // Errors: a missing side, a key in neither.
        run = tdstudio({"--diff", a, scratch_.path() + "/nowhere"});
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.err.contains("nowhere"), run.err.constData());
        run = tdstudio({"--diff", a, tdz, "--key", "nokey"});
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.err.contains("nokey"), run.err.constData());
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

    // A tensor's line says what its listing properties say
    // (tensordict::nodeProperties(leaf, PropertyDetail::Listing)): dtype,
    // shape, nbytes, then its storage and, when it has one, its file. The
    // lines are written from the leaf's brief and the properties made from
    // it, so they are held to lines written out by hand too (as the
    // listing wrote them from each property before): every storage, a file
    // or none, and leaves of no bytes.
    void infoTensorLinesSayTheirListingProperties_data() {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QStringList>("lines");  // some of its lines, whole
        const QString torch = testsupport::torchFixturesDir();
        QTest::newRow("memmap directory")
            << testsupport::fixturePath("empty")
            << QStringList{
                   R"(["e"]  tensor  torch.float32  shape [0, 3]  0 bytes  no file (empty))",
                   R"(["keep"]  tensor  torch.float32  shape [2]  8 bytes  file keep.memmap)"};
        QTest::newRow("archive")
            << testsupport::fixturePath("archive_simple.tdz")
            << QStringList{
                   R"(["b", "c"]  tensor  torch.float32  shape [3, 2]  24 bytes  stored entry b/c.memmap)"};
        QTest::newRow("safetensors")
            << torch + "/model.safetensors"
            << QStringList{
                   R"(["embed.weight"]  tensor  torch.float32  shape [10, 4]  160 bytes  file model.safetensors)",
                   R"(["step"]  tensor  torch.int64  shape []  8 bytes  file model.safetensors)"};
        QTest::newRow("checkpoint")
            << torch + "/nested.pt"
            << QStringList{
                   R"(["pair", "0"]  tensor  torch.float32  shape [2]  8 bytes  stored entry nested/data/0)"};
        QTest::newRow("npz") << torch + "/arrays_deflated.npz" << QStringList();
        QTest::newRow("state dict") << torch + "/state_dict.pt" << QStringList();
    }

    void infoTensorLinesSayTheirListingProperties() {
        QFETCH(QString, path);
        QFETCH(QStringList, lines);
        QVERIFY2(QFileInfo::exists(path), qPrintable(path));
        const Run run = tdstudio({"--info", path});
        QVERIFY2(run.exitCode == 0, run.err.constData());
        const QStringList out = QString::fromUtf8(run.out).split('\n');
        for (const QString& line : lines)
            QVERIFY2(out.contains(line), qPrintable(line));
        const tensordict::TensorDict td = tensordict::load(path.toStdString());
        int leaves = 0;
        std::vector<const tensordict::Node*> nodes{&td.root()};
        while (!nodes.empty()) {
            const tensordict::Node* node = nodes.back();
            nodes.pop_back();
            for (const tensordict::Node* child : node->children())
                nodes.push_back(child);
            if (!node->isTensor())
                continue;
            ++leaves;
            QString keys;
            for (const std::string& key : node->keyPath())
                keys += (keys.isEmpty() ? "" : ", ") +
                        QString::fromStdString(tensordict::toJson(tensordict::Value(key)));
            QString start = "[" + keys + "]  tensor", file;
            for (const tensordict::NodeProperty& p :
                 tensordict::nodeProperties(*node, tensordict::PropertyDetail::Listing)) {
                const QString value = QString::fromStdString(tensordict::toJson(p.value));
                if (p.name == "dtype")
                    start += "  " + QString::fromStdString(p.value.asString());
                else if (p.name == "shape")
                    start += "  shape " + value;
                else if (p.name == "nbytes")
                    start += "  " + value + " bytes  ";
                else if (p.name == "file" && !p.value.isNull())
                    file = " " + QString::fromStdString(p.value.asString());
            }
            const auto line = std::find_if(out.begin(), out.end(),
                                           [&](const QString& l) { return l.startsWith(start); });
            QVERIFY2(line != out.end(), qPrintable(start));
            // A leaf of no bytes has no file: its storage says so, "no file (empty)".
            QVERIFY2(file.isEmpty() ? line->endsWith(")") : line->endsWith(file),
                     qPrintable(*line + " | " + file));
        }
        QVERIFY(leaves > 0);
    }

    // Long runs of leaves have their lines made on every core, a batch a
    // thread: every node is listed once, in the tree's order, with the
    // collections between the runs and a short run at the end.
    void infoListsAWideTreeInOrder() {
        tensordict::TensorDict td = tensordict::TensorDict::create();
        tensordict::Node& root = td.mutableRoot();
        for (int i = 0; i < 20000; ++i) {
            const std::string key = "k" + std::to_string(i);
            if (i % 9001 == 0) {
                tensordict::Node& inner = root.addTensorDict(key);
                for (int j = 0; j < 3; ++j)
                    inner.addBytes("v" + std::to_string(j), tensordict::DType::UInt8, {1},
                                   tensordict::ownedBytes(std::vector<std::uint8_t>{1}));
            } else {
                root.addBytes(key, tensordict::DType::UInt8, {1},
                              tensordict::ownedBytes(std::vector<std::uint8_t>{2}));
            }
        }
        const QString path = scratch_.path() + "/wide.tdz";
        tensordict::SaveOptions options;
        options.archive = true;
        tensordict::save(td, path.toStdString(), options);

        const Run run = tdstudio({"--info", path});
        QVERIFY2(run.exitCode == 0, run.err.constData());
        QStringList lines = QString::fromUtf8(run.out).split('\n', Qt::SkipEmptyParts);
        lines.removeFirst();  // the path and format
        QStringList expected{"[]  "};
        std::vector<const tensordict::Node*> order;
        const tensordict::TensorDict loaded = tensordict::load(path.toStdString());
        const std::function<void(const tensordict::Node&)> walk = [&](const tensordict::Node& n) {
            if (n.parent()) {
                QString keys;
                for (const std::string& key : n.keyPath())
                    keys += (keys.isEmpty() ? "\"" : ", \"") + QString::fromStdString(key) + '"';
                expected << "[" + keys + "]  ";
            }
            for (const tensordict::Node* child : n.children())
                walk(*child);
        };
        walk(loaded.root());
        QCOMPARE(expected.size(), 20000 + 3 * 3 + 1);
        QCOMPARE(lines.size(), expected.size());
        for (int i = 0; i < lines.size(); ++i)
            QVERIFY2(lines[i].startsWith(expected[i]),
                     qPrintable(QString("line %1: %2, not %3").arg(i).arg(lines[i], expected[i])));
    }

    // --stats: each leaf's values decoded (float8 included), against numpy's
    // figures from tests/support/make_low_precision.py.
    void infoStatsOfFloat8Leaves() {
        const QString file = scratch_.path() + "/low.safetensors";
        QString out, error;
        QVERIFY2(testsupport::runPython({TDSTUDIO_TEST_SUPPORT_DIR "/make_low_precision.py", file},
                                        &out, &error),
                 qPrintable(error));
        const QJsonObject expected =
            QJsonDocument::fromJson(out.toUtf8()).object()["tensors"].toObject();
        const Run json = tdstudio({"--info", file, "--json", "--stats"});
        QVERIFY2(json.exitCode == 0, json.err.constData());
        const QJsonArray leaves = QJsonDocument::fromJson(json.out).object()["leaves"].toArray();
        QCOMPARE(leaves.size(), expected.size());
        for (const QJsonValue& leaf : leaves) {
            const QString key = leaf["key"].toArray()[0].toString();
            const QJsonObject want = expected[key].toObject()["stats"].toObject();
            const QJsonObject got = leaf["stats"].toObject();
            QCOMPARE(got["nan"].toInteger(), want["nan"].toInteger());
            QCOMPARE(got["inf"].toInteger(), want["inf"].toInteger());
            QCOMPARE(got["min"].toDouble(), want["min"].toDouble());
            QCOMPARE(got["max"].toDouble(), want["max"].toDouble());
            QVERIFY2(qAbs(got["std"].toDouble() - want["std"].toDouble()) <=
                         1e-12 * want["std"].toDouble(),
                     qPrintable(key));
        }
        const Run text = tdstudio({"--info", file, "--stats"});
        QCOMPARE(text.exitCode, 0);
        QVERIFY2(text.out.contains("[\"f8_e4m3.every_code\"]  tensor  torch.float8_e4m3fn  shape "
                                   "[16, 16]  256 bytes  file low.safetensors  min -448.0  max "
                                   "448.0  mean "),
                 text.out.constData());
        QVERIFY(text.out.contains("  nan 2  inf 0\n"));
        const Run misplaced = tdstudio({"--save", file, scratch_.path() + "/x.tdz", "--stats"});
        QCOMPARE(misplaced.exitCode, 2);
        QVERIFY2(misplaced.err.contains("--stats"), misplaced.err.constData());
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

        // An entry name with a NUL in it: named with the byte escaped, and
        // no control character reaches the terminal.
        QFile fixture(testsupport::fixturePath("archive_simple.tdz"));
        QVERIFY(fixture.open(QIODevice::ReadOnly));
        QByteArray bytes = fixture.readAll();
        QCOMPARE(bytes.count("b/c.memmap"), 2);  // its local header and central directory
        bytes.replace("b/c.memmap", QByteArray("b/c\0memmap", 10));
        QFile hostile(dir.path() + "/hostile.tdz");
        QVERIFY(hostile.open(QIODevice::WriteOnly) && hostile.write(bytes) == bytes.size());
        hostile.close();
        const Run named = tdstudio({"--info", hostile.fileName()});
        QCOMPARE(named.exitCode, 1);
        QVERIFY2(named.err.contains("b/c\\x00memmap: unsafe entry name"), named.err.constData());
        QVERIFY(std::none_of(named.err.begin(), named.err.end(), [](char c) {
            return (c >= 0 && c < 0x20 && c != '\n') || c == 0x7f;
        }));

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
        const testsupport::LibzipReading libzip = testsupport::readWithLibzip(archive);
        QVERIFY2(libzip.error.isEmpty(), qPrintable(libzip.error));
        QVERIFY(libzip.read > 1 && libzip.read == libzip.entries);
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
        QCOMPARE(run.exitCode, 2);  // refused before anything is read
        QVERIFY(run.err.contains("--compression: \"zstd\" is not one of stored, deflate"));
        run = tdstudio(
            {"--save", testsupport::fixturePath("simple"), dir.path() + "/x", "--key", "nope"});
        QCOMPARE(run.exitCode, 1);
        QVERIFY(run.err.contains("nope"));
    }

    void commandLineErrors_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        const QString d = testsupport::fixturePath("simple");
        const QString x = scratch_.path() + "/never";  // must stay unwritten
        QTest::newRow("unknown option") << QStringList{"--bogus"} << "Unknown option 'bogus'.";
        QTest::newRow("unknown option with a path")
            << QStringList{d, "--bogus"} << "Unknown option 'bogus'.";
        QTest::newRow("level") << QStringList{"--save", d, x + ".tdz", "--level", "abc"}
                               << "--level: \"abc\" is not an integer (-1, or 0 to 9 for deflate)";
        QTest::newRow("threads") << QStringList{"--save", d, x, "--threads", "abc"}
                                 << "--threads: \"abc\" is not an integer (0 or more";
        QTest::newRow("view") << QStringList{d, "--select", "a", "--view", "bogus"}
                              << "--view: \"bogus\" is not one of table, image, plot, statistics";
        QTest::newRow("compression")
            << QStringList{"--save", d, x + ".tdz", "--compression", "zip64"}
            << "--compression: \"zip64\" is not one of stored, deflate, bzip2, lzma";
        QTest::newRow("rtol") << QStringList{"--diff", d, d, "--rtol", "-1"}
                              << "--rtol: \"-1\" is not a number of 0 or more";
        QTest::newRow("json without a mode")
            << QStringList{d, "--json"} << "--json needs --info or --diff";
        QTest::newRow("save option in the window")
            << QStringList{d, "--compression", "deflate"} << "--compression needs --save";
        QTest::newRow("two modes") << QStringList{"--info", d, "--save", d, x}
                                   << "--info and --save cannot be used together";
        QTest::newRow("window option with info")
            << QStringList{"--info", d, "--select", "a"}
            << "--select cannot be used with --info (it is for the window)";
        QTest::newRow("extra path") << QStringList{d, "x"} << "unexpected argument \"x\"";
        QTest::newRow("extra path to info")
            << QStringList{"--info", d, "x"} << "unexpected argument \"x\"";
        QTest::newRow("screenshot without a path")
            << QStringList{"--screenshot", x + ".png"} << "--screenshot needs a PATH to open";
        QTest::newRow("key") << QStringList{"--save", d, x, "--key", "[1]"}
                             << "--key: \"[1]\" is not a key";
    }
    void commandLineErrors() {
        // Refused before any application object exists: no display needed,
        // none asked for, and nothing read or written.
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const Run run = tdstudio(args);
        QCOMPARE(run.exitCode, 2);
        const QString err = QString::fromUtf8(run.err);
        QVERIFY2(err.startsWith("Usage: tdstudio "), qPrintable(err));
        QVERIFY2(err.contains("\ntdstudio: " + message), qPrintable(err));
        QVERIFY2(!err.contains("platform plugin", Qt::CaseInsensitive) &&
                     !err.contains("display", Qt::CaseInsensitive),
                 qPrintable(err));
        QVERIFY(run.out.isEmpty());
        QVERIFY(QDir(scratch_.path()).entryList({"never*"}, QDir::AllEntries).isEmpty());
    }

    void helpAndVersionNeedNoDisplay() {
        Run run = tdstudio({"--help"});
        QCOMPARE(run.exitCode, 0);
        QVERIFY(run.out.startsWith("Usage: tdstudio "));
        for (const char* option : {"--info", "--save", "--diff", "--compare", "--screenshot"})
            QVERIFY2(run.out.contains(option), option);
        QVERIFY(run.err.isEmpty());
        run = tdstudio({"--version"});
        QCOMPARE(run.exitCode, 0);
        QVERIFY(run.out.startsWith("tdstudio "));
        QVERIFY(run.out.contains("libtensordict "));
        QVERIFY(run.err.isEmpty());
    }

    void saveProgressInALogIsPlainLines() {
        // stderr is a pipe here, not a terminal: whole lines, no \r, no escapes.
        QTemporaryDir dir;
        const QString archive = dir.path() + "/out.tdz";
        const Run run = tdstudio({"--save", testsupport::fixturePath("nested3"), archive,
                                  "--compression", "deflate", "--threads", "2"});
        QVERIFY2(run.exitCode == 0, run.err.constData());
        QVERIFY2(!run.err.contains('\r') && !run.err.contains('\x1b'), run.err.constData());
        const QList<QByteArray> lines = run.err.trimmed().split('\n');
        QVERIFY2(lines.size() >= 2, run.err.constData());
        QVERIFY(lines[lines.size() - 2].startsWith("100.0%  "));
        QVERIFY(lines.last().startsWith("saved " + archive.toUtf8() + " in "));
        testsupport::verifyArchivesWithLibzip(dir.path());
    }

    void screenshotAppliesViewOverTheRememberedMode() {
        // The preview remembers the image mode for 2-D leaves; --view table
        // must still win: it is applied once the leaf is ready, after the
        // remembered mode was restored, and so becomes the one remembered.
        QTemporaryDir dir;
        const QString config = dir.path() + "/config/tdstudio/tdstudio.conf";
        QSettings(config, QSettings::IniFormat).setValue("preview/mode/2d", 1);  // image
        QProcessEnvironment env;
        env.insert("XDG_CONFIG_HOME", dir.path() + "/config");
        env.insert("QT_QPA_PLATFORM", "offscreen");
        const QString png = dir.path() + "/shot.png";
        const Run run = tdstudio({testsupport::fixturePath("simple"), "--select", "b/c", "--view",
                                  "table", "--screenshot", png},
                                 false, env);
        QVERIFY2(run.exitCode == 0, run.err.constData());
        QVERIFY(!QImage(png).isNull());
        QCOMPARE(QSettings(config, QSettings::IniFormat).value("preview/mode/2d").toInt(), 0);
    }

    void screenshotOfAMissingKeyStillRenders() {
        QTemporaryDir dir;
        const QString png = dir.path() + "/shot.png";
        const Run run = tdstudio(
            {testsupport::fixturePath("simple"), "--select", "nope", "--screenshot", png}, false);
        QCOMPARE(run.exitCode, 0);
        QVERIFY(run.err.contains("tdstudio: no key nope"));
        QVERIFY(!QImage(png).isNull());
    }

    void screenshotOfAComparison() {
        // Saved once the comparison is complete; a B that cannot be opened is
        // reported and still leaves a screenshot, with exit code 1.
        QTemporaryDir dir;
        const QString png = dir.path() + "/shot.png";
        Run run = tdstudio({testsupport::fixturePath("simple"), "--compare",
                            testsupport::fixturePath("archive_simple.tdz"), "--select", "b/c",
                            "--screenshot", png},
                           false);
        QVERIFY2(run.exitCode == 0, run.err.constData());
        QVERIFY(!QImage(png).isNull());
        QVERIFY(QFile::remove(png));
        run = tdstudio({testsupport::fixturePath("simple"), "--compare", dir.path() + "/missing",
                        "--screenshot", png},
                       false);
        QCOMPARE(run.exitCode, 1);
        QVERIFY2(run.err.contains("tdstudio: " + dir.path().toUtf8() + "/missing"),
                 run.err.constData());
        QVERIFY(!QImage(png).isNull());
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
