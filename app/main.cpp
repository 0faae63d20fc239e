#include <QApplication>
#include <QCommandLineParser>
#include <QTimer>
#include <cstdio>
#include <cstring>
#include <memory>

#include "command_line.h"
#include "main_window.h"
#include "preview_panel.h"
#include "tensordict/value.h"
#include "tensordict/version.h"

namespace {

void describeOptions(QCommandLineParser& parser) {
    parser.setApplicationDescription(
        "tdstudio: browse PyTorch tensordict memmap directories and .tdz archives.");
    parser.addHelpOption();
    parser.addOption(
        {{"v", "version"}, "Print the versions of tdstudio and of the libraries it uses."});
    parser.addPositionalArgument("path", "A .tdz archive or a memmap directory to open.", "[path]");
    parser.addOption(
        {"info",
         "Print every node, leaf and non-tensor value of PATH and exit (no display needed)."});
    parser.addOption(
        {"json", "With --info: one JSON document (the fixtures' .expected.json conventions)."});
    parser.addOption({"sha256", "With --info: the sha256 of each leaf's raw C-order bytes."});
    parser.addOption(
        {"screenshot", "Open PATH, save the main window as a PNG to FILE, and exit.", "FILE"});
    parser.addOption({"select", "Select the key K when PATH opens (a/b, or a JSON list).", "K"});
    parser.addOption(
        {"view", "Show the selected leaf as: table, image, plot or statistics.", "MODE"});
    parser.addOption(
        {"save",
         "Convert or export: tdstudio --save SRC DEST (a directory, or an archive for *.tdz)."});
    parser.addOption(
        {"archive", "With --save: write one .tdz zip archive whatever DEST is called."});
    parser.addOption(
        {"compression", "With --save: stored, deflate, bzip2 or lzma (archives only).", "M"});
    parser.addOption({"level", "With --save: compression level.", "N", "-1"});
    parser.addOption({"threads", "With --save: writer threads (0 or 1: one).", "N", "0"});
    parser.addOption({"atomic", "With --save: write under a temporary name and rename onto DEST."});
    parser.addOption({"no-robust-key", "With --save: raw key names as file names (legacy)."});
    parser.addOption({"allow-outside-links",
                      "With --save: copy files that the source links to from outside its "
                      "directory (refused by default)."});
    parser.addOption(
        {"key", "With --save: export only this subtree (a/b, or a JSON list); repeatable.", "K"});
}

bool wantsConsoleOnly(int argc, char** argv) {
    for (int i = 1; i < argc; ++i)
        if (!std::strcmp(argv[i], "--info") || !std::strcmp(argv[i], "--save") ||
            !std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h") ||
            !std::strcmp(argv[i], "--version") || !std::strcmp(argv[i], "-v"))
            return true;
    return false;
}

}  // namespace

int main(int argc, char** argv) {
    // Console modes must work without a display: no QApplication for them.
    std::unique_ptr<QCoreApplication> app(wantsConsoleOnly(argc, argv)
                                              ? new QCoreApplication(argc, argv)
                                              : new QApplication(argc, argv));
    QCoreApplication::setOrganizationName("tdstudio");
    QCoreApplication::setApplicationName("tdstudio");
    QCoreApplication::setApplicationVersion(TDSTUDIO_VERSION);

    QCommandLineParser parser;
    describeOptions(parser);
    parser.process(*app);
    const QStringList args = parser.positionalArguments();

    if (parser.isSet("version")) {
        QTextStream out(stdout);
        out << "tdstudio " << TDSTUDIO_VERSION << "\nlibtensordict "
            << QString::fromStdString(tensordict::version()) << '\n';
        for (const auto& [name, version] : tensordict::libraryVersions())
            out << QString::fromStdString(name) << ' ' << QString::fromStdString(version) << '\n';
        return 0;
    }

    if (parser.isSet("info")) {
        QTextStream out(stdout), err(stderr);
        if (args.size() != 1) {
            err << "tdstudio: --info needs exactly one PATH\n";
            return 2;
        }
        return cli::printInfo(args.front(), parser.isSet("json"), parser.isSet("sha256"), out, err);
    }

    if (parser.isSet("save")) {
        QTextStream err(stderr);
        if (args.size() != 2) {
            err << "tdstudio: --save needs SRC and DEST\n";
            return 2;
        }
        cli::SaveRequest request;
        request.source = args[0];
        request.destination = args[1];
        request.archive = parser.isSet("archive");
        request.compression = parser.value("compression");
        request.level = parser.value("level").toInt();
        request.threads = parser.value("threads").toInt();
        request.atomic = parser.isSet("atomic");
        request.robustKey = !parser.isSet("no-robust-key");
        request.allowOutsideLinks = parser.isSet("allow-outside-links");
        request.keys = parser.values("key");
        return cli::save(request, err);
    }

    MainWindow window;
    const QString select = parser.value("select");
    const QString view = parser.value("view");
    if (!select.isEmpty() || !view.isEmpty()) {
        QObject::connect(&window, &MainWindow::documentLoaded, &window, [&window, select, view] {
            QStringList path;
            if (select.startsWith('[')) {
                try {
                    const tensordict::Value keys =
                        tensordict::parseJson(select.toStdString(), "--select");
                    if (keys.isList())
                        for (const auto& k : keys.asList())
                            if (k.isString())
                                path << QString::fromStdString(k.asString());
                } catch (const std::exception& e) {
                    std::fprintf(stderr, "tdstudio: %s\n", e.what());
                }
            } else if (!select.isEmpty()) {
                path = select.split('/');
            }
            if (!path.isEmpty() && !window.selectKeyPath(path))
                std::fprintf(stderr, "tdstudio: no key %s\n", qPrintable(select));
            const QStringList modes{"table", "image", "plot", "statistics"};
            if (modes.contains(view)) {
                auto* preview = window.previewPanel();
                auto apply = [preview, mode = modes.indexOf(view)] {
                    preview->setMode(static_cast<PreviewPanel::Mode>(mode));
                };
                if (preview->isLoading())
                    QObject::connect(preview, &PreviewPanel::leafReady, preview, apply,
                                     Qt::SingleShotConnection);
                else
                    apply();
            }
        });
    }
    const QString screenshot = parser.value("screenshot");
    if (!screenshot.isEmpty()) {
        if (args.isEmpty()) {
            std::fprintf(stderr, "tdstudio: --screenshot needs a PATH to open\n");
            return 2;
        }
        // The slots below run from the event loop, after this block has ended:
        // they hold their own copies of `save` (which refers only to `window`,
        // alive until main() returns, and to a copy of `screenshot`).
        auto save = [&window, screenshot](int code) {
            // Let the view lay out and paint once before grabbing.
            QTimer::singleShot(1200, &window, [&window, screenshot, code] {
                const bool ok = window.grab().save(screenshot);
                if (!ok)
                    std::fprintf(stderr, "tdstudio: cannot write %s\n", qPrintable(screenshot));
                QCoreApplication::exit(ok ? code : 1);
            });
        };
        QObject::connect(&window, &MainWindow::documentLoaded, &window, [save] { save(0); });
        QObject::connect(&window, &MainWindow::documentFailed, &window,
                         [save](const QString& message) {
                             std::fprintf(stderr, "tdstudio: %s\n", qPrintable(message));
                             save(1);
                         });
    }
    window.show();
    if (!args.isEmpty())
        window.openPath(args.front());
    return app->exec();
}
