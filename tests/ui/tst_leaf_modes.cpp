// A new way to show a leaf is one LeafMode class and one registration:
// the mode below is registered once, and the preview and the comparison
// show it as a tab, the View menu gets an entry with its shortcut, --view
// knows its name, the mode is remembered per kind of shape, and the
// screenshot's wait for a drawn view uses its drawn() signal.

#include <QLabel>
#include <QMenuBar>
#include <QSignalSpy>
#include <QTabWidget>
#include <QtTest>

#include "compare_panel.h"
#include "compare_view.h"
#include "document_page.h"
#include "leaf_view.h"
#include "main_window.h"
#include "options.h"
#include "preview_panel.h"
#include "testsupport.h"

namespace {

// Shows how many bytes the leaf holds, and the first of them in hex; for
// two leaves, both.
class ByteCountMode : public LeafMode {
public:
    explicit ByteCountMode(QWidget* parent) : label_(new QLabel(parent)) {}
    QWidget* widget() override { return label_; }
    bool canShow(const std::vector<std::int64_t>&, std::int64_t numel, bool) const override {
        return numel > 0;
    }
    // Leaves of five or more dimensions open here, above the table.
    int priority(const std::vector<std::int64_t>& shape, bool) const override {
        return shape.size() >= 5 ? 5 : 0;
    }
    void setLeaves(const ShownLeaves& leaves) override {
        leaves_ = leaves;
        drawnText_.clear();
    }
    void clear() override {
        leaves_ = {};
        label_->clear();
    }
    void activate() override {
        QString text = describe("A", leaves_.a);
        if (leaves_.isPair())
            text += "; " + describe("B", *leaves_.b);
        label_->setText(text);
        drawnText_ = text;
        Q_EMIT drawn();
    }
    bool isDrawing() const override { return drawnText_.isEmpty(); }
    static QString describe(const QString& name, const LeafSide& side) {
        return QString("%1: %2 bytes, first 0x%3")
            .arg(name)
            .arg(side.bytes.size)
            .arg(static_cast<unsigned>(side.bytes.data.get()[0]), 2, 16, QChar('0'));
    }

private:
    QLabel* label_;
    ShownLeaves leaves_;
    QString drawnText_;
};

constexpr int kModes = 5;  // the four built-in ones and this one

QTabWidget* tabsOf(LeafView* view) {
    return view->findChild<QTabWidget*>();
}

}  // namespace

class LeafModesTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() {
        testsupport::isolateSettings("tst_leaf_modes");
        QSettings().clear();  // every mode starts from its fallback
        // The one registration.
        registerLeafMode({"bytes", "Bytes",
                          [](QWidget* parent) { return std::make_unique<ByteCountMode>(parent); }});
    }

    void aRegisteredModeIsEverywhere() {
        QCOMPARE(int(leafModeTypes().size()), kModes);
        QCOMPARE(leafModeIndex("bytes"), kModes - 1);
        // --view takes the window's modes by name.
        QStringList names;
        for (const LeafModeType& t : leafModeTypes())
            names << t.name;
        const cli::ParseResult parsed =
            cli::parseArguments({"tdstudio", "d", "--select", "a", "--view", "bytes"}, names);
        QVERIFY2(parsed.error.isEmpty(), qPrintable(parsed.error));
        QCOMPARE(parsed.options.window.view, std::optional<QString>("bytes"));

        MainWindow w;
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QSignalSpy loaded(&w, &MainWindow::documentLoaded);
        w.openPath(testsupport::fixturePath("simple"));
        QTRY_COMPARE(loaded.count(), 1);

        // The View menu: an entry with the next shortcut.
        QAction* entry = nullptr;
        for (QAction* a : w.menuBar()->findChildren<QAction*>())
            if (a->text() == "&Bytes")
                entry = a;
        QVERIFY(entry);
        QCOMPARE(entry->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_5));

        // The preview: a tab, shown by the menu entry, drawn and remembered.
        PreviewPanel* preview = w.documentPage()->previewPanel();
        QCOMPARE(tabsOf(preview->leafView())->count(), kModes);
        QCOMPARE(tabsOf(preview->leafView())->tabText(kModes - 1), QString("Bytes"));
        QSignalSpy ready(preview, &PreviewPanel::leafReady);
        QVERIFY(w.selectKeyPath({"a"}));
        QTRY_COMPARE(ready.count(), 1);
        LeafMode* mode = preview->leafView()->modeAt(kModes - 1);
        QSignalSpy drawn(mode, &LeafMode::drawn);
        entry->trigger();
        QCOMPARE(preview->mode(), kModes - 1);
        QTRY_COMPARE(drawn.count(), 1);
        auto* label = qobject_cast<QLabel*>(mode->widget());
        const tensordict::Node* a = preview->node();
        QCOMPARE(label->text(),
                 QString("A: %1 bytes, first 0x").arg(a->leaf().nbytes) +
                     QString("%1").arg(unsigned(a->bytes().data.get()[0]), 2, 16, QChar('0')));
        QCOMPARE(
            QSettings().value("preview/mode/" + LeafView::shapeKind(a->leaf().shape)).toString(),
            QString("bytes"));

        // The comparison: the same tab, over both leaves.
        QSignalSpy finished(&w, &MainWindow::comparisonFinished);
        w.compareWith(testsupport::fixturePath("simple"));
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 30000);
        ComparePanel* panel = w.compareView()->panel();
        QCOMPARE(tabsOf(panel->leafView())->count(), kModes);
        QVERIFY(w.selectKeyPath({"a"}));  // it stays selected: both sides load
        QTRY_VERIFY(panel->showsValues());
        panel->setMode(kModes - 1);
        LeafMode* pairMode = panel->leafView()->modeAt(kModes - 1);
        QTRY_VERIFY(!pairMode->isDrawing());
        QVERIFY2(qobject_cast<QLabel*>(pairMode->widget())->text().contains("; B: "),
                 qPrintable(qobject_cast<QLabel*>(pairMode->widget())->text()));
    }

    // With no mode kept for a kind of shape, the enabled mode of the highest
    // priority opens: this mode for five dimensions, the image for a colour
    // image (either way round), the table for the rest, the first on a tie.
    void theModeOfHighestPriorityOpens() {
        QSettings().clear();
        tensordict::TensorDict td = tensordict::TensorDict::create();
        const auto add = [&td](const char* key, std::vector<std::int64_t> shape) {
            std::int64_t n = 1;
            for (std::int64_t d : shape)
                n *= d;
            td.mutableRoot().addBytes(key, tensordict::DType::UInt8, shape,
                                      tensordict::ownedBytes(std::vector<std::uint8_t>(n, 7)));
        };
        add("deep", {1, 2, 1, 2, 2});
        add("hwc", {8, 8, 3});
        add("chw", {4, 8, 8});
        add("matrix", {8, 8});
        add("row", {6});
        const auto owner = std::make_shared<const tensordict::TensorDict>(std::move(td));
        LeafView view("tst_leaf_modes/priority/");
        for (const auto& [key, expected] :
             std::vector<std::pair<const char*, int>>{{"deep", kModes - 1},
                                                      {"hwc", LeafView::ImageMode},
                                                      {"chw", LeafView::ImageMode},
                                                      {"matrix", LeafView::TableMode},
                                                      {"row", LeafView::TableMode}}) {
            const tensordict::Node* node = owner->root().child(key);
            ShownLeaves shown;
            shown.ownerA = owner;
            shown.a = {node, node->bytes()};
            view.setLeaves(shown);
            QVERIFY2(view.mode() == expected,
                     qPrintable(QString("%1 opened in mode %2").arg(key).arg(view.mode())));
        }
    }
};

QTEST_MAIN(LeafModesTest)
#include "tst_leaf_modes.moc"
