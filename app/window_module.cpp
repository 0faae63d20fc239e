// The window, a module of its own: `tdstudio` loads it (window_module.h)
// only to open the window, so that the console modes never load Qt Gui,
// Qt Widgets and what they bring (half of a command's start-up time).

#include "window_module.h"

#include <QApplication>
#include <QTimer>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include "application_name.h"
#include "compare_panel.h"
#include "compare_view.h"
#include "document_page.h"
#include "leaf_view.h"
#include "load_settings.h"
#include "main_window.h"
#include "node_text.h"
#include "overview_panel.h"
#include "preview_panel.h"
#include "slice_export.h"

// The icon lives in tdstudio_ui, a static library: its resources must be
// registered by name or the linker drops them (outside any namespace, as
// Q_INIT_RESOURCE requires).
static void registerResources() {
    Q_INIT_RESOURCE(resources);
}

namespace {

// Calls `then` once, on the first of `signals` that `sender` emits.
template <typename Sender, typename... Signals>
void onFirst(Sender* sender, std::function<void()> then, Signals... signals) {
    auto* context = new QObject(sender);  // owns the connections
    auto once = [context, fired = std::make_shared<bool>(false), then] {
        if (std::exchange(*fired, true))
            return;
        context->deleteLater();
        then();
    };
    (QObject::connect(sender, signals, context, once), ...);
}

// Calls `done` once the mode the preview shows has drawn its leaf: a mode
// that draws in the background (image, plot, statistics) says when it has.
void whenViewDrawn(PreviewPanel* preview, const std::function<void()>& done) {
    LeafMode* mode = preview->leafView()->currentMode();
    if (mode && preview->canShow(preview->mode()) && mode->isDrawing())
        return onFirst(mode, done, &LeafMode::drawn, &LeafMode::sourceChanged);
    done();
}

// Calls `done` once the preview shows the selected node in full. A tensor
// leaf is mapped (or inflated) on a worker thread when it is selected; once
// it is ready, an explicit --view is applied: after the mode the preview
// restored for the leaf's shape, so that it wins.
void whenPreviewShown(MainWindow& window, std::optional<QString> view,
                      const std::function<void()>& done) {
    PreviewPanel* preview = window.documentPage()->previewPanel();
    const tensordict::Node* node = window.documentPage()->selectedNode();
    const bool leaf = node && node->isTensor() && !node->leaf().isNested;
    if (view && node && !leaf)
        std::fprintf(stderr, "tdstudio: --view: %s is not a tensor leaf\n",
                     qPrintable(nodetext::keyPathText(node->keyPath())));
    if (!leaf) {
        // A collection shows its overview once its subtree is summarised.
        OverviewPanel* overview = window.documentPage()->overviewPanel();
        if (window.documentPage()->showsOverview() && !overview->isReady())
            return onFirst(overview, done, &OverviewPanel::summaryReady);
        return done();
    }
    auto ready = [preview, node, view, done] {
        if (!preview->message().isEmpty()) {  // the leaf could not be read
            std::fprintf(stderr, "tdstudio: %s\n", qPrintable(preview->message()));
            return done();
        }
        if (view) {
            const int mode = leafModeIndex(*view);
            if (preview->canShow(mode))
                preview->setMode(mode);
            else
                std::fprintf(stderr, "tdstudio: --view: %s of shape %s has no %s view\n",
                             qPrintable(nodetext::keyPathText(node->keyPath())),
                             qPrintable(nodetext::shapeText(node->leaf().shape)),
                             qPrintable(*view));
        }
        whenViewDrawn(preview, done);
    };
    onFirst(preview, ready, &PreviewPanel::leafReady, &PreviewPanel::leafFailed);
}

// Calls `done` once the comparison panel shows the selected key in full:
// both leaves mapped on the worker, and the A, B and A - B images drawn.
void whenComparisonShown(MainWindow& window, const std::function<void()>& done) {
    ComparePanel* panel = window.compareView()->panel();
    auto drawn = [panel, done] {
        LeafMode* mode = panel->leafView()->currentMode();
        if (panel->showsValues() && mode && mode->isDrawing())
            return onFirst(mode, done, &LeafMode::drawn, &LeafMode::sourceChanged);
        done();
    };
    if (panel->isLoading())
        return onFirst(panel, drawn, &ComparePanel::leafReady);
    drawn();
}

int runWindow(int argc, char** argv, const cli::WindowRequest& request) {
    QApplication app(argc, argv);
    registerResources();
    nameApplication();  // application_name.h
    MainWindow window;

    // Saves the window once every event already posted (layouts, results
    // of worker threads) has been handled, then quits with `code`.
    auto screenshot = [&window, file = request.screenshot](int code) {
        QTimer::singleShot(0, &window, [&window, file, code] {
            QCoreApplication::processEvents();
            const QString error =
                slice_export::writePng(file, window.grab().toImage(), slice_export::PngEffort::Fast)
                    .text();
            if (!error.isEmpty())
                std::fprintf(stderr, "tdstudio: %s\n", qPrintable(error));
            QCoreApplication::exit(error.isEmpty() ? code : 1);
        });
    };
    // The window shows what was asked, or all it can of it (code 1): the
    // first to say so takes the screenshot.
    auto shown = [&request, screenshot, taken = std::make_shared<bool>(false)](int code) {
        if (!request.screenshot.isEmpty() && !std::exchange(*taken, true))
            screenshot(code);
    };
    auto failed = [&request, shown](const QString& message) {
        if (request.screenshot.isEmpty())
            return;  // the window says it
        std::fprintf(stderr, "tdstudio: %s\n", qPrintable(message));
        shown(1);
    };

    // What was asked applies to the first document only, not to later opens.
    const QMetaObject::Connection loaded = QObject::connect(
        &window, &MainWindow::documentLoaded, &window,
        [&window, &request, shown, failed] {
            std::optional<QString> view = request.view;
            if (!request.select.isEmpty() && !window.selectKeyPath(request.select)) {
                std::fprintf(stderr, "tdstudio: no key %s\n", qPrintable(request.selectText));
                view.reset();  // said once is enough
            }
            if (request.compare.isEmpty())
                return whenPreviewShown(window, view, [shown] { shown(0); });
            // The comparison takes the preview's place and keeps the selected key.
            QObject::connect(&window, &MainWindow::comparisonFailed, &window, failed,
                             Qt::SingleShotConnection);
            onFirst(
                &window, [&window, shown] { whenComparisonShown(window, [shown] { shown(0); }); },
                &MainWindow::comparisonFinished);
            window.compareWith(request.compare);
        },
        Qt::SingleShotConnection);
    QObject::connect(
        &window, &MainWindow::documentFailed, &window,
        [loaded, failed](const QString& message) {
            QObject::disconnect(loaded);  // a later open is the user's own
            failed(message);
        },
        Qt::SingleShotConnection);
    if (request.width > 0)
        window.resize(request.width, request.height);
    else if (!request.screenshot.isEmpty())
        window.resize(MainWindow::designedSize());  // whatever the screen (offscreen: 800x600)
    window.show();
    if (!request.path.isEmpty())
        window.openPath(request.path);
    return app.exec();
}

}  // namespace

extern "C" {

TDSTUDIO_WINDOW_EXPORT void tdstudio_window_view_names(QStringList* names) {
    for (const LeafModeType& type : leafModeTypes())
        *names << type.name;
}

TDSTUDIO_WINDOW_EXPORT int tdstudio_window_run(int argc, char** argv, const cli::Options* options) {
    applyLoadSettings(options->replayRows, options->transport);
    return runWindow(argc, argv, options->window);
}

}  // extern "C"
