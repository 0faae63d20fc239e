// The command line as parsed before any application object exists: every
// mode, every value converted, every mistake refused with the option's name
// and what it accepts; and --save's progress in its plain form for logs.

#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <thread>

#include "options.h"
#include "tensordict/save.h"
#include "testsupport.h"

namespace {

cli::ParseResult parse(QStringList args) {
    args.prepend("tdstudio");
    return cli::parseArguments(args, {"table", "image", "plot", "statistics"});
}

}  // namespace

class CliOptionsTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void window() {
        cli::ParseResult r = parse({});
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(r.options.mode, cli::Mode::Gui);
        QVERIFY(r.options.window.path.isEmpty());

        r = parse(
            {"data.tdz", "--select", "obs/pixels", "--view", "image", "--screenshot", "shot.png"});
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        const cli::WindowRequest& w = r.options.window;
        QCOMPARE(r.options.mode, cli::Mode::Gui);
        QCOMPARE(w.path, QString("data.tdz"));
        QCOMPARE(w.select, QStringList({"obs", "pixels"}));
        QCOMPARE(w.selectText, QString("obs/pixels"));
        QCOMPARE(w.view, std::optional<QString>("image"));
        QCOMPARE(w.screenshot, QString("shot.png"));
        QVERIFY(w.compare.isEmpty());
        QCOMPARE(w.width, 0);

        r = parse({"data.tdz", "--window-size", "1024x700"});
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(r.options.window.width, 1024);
        QCOMPARE(r.options.window.height, 700);

        r = parse({"a.tdz", "--compare", "b.tdz", "--select", "x"});
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(r.options.window.compare, QString("b.tdz"));

        r = parse({"d", "--select", "[\"sub/dir\", \"x\"]", "--view", "statistics"});
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(r.options.window.select, QStringList({"sub/dir", "x"}));
        QCOMPARE(r.options.window.view, std::optional<QString>("statistics"));
    }

    void qtArgumentsAreLeftToQApplication() {
        const cli::ParseResult r =
            parse({"-platform", "offscreen", "d", "-style=fusion", "--reverse", "-qwindowgeometry",
                   "800x600", "--select", "a"});
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(r.options.window.path, QString("d"));
        QCOMPARE(r.options.window.select, QStringList({"a"}));
        // After "--" everything is a path, even a name Qt would take.
        QCOMPARE(parse({"--", "-platform"}).options.window.path, QString("-platform"));
    }

    void info() {
        cli::ParseResult r = parse({"--info", "d"});
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(r.options.mode, cli::Mode::Info);
        QCOMPARE(r.options.info.path, QString("d"));
        QVERIFY(!r.options.info.json && !r.options.info.sha256);
        r = parse({"d", "--sha256", "--info", "--json"});
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QVERIFY(r.options.info.json && r.options.info.sha256);
    }

    void save() {
        cli::ParseResult r = parse({"--save", "src", "dst"});
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(r.options.mode, cli::Mode::Save);
        const cli::SaveRequest defaults = r.options.save;
        QCOMPARE(defaults.source, QString("src"));
        QCOMPARE(defaults.destination, QString("dst"));
        QVERIFY(!defaults.compression && defaults.level == -1 &&
                defaults.threads == int(std::max(1u, std::thread::hardware_concurrency())));
        QVERIFY(!defaults.archive && !defaults.atomic && defaults.robustKey &&
                !defaults.allowOutsideLinks && !defaults.skipObjects && defaults.keys.isEmpty());

        r = parse({"--save", "src", "dst", "--archive", "--compression", "bzip2", "--level", "9",
                   "--threads", "4", "--atomic", "--no-robust-key", "--allow-outside-links",
                   "--skip-objects", "--key", "a/b", "--key", "[\"c/d\"]"});
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        const cli::SaveRequest& s = r.options.save;
        QCOMPARE(s.compression, std::optional<int>(tensordict::kZipBzip2));
        QCOMPARE(s.level, 9);
        QCOMPARE(s.threads, 4);
        QVERIFY(s.archive && s.atomic && !s.robustKey && s.allowOutsideLinks && s.skipObjects);
        QCOMPARE(s.keys, QStringList({"a/b", "[\"c/d\"]"}));

        for (const auto& [name, method] : {std::pair{"stored", tensordict::kZipStored},
                                           {"deflate", tensordict::kZipDeflate},
                                           {"lzma", tensordict::kZipLzma}}) {
            r = parse({"--save", "s", "d", "--compression", name});
            QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
            QCOMPARE(r.options.save.compression, std::optional<int>(method));
        }
        r = parse({"--save", "s", "d", "--compression", "deflate", "--level", "-1"});
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(r.options.save.level, -1);

        // Formats; shard sizes as transformers counts them (GB = 10^9, GiB = 2^30).
        r = parse({"--save", "s", "d"});
        QCOMPARE(r.options.save.format, std::nullopt);
        QCOMPARE(r.options.save.maxShardSize, std::uint64_t(5'000'000'000));
        r = parse({"--save", "s", "d", "--format", "safetensors"});
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(r.options.save.format, std::optional(tensordict::SaveFormat::Safetensors));
        for (const auto& [text, bytes] : {std::pair{"5GB", 5'000'000'000ull},
                                          {"2GiB", 2ull << 30},
                                          {"500mb", 500'000'000ull},
                                          {"1.5KiB", 1536ull},
                                          {"123", 123ull},
                                          {"64 MiB", 64ull << 20}}) {
            r = parse({"--save", "s", "d", "--format", "hf", "--max-shard-size", text});
            QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
            QCOMPARE(r.options.save.format, std::optional(tensordict::SaveFormat::HuggingFace));
            QCOMPARE(r.options.save.maxShardSize, std::uint64_t(bytes));
        }
    }

    void diff() {
        cli::ParseResult r = parse({"--diff", "a", "b"});
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(r.options.mode, cli::Mode::Diff);
        QCOMPARE(r.options.diff.a, QString("a"));
        QCOMPARE(r.options.diff.b, QString("b"));
        QCOMPARE(r.options.diff.rtol, 0.0);
        QCOMPARE(r.options.diff.atol, 0.0);
        QVERIFY(!r.options.diff.equalNan && !r.options.diff.json);

        r = parse({"--diff", "a", "b", "--rtol", "1e-5", "--atol", "0.5", "--equal-nan", "--key",
                   "x/y", "--key", "z", "--json", "--threads", "3"});
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        const cli::DiffRequest& d = r.options.diff;
        QCOMPARE(d.rtol, 1e-5);
        QCOMPARE(d.atol, 0.5);
        QVERIFY(d.equalNan && d.json);
        QCOMPARE(d.keys, QStringList({"x/y", "z"}));
        QCOMPARE(d.threads, 3);
    }

    void check() {
        cli::ParseResult r = parse({"--check", "data.tdz"});
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(r.options.mode, cli::Mode::Check);
        QCOMPARE(r.options.check.path, QString("data.tdz"));
        QVERIFY(!r.options.check.json && !r.options.check.repair && !r.options.check.dryRun);
        r = parse({"--check", "d", "--json", "--threads", "2", "--repair", "--dry-run"});
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QVERIFY(r.options.check.json && r.options.check.repair && r.options.check.dryRun);
        QCOMPARE(r.options.check.threads, 2);
    }

    void series() {
        cli::ParseResult r = parse({"--series", "runs/"});
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(r.options.mode, cli::Mode::Series);
        QCOMPARE(r.options.series.paths, QStringList({"runs/"}));
        r = parse({"--series", "a.pt", "b.pt", "c.pt", "--key", "model", "--key", "[\"x/y\"]",
                   "--json", "--threads", "2"});
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        const cli::SeriesRequest& s = r.options.series;
        QCOMPARE(s.paths, QStringList({"a.pt", "b.pt", "c.pt"}));
        QCOMPARE(s.keys, QStringList({"model", "[\"x/y\"]"}));
        QVERIFY(s.json);
        QCOMPARE(s.threads, 2);
    }

    void helpAndVersion() {
        for (const char* help : {"--help", "-h", "-?"})
            QCOMPARE(parse({help}).options.mode, cli::Mode::Help);
        for (const char* version : {"--version", "-v"})
            QCOMPARE(parse({version}).options.mode, cli::Mode::Version);
        // They win over whatever else is asked, as long as it is spelled right.
        QCOMPARE(parse({"--info", "--help"}).options.mode, cli::Mode::Help);
        QVERIFY(!parse({"--help", "--bogus"}).error.isEmpty());
        const QString help = cli::helpText();
        QVERIFY(help.startsWith(cli::usageText()));
        for (const char* option : {"--info", "--save", "--diff", "--rtol", "--compare", "--view"})
            QVERIFY2(help.contains(option), option);
        QVERIFY(!help.contains("<executable_name>"));
    }

    void errors_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("error");
        auto row = [](const char* name, const QStringList& args, const QString& error) {
            QTest::newRow(name) << args << error;
        };
        row("unknown option", {"--bogus"}, "Unknown option 'bogus'.");
        row("missing value", {"--save", "a", "b", "--level"}, "Missing value after '--level'.");
        row("level not a number", {"--save", "a", "b", "--level", "abc"},
            "--level: \"abc\" is not an integer (-1, or 0 to 9 for deflate)");
        row("level out of range", {"--save", "a", "b", "--compression", "lzma", "--level", "10"},
            "--level: 10 is out of range (-1, or 0 to 9 for lzma)");
        row("bzip2 level 0", {"--save", "a", "b", "--compression", "bzip2", "--level", "0"},
            "--level: 0 is out of range (-1, or 1 to 9 for bzip2)");
        row("unknown format", {"--save", "a", "b", "--format", "gguf"},
            "--format: \"gguf\" is not one of tensordict, safetensors, hf");
        row("shard size without hf", {"--save", "a", "b", "--max-shard-size", "5GB"},
            "--max-shard-size needs --format hf");
        row("shard size not a size",
            {"--save", "a", "b", "--format", "hf", "--max-shard-size", "big"},
            "--max-shard-size: \"big\" is not a size (such as 5GB, 500MB, 2GiB or a number of "
            "bytes above 0)");
        row("shard size 0", {"--save", "a", "b", "--format", "hf", "--max-shard-size", "0"},
            "--max-shard-size: \"0\" is not a size (such as 5GB, 500MB, 2GiB or a number of "
            "bytes above 0)");
        row("safetensors archive", {"--save", "a", "b", "--format", "safetensors", "--archive"},
            "--format safetensors writes safetensors: --archive and --compression apply to "
            "tensordicts only");
        row("level when stored", {"--save", "a", "b", "--level", "3"},
            "--level needs --compression deflate, bzip2 or lzma");
        row("level twice",
            {"--save", "a", "b", "--compression", "deflate", "--level", "1", "--level", "2"},
            "--level is given more than once");
        row("threads not a number", {"--save", "a", "b", "--threads", "abc"},
            "--threads: \"abc\" is not an integer (0 or more; 0 or 1: one)");
        row("threads negative", {"--diff", "a", "b", "--threads", "-1"},
            "--threads: -1 is out of range (0 or more; 0: one per core)");
        row("compression", {"--save", "a", "b", "--compression", "zstd"},
            "--compression: \"zstd\" is not one of stored, deflate, bzip2, lzma");
        row("view", {"d", "--select", "x", "--view", "bogus"},
            "--view: \"bogus\" is not one of table, image, plot, statistics");
        row("view without select", {"d", "--view", "table"},
            "--view needs --select (the leaf to show)");
        row("view with compare", {"d", "--compare", "b", "--select", "x", "--view", "plot"},
            "--view cannot be used with --compare (the comparison replaces the preview)");
        row("select without path", {"--select", "x"}, "--select needs a PATH to open");
        row("screenshot without path", {"--screenshot", "f.png"},
            "--screenshot needs a PATH to open");
        row("compare without path", {"--compare", "b"}, "--compare needs a PATH to open");
        row("empty screenshot", {"d", "--screenshot", ""}, "--screenshot needs a FILE");
        row("window size not a size", {"d", "--window-size", "1024"},
            "--window-size: \"1024\" is not WIDTHxHEIGHT (such as 1024x700)");
        row("window size too small", {"d", "--window-size", "320x200"},
            "--window-size: 320x200 is out of range (640x480 to 16384x16384)");
        row("window size with info", {"--info", "d", "--window-size", "800x600"},
            "--window-size cannot be used with --info (it is for the window)");
        row("select not a key", {"d", "--select", "[1]"},
            "--select: \"[1]\" is not a key (a/b, or a JSON list of strings such as [\"a/b\", "
            "\"c\"])");
        row("key not json", {"--save", "a", "b", "--key", "[\"a\""},
            "--key: \"[\"a\"\" is not a key (a/b, or a JSON list of strings such as [\"a/b\", "
            "\"c\"])");
        row("empty key", {"--diff", "a", "b", "--key", ""},
            "--key: \"\" is not a key (a/b, or a JSON list of strings such as [\"a/b\", \"c\"])");
        row("rtol", {"--diff", "a", "b", "--rtol", "x"},
            "--rtol: \"x\" is not a number of 0 or more (such as 1e-5)");
        row("atol negative", {"--diff", "a", "b", "--atol", "-1e-3"},
            "--atol: \"-1e-3\" is not a number of 0 or more (such as 1e-5)");
        row("atol infinite", {"--diff", "a", "b", "--atol", "inf"},
            "--atol: \"inf\" is not a number of 0 or more (such as 1e-5)");
        row("json alone", {"--json"}, "--json needs --info or --diff or --check or --series");
        row("sha256 with a path", {"d", "--sha256"}, "--sha256 needs --info");
        row("key in the window", {"d", "--key", "a"}, "--key needs --save or --diff or --series");
        row("threads in the window", {"d", "--threads", "2"},
            "--threads needs --save or --diff or --check or --series");
        row("series without steps", {"--series"},
            "--series needs checkpoints F1 F2 ... or a FOLDER of them");
        row("series and diff", {"--series", "--diff", "a", "b"},
            "--diff and --series cannot be used together");
        row("sha256 with series", {"--series", "a", "b", "--sha256"},
            "--sha256 cannot be used with --series (only with --info)");
        row("series threads", {"--series", "a", "b", "--threads", "x"},
            "--threads: \"x\" is not an integer (0 or more; 0: one per core)");
        row("series key", {"--series", "a", "b", "--key", "[1]"},
            "--key: \"[1]\" is not a key (a/b, or a JSON list of strings such as [\"a/b\", "
            "\"c\"])");
        row("check without path", {"--check"}, "--check needs a PATH");
        row("repair without check", {"d", "--repair"}, "--repair needs --check");
        row("dry run without repair", {"--check", "d", "--dry-run"},
            "--dry-run needs --repair (--check alone changes nothing)");
        row("check and diff", {"--check", "--diff", "a", "b"},
            "--diff and --check cannot be used together");
        row("repair with info", {"--info", "d", "--repair"},
            "--repair cannot be used with --info (only with --check)");
        row("atomic in the window", {"d", "--atomic"}, "--atomic needs --save");
        row("rtol with save", {"--save", "a", "b", "--rtol", "1"},
            "--rtol cannot be used with --save (only with --diff)");
        row("sha256 with diff", {"--diff", "a", "b", "--sha256"},
            "--sha256 cannot be used with --diff (only with --info)");
        row("screenshot with info", {"--info", "d", "--screenshot", "f"},
            "--screenshot cannot be used with --info (it is for the window)");
        row("info and save", {"--info", "--save", "a", "b"},
            "--info and --save cannot be used together");
        row("save and diff", {"--save", "--diff", "a", "b"},
            "--save and --diff cannot be used together");
        row("info without path", {"--info"}, "--info needs a PATH");
        row("info with two paths", {"--info", "a", "x"}, "unexpected argument \"x\"");
        row("save without dest", {"--save", "a"}, "--save needs SRC and DEST");
        row("save with three paths", {"--save", "a", "b", "x"}, "unexpected argument \"x\"");
        row("diff without b", {"--diff", "a"}, "--diff needs A and B");
        row("diff with three paths", {"--diff", "a", "b", "x"}, "unexpected argument \"x\"");
        row("two paths to open", {"a", "x"}, "unexpected argument \"x\"");
        row("valid rows with all rows", {"--save", "a", "b", "--valid-rows", "--all-rows"},
            "--valid-rows writes the valid rows oldest first: it cannot be used with --all-rows");
        row("valid rows with storage order",
            {"--save", "a", "b", "--valid-rows", "--storage-order"},
            "--valid-rows writes the valid rows oldest first: it cannot be used with "
            "--storage-order");
        row("valid rows with info", {"--info", "a", "--valid-rows"},
            "--valid-rows cannot be used with --info (only with --save)");
        row("all rows with check", {"--check", "a", "--all-rows"},
            "--all-rows cannot be used with --check (only with --info or --save or --diff, or the "
            "window)");
    }

    void replayRows() {
        cli::ParseResult r = parse({"--info", "dump"});
        QVERIFY(!r.options.replayRows.all && !r.options.replayRows.storageOrder);
        r = parse({"--info", "dump", "--all-rows", "--storage-order"});
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QVERIFY(r.options.replayRows.all && r.options.replayRows.storageOrder);
        r = parse({"dump", "--all-rows"});
        QVERIFY(r.options.replayRows.all && !r.options.replayRows.storageOrder);
        r = parse({"--save", "dump", "out", "--valid-rows"});
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QVERIFY(r.options.save.validRows);
        QVERIFY(!parse({"--save", "dump", "out"}).options.save.validRows);
    }
    void errors() {
        QFETCH(QStringList, args);
        QFETCH(QString, error);
        QCOMPARE(parse(args).error, error);
    }

    void keyPaths() {
        QString error;
        QCOMPARE(cli::parseKeyPath("a/b", &error), std::optional<QStringList>({"a", "b"}));
        QCOMPARE(cli::parseKeyPath("[\"a/b\", \"\"]", &error),
                 std::optional<QStringList>({"a/b", ""}));
        // An empty list is the root: the one tensor of an .npy or a bare .pt.
        QCOMPARE(cli::parseKeyPath("[]", &error), std::optional<QStringList>(QStringList()));
        for (const char* bad : {"", "[1]", "[\"a\"", "[\"a\", 2]"}) {
            error.clear();
            QVERIFY2(!cli::parseKeyPath(bad, &error), bad);
            QVERIFY(error.contains("is not a key"));
        }
    }

    void saveProgressForLogs() {
        // Not a terminal: whole lines, no carriage returns, no escapes.
        QTemporaryDir dir;
        cli::SaveRequest request;
        request.source = testsupport::fixturePath("dtypes");
        request.destination = dir.path() + "/out.tdz";
        request.compression = tensordict::kZipDeflate;
        QString text;
        QTextStream err(&text);
        QCOMPARE(cli::save(request, err, cli::ProgressStyle::Lines), 0);
        err.flush();
        QVERIFY2(!text.contains('\r') && !text.contains('\x1b'), qPrintable(text));
        const QStringList lines = text.split('\n', Qt::SkipEmptyParts);
        QVERIFY2(lines.size() >= 2 && lines.size() <= 12, qPrintable(text));
        QVERIFY2(lines[lines.size() - 2].startsWith("100.0%  "), qPrintable(text));
        QVERIFY2(lines.last().startsWith("saved " + request.destination + " in "),
                 qPrintable(text));
    }

    void saveProgressOnATerminal() {
        QTemporaryDir dir;
        cli::SaveRequest request;
        request.source = testsupport::fixturePath("dtypes");
        request.destination = dir.path() + "/out";
        QString text;
        QTextStream err(&text);
        QCOMPARE(cli::save(request, err, cli::ProgressStyle::Terminal), 0);
        err.flush();
        QVERIFY(text.startsWith('\r'));
        QVERIFY(text.contains("\x1b[K"));
        QVERIFY(text.endsWith("\x1b[K\n"));
        QCOMPARE(text.count('\n'), 1);  // one line, rewritten in place
    }

    void saveErrorsInLogs() {
        QTemporaryDir dir;
        cli::SaveRequest request;
        request.source = dir.path() + "/missing";
        request.destination = dir.path() + "/out";
        QString text;
        QTextStream err(&text);
        QCOMPARE(cli::save(request, err, cli::ProgressStyle::Lines), 1);
        err.flush();
        QVERIFY2(text.startsWith("tdstudio: ") && text.contains("missing"), qPrintable(text));
    }
};

QTEST_GUILESS_MAIN(CliOptionsTest)
#include "tst_cli_options.moc"
