// tdstudio: the command line, and the window loaded on demand. This
// executable needs Qt Core only; the window (Qt Gui, Widgets, Charts and
// what they bring) lives in tdstudio-window.so, which is loaded only to
// open the window or to check a --view name.

#include <dlfcn.h>

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QTextStream>

#include "application_name.h"
#include "huge_page_heap.h"
#include "load_settings.h"
#include "open_failure.h"
#include "options.h"
#include "tensordict/error.h"
#include "tensordict/version.h"
#include "tensordict/worker_threads.h"
#include "window_module.h"

namespace {

// The main heap and every worker thread's in huge pages (huge_page_heap.h).
void putHeapsInHugePages() {
    growHeapInHugePages(32u << 20);
    tensordict::setWorkerThreadStart(adviseThreadHeapInHugePages);
}

void printVersion() {
    QTextStream out(stdout);
    out << "tdstudio " << TDSTUDIO_VERSION << "\nlibtensordict "
        << QString::fromStdString(tensordict::version()) << '\n';
    for (const auto& [name, version] : tensordict::libraryVersions())
        out << QString::fromStdString(name) << ' ' << QString::fromStdString(version) << '\n';
}

int runConsole(int argc, char** argv, const cli::Options& options) {
    putHeapsInHugePages();
    QCoreApplication app(argc, argv);  // settings and threads; never a display
    nameApplication();
    QTextStream out(stdout), err(stderr);
    switch (options.mode) {
        case cli::Mode::Info: {
            cli::InfoRequest request = options.info;
            request.processEndsAfter = true;
            return cli::printInfo(request, out, err);
        }
        case cli::Mode::Save:
            return cli::save(options.save, err, cli::progressStyleForStderr());
        case cli::Mode::Diff:
            return cli::diff(options.diff, out, err);
        case cli::Mode::Check:
            return cli::check(options.check, out, err);
        case cli::Mode::Series:
            return cli::series(options.series, out, err);
        default:
            return 2;
    }
}

// tdstudio-window.so, found beside this executable (the build tree) or in
// the installed package's library folder, loaded at the first use.
class WindowModule {
public:
    // Why it could not be loaded, naming where it was looked for; empty
    // while it loads or was never needed.
    const QString& failure() const { return failure_; }
    QStringList viewNames() {
        QStringList names;
        if (load())
            viewNames_(&names);
        return names;
    }
    int run(int argc, char** argv, const cli::Options& options) {
        if (!load()) {
            QTextStream(stderr) << "tdstudio: cannot open the window: " << failure_ << '\n';
            return 1;
        }
        return run_(argc, argv, &options);
    }

private:
    bool load() {
        if (run_ || !failure_.isEmpty())
            return run_ != nullptr;
        const QString exe = QFileInfo("/proc/self/exe").canonicalFilePath();
        const QDir here = QFileInfo(exe).dir();
        QStringList tried;
        for (const QString& dir : {here.path(), here.filePath(TDSTUDIO_WINDOW_DIR_FROM_BIN)}) {
            const QString path = QDir::cleanPath(dir + "/tdstudio-window.so");
            if (!QFileInfo::exists(path)) {
                tried << path;
                continue;
            }
            void* handle = ::dlopen(QFile::encodeName(path).constData(), RTLD_NOW | RTLD_LOCAL);
            if (!handle) {
                failure_ = path + ": " + ::dlerror();
                return false;
            }
            run_ = reinterpret_cast<decltype(&tdstudio_window_run)>(
                ::dlsym(handle, "tdstudio_window_run"));
            viewNames_ = reinterpret_cast<decltype(&tdstudio_window_view_names)>(
                ::dlsym(handle, "tdstudio_window_view_names"));
            if (run_ && viewNames_)
                return true;  // kept loaded until the process ends
            ::dlclose(handle);
            run_ = nullptr;
            failure_ = path + ": not tdstudio's window module";
            return false;
        }
        failure_ = "no tdstudio-window.so in " + tried.join(" or ");
        return false;
    }

    decltype(&tdstudio_window_run) run_ = nullptr;
    decltype(&tdstudio_window_view_names) viewNames_ = nullptr;
    QString failure_;
};

}  // namespace

int main(int argc, char** argv) {
    // Everything is parsed and checked before any application object
    // exists: a mistake never needs a display, and the window opens only
    // for a valid command line.
    QStringList arguments;
    for (int i = 0; i < argc; ++i)
        arguments << QString::fromLocal8Bit(argv[i]);
    WindowModule window;
    const cli::ParseResult parsed =
        cli::parseArguments(arguments, [&window] { return window.viewNames(); });
    if (!parsed.error.isEmpty()) {
        QTextStream err(stderr);
        err << cli::usageText() << "tdstudio: " << parsed.error << '\n';
        if (!window.failure().isEmpty())  // --view's names come from the window
            err << "tdstudio: cannot load the window: " << window.failure() << '\n';
        return 2;
    }
    if (parsed.options.mode == cli::Mode::Help) {
        QTextStream(stdout) << cli::helpText();
        return 0;
    }
    if (parsed.options.mode == cli::Mode::Version) {
        printVersion();
        return 0;
    }
    cli::Options options = parsed.options;
    try {
        options.transport = transportOptionsFromEnvironment(options.insecure);
    } catch (const tensordict::Error& e) {  // a header that cannot be sent: nothing is sent
        QTextStream(stderr) << "tdstudio: " << commandLineFailure(e) << '\n';
        return 2;
    }
    if (options.insecure)
        QTextStream(stderr) << "tdstudio: warning: --insecure: HTTPS certificates are not "
                               "checked (for self-signed test servers only)\n";
    applyLoadSettings(options.replayRows, options.transport);
    switch (options.mode) {
        case cli::Mode::Gui:
            putHeapsInHugePages();
            return window.run(argc, argv, options);
        default:
            return runConsole(argc, argv, options);
    }
}
