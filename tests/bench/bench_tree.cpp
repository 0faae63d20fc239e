// The key tree at scale, in a real QTreeView (offscreen): 100 groups x 1000
// leaves = 100k keys, and one group of 100k leaves. Each figure is printed
// with its goal and, where the issue has one, the ratio against silx view on
// the same shape of data in HDF5 (0.67 s to expand one group, 32.9 s to
// expand all):
//   1. showing the document: setTensorDict and the first paint
//   2. expanding one 1000-child group (goal < 50 ms), and with all its rows fetched
//   3. expanding all (goal < 2 s), as the view fetches and with every key fetched
//   4. a filter over 100k keys until its first results are shown (goal < 200 ms)
//   5. scrolling page by page through the 100k-leaf group ("keeps up": well under 16 ms)
// usage: bench_tree [--rounds N] [--screenshot FILE.png] [SCRATCH_DIR]
//   --screenshot: the main window filtered by "leaf_0999" over 100 x 1000, as a PNG

#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QLineEdit>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTreeView>
#include <algorithm>
#include <cstdio>
#include <memory>

#include "bench_support.h"
#include "document.h"
#include "document_page.h"
#include "key_filter_model.h"
#include "key_index.h"
#include "key_tree_model.h"
#include "main_window.h"
#include "testsupport.h"

namespace {

constexpr double kSilxExpandOneMs = 670;
constexpr double kSilxExpandAllMs = 32900;

double msSince(const QElapsedTimer& t) {
    return double(t.nsecsElapsed()) / 1e6;
}

// A document as the window shows it: loaded and indexed on the worker.
struct Loaded {
    std::shared_ptr<const tensordict::TensorDict> td;
    std::shared_ptr<const KeyIndex> keys;
};

Loaded load(const QString& dir) {
    Document document;
    QSignalSpy loaded(&document, &Document::loaded);
    document.open(dir);
    if (!loaded.wait(120000))
        qFatal("could not load %s", qPrintable(dir));
    return {document.tensordict(), document.keyIndex()};
}

// The tree as the main window builds it: the model behind the key filter, in a view.
struct Tree {
    explicit Tree(const Loaded& doc) {
        filter.setKeyModel(&model);
        QObject::connect(&filter, &KeyFilterModel::matchPathsShown, &view,
                         [this](const QModelIndexList& rows) {
                             for (const QModelIndex& row : rows)
                                 view.expand(row);
                         });
        view.setModel(&filter);
        view.setUniformRowHeights(true);
        view.resize(700, 900);
        view.show();
        QElapsedTimer t;
        t.start();
        model.setTensorDict(doc.td, "wide", doc.keys);
        view.expand(filter.index(0, 0));
        paint();
        showMs = msSince(t);
    }
    void paint() {
        QCoreApplication::processEvents();
        view.viewport()->repaint();
    }
    QModelIndex group(int row) { return filter.index(row, 0, filter.index(0, 0)); }

    KeyTreeModel model;
    KeyFilterModel filter;
    QTreeView view;
    double showMs = 0;
};

// Runs `measure` `rounds` times on a fresh tree and returns the median in ms.
template <typename F>
double medianOf(int rounds, const Loaded& doc, F measure) {
    std::vector<double> ms;
    for (int r = 0; r < rounds; ++r) {
        Tree tree(doc);
        ms.push_back(measure(tree));
    }
    return bench::median(ms);
}

void report(const char* what, double ms, double goalMs, double silxMs = 0) {
    std::printf("  %-58s %9.2f ms  goal < %.0f ms (%s)", what, ms, goalMs,
                ms < goalMs ? "met" : "MISSED");
    if (silxMs > 0)
        std::printf("  silx view %.0f ms: %.0fx faster", silxMs, silxMs / ms);
    std::printf("\n");
}

// Time from setting `pattern` until its first matches are painted, and until the search ends.
std::pair<double, double> filterTimes(Tree& tree, const QString& pattern) {
    QElapsedTimer t;
    double firstMs = -1;
    QEventLoop firstShown;
    auto c = QObject::connect(&tree.filter, &KeyFilterModel::matchPathsShown, &firstShown, [&] {
        if (firstMs < 0) {
            tree.paint();
            firstMs = msSince(t);
        }
        firstShown.quit();
    });
    QSignalSpy finished(&tree.filter, &KeyFilterModel::searchFinished);
    t.start();
    tree.filter.setPattern(pattern);
    firstShown.exec();
    QObject::disconnect(c);
    if (finished.isEmpty() && !finished.wait(60000))
        qFatal("the search for %s did not finish", qPrintable(pattern));
    tree.paint();
    return {firstMs, msSince(t)};
}

void screenshot(const QString& dir, const QString& file) {
    MainWindow w;
    w.show();
    QSignalSpy loaded(&w, &MainWindow::documentLoaded);
    w.openPath(dir);
    if (!loaded.wait(120000))
        qFatal("could not open %s", qPrintable(dir));
    QSignalSpy finished(w.documentPage()->filterModel(), &KeyFilterModel::searchFinished);
    w.documentPage()->filterEdit()->setText("leaf_0999");
    if (!finished.wait(60000))
        qFatal("the filter did not finish");
    QCoreApplication::processEvents();
    w.grab().save(file);
    std::printf("screenshot: %s (%d matches)\n", qPrintable(file), finished.at(0).at(0).toInt());
}

}  // namespace

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QStringList args = app.arguments();
    QString shot;
    const qsizetype at = args.indexOf("--screenshot");
    if (at > 0 && at + 1 < args.size()) {
        shot = args.at(at + 1);
        args.remove(at, 2);
    }
    const bench::Args options = bench::parseArgs(args, 5, false);
    QTemporaryDir scratch(options.scratch.isEmpty() ? QDir::tempPath() + "/bench_tree-XXXXXX"
                                                    : options.scratch + "/bench_tree-XXXXXX");
    const QString wideDir = scratch.path() + "/wide", longDir = scratch.path() + "/long";
    QElapsedTimer t;
    t.start();
    // Leaves of 4 float32 (16-byte files), as small as leaves get.
    testsupport::writeWideTree(wideDir, 100, 1000, 4);
    testsupport::writeWideTree(longDir, 1, 100000, 4);
    std::printf("wrote 2 x 100k leaves in %.1f s\n", msSince(t) / 1000);

    t.restart();
    const Loaded wide = load(wideDir);
    const double loadMs = msSince(t);
    t.restart();
    const auto rebuilt = KeyIndex::build(wide.td);
    const double indexMs = msSince(t);
    const Loaded single = load(longDir);
    std::printf(
        "100 groups x 1000 leaves: load + index on the loader thread %.0f ms "
        "(of which the KeyIndex %.0f ms, %zu keys)\n",
        loadMs, indexMs, rebuilt->size());
    const int rounds = options.rounds;
    std::printf("medians of %d rounds, each on a fresh model and view:\n", rounds);

    report("show the document (setTensorDict + first paint)",
           medianOf(rounds, wide, [](Tree& tree) { return tree.showMs; }), 50);
    report("expand one 1000-child group (as the view fetches)",
           medianOf(rounds, wide,
                    [](Tree& tree) {
                        QElapsedTimer e;
                        e.start();
                        tree.view.expand(tree.group(42));
                        tree.paint();
                        return msSince(e);
                    }),
           50, kSilxExpandOneMs);
    report("expand one 1000-child group, all 1000 rows fetched",
           medianOf(rounds, wide,
                    [](Tree& tree) {
                        QElapsedTimer e;
                        e.start();
                        const QModelIndex group = tree.group(42);
                        while (tree.filter.canFetchMore(group))
                            tree.filter.fetchMore(group);
                        tree.view.expand(group);
                        tree.paint();
                        return msSince(e);
                    }),
           50, kSilxExpandOneMs);
    report("expand all (as the view fetches)",
           medianOf(rounds, wide,
                    [](Tree& tree) {
                        QElapsedTimer e;
                        e.start();
                        tree.view.expandAll();
                        tree.paint();
                        return msSince(e);
                    }),
           2000, kSilxExpandAllMs);
    report("expand all, every one of the 100k keys fetched",
           medianOf(rounds, wide,
                    [](Tree& tree) {
                        QElapsedTimer e;
                        e.start();
                        tree.model.fetchAll();
                        tree.view.expandAll();
                        tree.paint();
                        return msSince(e);
                    }),
           2000, kSilxExpandAllMs);

    for (const char* pattern : {"leaf_0999", "group_042", "LEAF_09", "leaf"}) {
        std::vector<double> first, all;
        for (int r = 0; r < rounds; ++r) {
            Tree tree(wide);
            const auto [firstMs, allMs] = filterTimes(tree, pattern);
            first.push_back(firstMs);
            all.push_back(allMs);
        }
        Tree tree(wide);
        filterTimes(tree, pattern);
        const QString what = QString("filter \"%1\" (%2 matches): first results shown")
                                 .arg(pattern)
                                 .arg(tree.filter.matchCount());
        report(qPrintable(what), bench::median(first), 200);
        std::printf("  %-58s %9.2f ms  (%zu rows handed to the view of 100k)\n",
                    "    ...all matches shown", bench::median(all),
                    std::size_t(tree.model.handedOverCount()));
    }

    // Page by page through the one group of 100k leaves, fetching as the view goes.
    {
        Tree tree(single);
        tree.view.expand(tree.group(0));
        tree.paint();
        QScrollBar* bar = tree.view.verticalScrollBar();
        std::vector<double> steps;
        QElapsedTimer whole;
        whole.start();
        while (tree.model.canFetchMore(tree.model.index(0, 0, tree.model.index(0, 0))) ||
               bar->value() < bar->maximum()) {
            QElapsedTimer e;
            e.start();
            bar->triggerAction(QAbstractSlider::SliderPageStepAdd);
            tree.paint();
            steps.push_back(msSince(e));
        }
        std::sort(steps.begin(), steps.end());
        const double p99 = steps[std::size_t(double(steps.size() - 1) * 0.99)];
        std::printf("  scroll through 1 group of 100k leaves: %zu page steps in %.2f s\n",
                    steps.size(), msSince(whole) / 1000);
        report("    per page step, median", bench::median(steps), 16);
        report("    per page step, 99th percentile", p99, 16);
        report("    per page step, slowest", steps.back(), 16);
    }

    if (!shot.isEmpty())
        screenshot(wideDir, shot);
    return 0;
}
