// The anchor of bench_start: a bare Qt Widgets program that does what
// `tdstudio DEMO --screenshot FILE` does, without tdstudio: a window with a
// tree of a few rows, shown, grabbed once its posted events are handled,
// saved as a PNG, and quit.
// usage: bare_window FILE.png

#include <QApplication>
#include <QStandardItemModel>
#include <QTimer>
#include <QTreeView>

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    if (argc < 2)
        return 2;
    QStandardItemModel model;
    model.setHorizontalHeaderLabels({"Key", "Kind", "Shape", "DType"});
    for (const char* key : {"obs", "action", "reward", "done", "next"})
        model.appendRow({new QStandardItem(key), new QStandardItem("tensor"),
                         new QStandardItem("[1000, 4]"), new QStandardItem("torch.float32")});
    QTreeView tree;
    tree.setModel(&model);
    tree.resize(1400, 860);
    tree.show();
    const QString file = QString::fromLocal8Bit(argv[1]);
    QTimer::singleShot(0, &tree, [&tree, file] {
        QCoreApplication::processEvents();
        QCoreApplication::exit(tree.grab().toImage().save(file, "PNG") ? 0 : 1);
    });
    return app.exec();
}
