// A new format is one store class and one registration. The toy format
// below lives only in this suite and spans two files: NAME.halves names
// its tensors and holds the first half of each one's rows, NAME.halves.2
// the other half. Each tensor is assembled from two chunks in two records.
// Its store uses the library's seams as the library's own formats do: a
// format that is the container of its own leaves, and the gathering of a
// tensor from boxes of it.
// Registered once, it is opened by load(), shown by every view of the
// window, and taken by --info --sha256, --diff, --check and --save, with
// no line of the library or the application knowing it.
//
//   NAME.halves    "toy-halves 1\n"
//                  one line a tensor: KEY DTYPE DIM0 [DIM1 ...]\n  (DTYPE as torch
//                  names it, "float32"; DIM0 rows, the first ceil(DIM0 / 2) here)
//                  "\n"
//                  each tensor's first rows, C order, little-endian, one after another
//   NAME.halves.2  each tensor's other rows, one after another

#include <QCryptographicHash>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTextStream>
#include <QtTest>
#include <cstring>
#include <map>
#include <sstream>

#include "check_command.h"
#include "diff_command.h"
#include "document_page.h"
#include "formats/chunk_boxes.h"
#include "image_view.h"
#include "info_command.h"
#include "leaf_view.h"
#include "main_window.h"
#include "preview_panel.h"
#include "save_command.h"
#include "sources/mapping.h"
#include "statistics_view.h"
#include "tensor_table_model.h"
#include "tensordict/report.h"
#include "tensordict/store.h"
#include "tensordict/tensordict.h"
#include "testsupport.h"
#include "tree/node_builder.h"

using namespace tensordict;

namespace {

constexpr char kMagic[] = "toy-halves 1\n";
constexpr int kBoundMs = 60000;  // a bound for a hung run, not a timing

// The format and the container of its own leaves, each gathered from its
// two records.
class ToyHalvesStore final : public Container, public Store {
public:
    ToyHalvesStore(std::shared_ptr<const Transport> transport,
                   std::shared_ptr<const ByteSource> first, std::string location)
        : Store(static_cast<const Container&>(*this)),
          transport_(std::move(transport)),
          location_(std::move(location)) {
        records_[0] = std::move(first);
    }

    std::string_view format() const override { return "toy halves"; }
    const std::string& location() const override { return location_; }
    std::string describe(const std::string& rel) const override {
        return rel.empty() ? location_ : location_ + ":" + rel;
    }
    std::optional<StorageInfo> stat(const std::string& rel) const override {
        const auto it = tensors_.find(rel);
        if (it == tensors_.end())
            return std::nullopt;
        StorageInfo s;
        s.kind = StorageKind::Chunks;
        s.path = rel;
        s.size = s.storedSize = it->second.bytes[0] + it->second.bytes[1];
        return s;
    }
    bool hasDirectory(const std::string&) const override { return false; }
    std::string read(const std::string& rel, std::uint64_t) const override {
        throw Error::notFound(describe(rel), "the toy format has no files of its own to read");
    }
    LeafBytes leafBytes(const StorageInfo& info, std::uint64_t nbytes, std::size_t) const override {
        LeafBytes out = allocateOwnedBuffer(nbytes);
        readLeafRange(info, 0, out.data.get(), nbytes);
        return out;
    }
    bool readsInPlace(const StorageInfo&) const override { return false; }
    LeafBytes leafBytesRange(const StorageInfo& info, std::uint64_t offset, std::uint64_t length,
                             std::size_t) const override {
        LeafBytes out = allocateOwnedBuffer(length);
        readLeafRange(info, offset, out.data.get(), length);
        return out;
    }
    // The range's part in each record, read from there (the library's
    // gathering of a tensor from boxes of it).
    void readLeafRange(const StorageInfo& info, std::uint64_t offset, std::byte* out,
                       std::size_t n) const override {
        const Tensor& t = tensorOf(info);
        if (offset > t.bytes[0] + t.bytes[1] || n > t.bytes[0] + t.bytes[1] - offset)
            throw Error::invalid(describe(info.path), "a range past the tensor");
        gatherBoxes(t.whole, {&t.boxes[0], &t.boxes[1]}, offset, n, out,
                    [&](std::size_t r, std::uint64_t from, std::byte* to, std::size_t bytes) {
                        records_[r]->readOnce(t.at[r] + from, to, bytes);
                    });
    }
    Value::List leafParts(const StorageInfo& info) const override {
        const Tensor& t = tensorOf(info);
        Value::List parts;
        for (int r = 0; r < 2; ++r) {
            Value::List offsets, sizes;
            for (std::size_t d = 0; d < t.whole.shape.size(); ++d) {
                offsets.push_back(Value(t.boxes[r].offsets[d]));
                sizes.push_back(Value(t.boxes[r].sizes[d]));
            }
            Value::Object part{
                {"file", Value(recordName(r))},
                {"offset", Value(static_cast<std::int64_t>(t.at[r]))},
                {"length", Value(static_cast<std::int64_t>(t.bytes[r]))},
                {"offsets", Value(std::move(offsets))},
                {"sizes", Value(std::move(sizes))},
            };
            parts.push_back(Value(std::move(part)));
        }
        return parts;
    }

    std::unique_ptr<Node> buildTree(const std::shared_ptr<const Store>& self) const override {
        records_[1] = transport_->open(location_ + ".2");
        const std::uint64_t headCap = std::min<std::uint64_t>(records_[0]->size(), 1 << 16);
        std::string head(headCap, '\0');
        records_[0]->readAt(0, head.data(), head.size());
        const auto end = head.find("\n\n");
        if (head.compare(0, std::strlen(kMagic), kMagic) != 0 || end == std::string::npos)
            throw Error::corrupt(location_, "not a toy-halves file");
        std::istringstream lines(head.substr(std::strlen(kMagic), end - std::strlen(kMagic)));
        std::uint64_t at[2] = {end + 2, 0};
        auto root = NodeBuilder::create(NodeKind::Container, "");
        NodeBuilder(*root).setClass("dict", {});
        NodeBuilder(*root).setStore(self);
        for (std::string line; std::getline(lines, line);) {
            std::istringstream words(line);
            std::string key, dtypeName;
            std::vector<std::int64_t> shape;
            words >> key >> dtypeName;
            for (std::int64_t d; words >> d;)
                shape.push_back(d);
            const std::optional<DType> dtype = dtypeFromString("torch." + dtypeName);
            if (key.empty() || !dtype || shape.empty())
                throw Error::corrupt(location_, "a tensor line \"" + line + "\"");
            Tensor t;
            t.whole = {shape, 1, itemSize(*dtype)};
            for (std::int64_t d : shape)
                t.whole.numel *= d;
            const std::int64_t firstRows = (shape[0] + 1) / 2;
            for (int r = 0; r < 2; ++r) {
                ChunkBox& box = t.boxes[r];
                box.offsets.assign(shape.size(), 0);
                box.sizes = shape;
                box.offsets[0] = r == 0 ? 0 : firstRows;
                box.sizes[0] = r == 0 ? firstRows : shape[0] - firstRows;
                box.numel = t.whole.numel / shape[0] * box.sizes[0];
                t.at[r] = at[r];
                t.bytes[r] = std::uint64_t(box.numel) * t.whole.itemSize;
                at[r] += t.bytes[r];
                if (at[r] > records_[r]->size())
                    throw Error::truncated(records_[r]->name(),
                                           "the rows of \"" + key + "\" end at byte " +
                                               std::to_string(at[r]) + ", past its " +
                                               std::to_string(records_[r]->size()));
            }
            auto n = NodeBuilder::create(NodeKind::Tensor, key);
            NodeBuilder b(*n);
            b.setStore(self);
            TensorLeaf& leaf = b.leaf();
            leaf.dtype = *dtype;
            leaf.shape = shape;
            leaf.numel = t.whole.numel;
            leaf.nbytes = t.bytes[0] + t.bytes[1];
            if (!tensors_.emplace(key, t).second)
                throw Error::corrupt(location_, "two tensors \"" + key + "\"");
            leaf.storage = *stat(key);
            NodeBuilder(*root).append(std::move(n));
        }
        return root;
    }

private:
    struct Tensor {
        BoxedShape whole;
        ChunkBox boxes[2];                        // each record's rows
        std::uint64_t at[2] = {}, bytes[2] = {};  // where they are in it
    };
    const Tensor& tensorOf(const StorageInfo& info) const {
        const auto it = tensors_.find(info.path);
        if (it == tensors_.end())
            throw Error::notFound(describe(info.path), "not a tensor of this file");
        return it->second;
    }
    std::string recordName(int r) const {
        const std::string name = location_.substr(location_.find_last_of('/') + 1);
        return r == 0 ? name : name + ".2";
    }

    std::shared_ptr<const Transport> transport_;
    std::string location_;
    // Set by buildTree(), which the loader calls once, before any leaf is read.
    mutable std::shared_ptr<const ByteSource> records_[2];
    mutable std::map<std::string, Tensor> tensors_;
};

class ToyHalvesFormat final : public StoreFormat {
public:
    std::string_view name() const override { return "toy halves"; }
    int score(const StoreProbe& probe) const override {
        return probe.source && probe.head.compare(0, std::strlen(kMagic), kMagic) == 0 ? 60 : 0;
    }
    std::shared_ptr<const Store> open(const StoreProbe& probe, const StoreOptions&) const override {
        return std::make_shared<ToyHalvesStore>(probe.transport, probe.source, probe.location);
    }
};

// ---- The suite's data, written by hand ----

struct Expected {
    QString key, dtype;
    std::vector<std::int64_t> shape;
    QByteArray bytes;  // the whole tensor, C order
    QString sha256() const {
        return QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex();
    }
};

template <typename T>
QByteArray bytesOf(const std::vector<T>& values) {
    return QByteArray(reinterpret_cast<const char*>(values.data()), int(values.size() * sizeof(T)));
}

std::vector<Expected> expectedTensors() {
    std::vector<float> weights(6 * 4);
    for (std::size_t i = 0; i < weights.size(); ++i)
        weights[i] = 0.5f * float(i) - 3.0f;
    std::vector<std::int16_t> counts{7, -2, 300, 41, -9};
    std::vector<std::uint8_t> image(9 * 16);
    for (std::size_t i = 0; i < image.size(); ++i)
        image[i] = std::uint8_t(i * 37 % 251);
    return {{"weights", "float32", {6, 4}, bytesOf(weights)},
            {"counts", "int16", {5}, bytesOf(counts)},
            {"image", "uint8", {9, 16}, bytesOf(image)}};
}

// Writes the tensors as the toy format's two files.
void writeToy(const QString& path, const std::vector<Expected>& tensors) {
    QByteArray head = kMagic, first, second;
    for (const Expected& t : tensors) {
        head += (t.key + " " + t.dtype).toUtf8();
        for (std::int64_t d : t.shape)
            head += " " + QByteArray::number(qlonglong(d));
        head += "\n";
        const int rowBytes = int(t.bytes.size() / t.shape[0]);
        const int split = int((t.shape[0] + 1) / 2) * rowBytes;
        first += t.bytes.left(split);
        second += t.bytes.mid(split);
    }
    testsupport::writeFile(path, head + "\n" + first);
    testsupport::writeFile(path + ".2", second);
}

struct Run {
    int code = -1;
    QString out, err;
};

template <typename F>
Run runCommand(F command) {
    Run run;
    QTextStream out(&run.out), err(&run.err);
    run.code = command(out, err);
    out.flush();
    err.flush();
    return run;
}

}  // namespace

class ToyFormatTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() {
        testsupport::isolateSettings("tst_toy_format");
        QSettings().clear();
        QVERIFY(dir_.isValid());
        path_ = dir_.filePath("model.halves");
        writeToy(path_, expectedTensors());
        // The one registration.
        registerStoreFormat(std::make_shared<ToyHalvesFormat>());
    }

    // Each tensor as written, gathered from both records; any range that
    // crosses from one record to the other reads as that range of the whole.
    void loadAssemblesEachTensorFromBothRecords() {
        const TensorDict td = load(path_.toStdString());
        QCOMPARE(td.errors().size(), std::size_t(0));
        for (const Expected& e : expectedTensors()) {
            const Node* n = td.root().child(e.key.toStdString());
            QVERIFY2(n && n->isTensor(), qPrintable(e.key));
            QCOMPARE(QString::fromStdString(std::string(dtypeName(n->leaf().dtype))),
                     "torch." + e.dtype);
            QCOMPARE(n->leaf().shape, e.shape);
            QCOMPARE(QString::fromStdString(leafSha256(*n)), e.sha256());
            // Every range, whole elements or not, within one record or across both.
            const std::uint64_t size = std::uint64_t(e.bytes.size());
            for (std::uint64_t from = 0; from < size; ++from)
                for (std::uint64_t length = 1; length <= size - from; ++length) {
                    const LeafBytes part = n->bytesRange(from, length);
                    QVERIFY2(
                        std::memcmp(part.data.get(), e.bytes.constData() + from, length) == 0,
                        qPrintable(QString("%1 bytes %2+%3").arg(e.key).arg(from).arg(length)));
                }
            // The details name both records and the rows each holds.
            Value parts;
            for (const NodeProperty& p : nodeProperties(*n))
                if (p.name == "chunks")
                    parts = p.value;
            QVERIFY2(parts.isList() && parts.asList().size() == 2, qPrintable(e.key));
            const Value* first = parts.asList()[0].find("file");
            const Value* second = parts.asList()[1].find("file");
            const Value* secondRows = parts.asList()[1].find("offsets");
            QVERIFY(first && second && secondRows && secondRows->isList());
            QCOMPARE(first->asString(), std::string("model.halves"));
            QCOMPARE(second->asString(), std::string("model.halves.2"));
            QCOMPARE(secondRows->asList()[0].asInt(), (e.shape[0] + 1) / 2);
        }
    }

    // The window opens it, and every registered view draws its tensors:
    // the table's last cell and the statistics' maximum come from the
    // second record.
    void everyViewShowsIt() {
        MainWindow w;
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QSignalSpy loaded(&w, &MainWindow::documentLoaded);
        w.openPath(path_);
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, kBoundMs);
        PreviewPanel* preview = w.documentPage()->previewPanel();
        for (const Expected& e : expectedTensors()) {
            QSignalSpy ready(preview, &PreviewPanel::leafReady);
            QVERIFY(w.selectKeyPath({e.key}));
            QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, kBoundMs);
            LeafView* view = preview->leafView();
            int shown = 0;
            for (int m = 0; m < int(leafModeTypes().size()); ++m) {
                if (!view->canShow(m))
                    continue;
                view->setMode(m);
                QCOMPARE(view->mode(), m);
                QTRY_VERIFY2_WITH_TIMEOUT(!view->modeAt(m)->isDrawing(),
                                          qPrintable(e.key + " " + leafModeTypes()[m].name),
                                          kBoundMs);
                QVERIFY2(preview->message().isEmpty(), qPrintable(preview->message()));
                ++shown;
            }
            QVERIFY2(shown >= 3, qPrintable(e.key));  // the table, the plot, the statistics
        }
        QVERIFY(w.selectKeyPath({"weights"}));
        QTRY_VERIFY_WITH_TIMEOUT(preview->node() && preview->node()->key() == "weights", kBoundMs);
        preview->setMode(LeafView::TableMode);
        TensorTableModel* table = preview->tableModel();
        QTRY_COMPARE_WITH_TIMEOUT(table->rowCount(), 6, kBoundMs);
        QCOMPARE(table->data(table->index(5, 3)).toString(), QString("8.5"));
        preview->setMode(LeafView::StatisticsMode);
        QTRY_VERIFY_WITH_TIMEOUT(!preview->statisticsView()->isRunning() &&
                                     preview->statisticsView()->result().count == 24,
                                 kBoundMs);
        QCOMPARE(preview->statisticsView()->result().max, 8.5);
        QCOMPARE(preview->statisticsView()->result().min, -3.0);
        QVERIFY(w.selectKeyPath({"image"}));
        QTRY_VERIFY_WITH_TIMEOUT(preview->node() && preview->node()->key() == "image", kBoundMs);
        preview->setMode(LeafView::ImageMode);
        QTRY_VERIFY_WITH_TIMEOUT(
            !preview->imageView()->image().isNull() && !preview->imageView()->isRendering(),
            kBoundMs);
        QCOMPARE(preview->imageView()->image().size(), QSize(16, 9));
    }

    // --info --sha256 gives each tensor's sha256 of its assembled bytes.
    void infoHashesIt() {
        const Run info = runCommand([&](QTextStream& out, QTextStream& err) {
            cli::InfoRequest request;
            request.path = path_;
            request.sha256 = true;
            return cli::printInfo(request, out, err);
        });
        QCOMPARE(info.code, 0);
        QVERIFY2(info.out.contains("(toy halves)"), qPrintable(info.out));
        for (const Expected& e : expectedTensors())
            QVERIFY2(info.out.contains(e.sha256()), qPrintable(e.key + "\n" + info.out));
    }

    // --save writes it as a .tdz and as a safetensors file, which read back
    // equal; --diff finds the toy and its .tdz equal, and names the one
    // tensor a changed second record makes differ.
    void saveAndDiffTakeIt() {
        for (const QString name : {"model.tdz", "model.safetensors"}) {
            const QString out = dir_.filePath(name);
            const Run save = runCommand([&](QTextStream&, QTextStream& err) {
                cli::SaveRequest request;
                request.source = path_;
                request.destination = out;
                return cli::save(request, err, cli::ProgressStyle::Lines);
            });
            QVERIFY2(save.code == 0, qPrintable(save.err));
            const TensorDict back = load(out.toStdString());
            for (const Expected& e : expectedTensors()) {
                const Node* n = back.root().child(e.key.toStdString());
                QVERIFY2(n && n->isTensor(), qPrintable(name + ": " + e.key));
                QCOMPARE(n->leaf().shape, e.shape);
                QCOMPARE(QString::fromStdString(leafSha256(*n)), e.sha256());
            }
        }
        const auto diff = [](const QString& a, const QString& b) {
            return runCommand([&](QTextStream& out, QTextStream& err) {
                cli::DiffRequest request;
                request.a = a;
                request.b = b;
                return cli::diff(request, out, err);
            });
        };
        const Run same = diff(path_, dir_.filePath("model.tdz"));
        QVERIFY2(same.code == 0, qPrintable(same.out + same.err));

        // The last value of "weights", which its second record holds.
        const QString changed = dir_.filePath("changed.halves");
        std::vector<Expected> tensors = expectedTensors();
        const float other = 100.0f;
        std::memcpy(tensors[0].bytes.data() + tensors[0].bytes.size() - 4, &other, 4);
        writeToy(changed, tensors);
        const Run differs = diff(path_, changed);
        QCOMPARE(differs.code, 1);
        QVERIFY2(differs.out.contains("weights"), qPrintable(differs.out));
        QVERIFY2(!differs.out.contains("counts") && !differs.out.contains("image"),
                 qPrintable(differs.out));
    }

    // --check reads it and says it is sound; a second record cut short is
    // an error that names that file, and the check fails.
    void checkTakesIt() {
        const auto check = [](const QString& path) {
            return runCommand([&](QTextStream& out, QTextStream& err) {
                cli::CheckRequest request;
                request.path = path;
                return cli::check(request, out, err);
            });
        };
        const Run sound = check(path_);
        QVERIFY2(sound.code == 0, qPrintable(sound.out + sound.err));

        const QString cut = dir_.filePath("cut.halves");
        writeToy(cut, expectedTensors());
        QFile second(cut + ".2");
        QVERIFY(second.resize(second.size() - 1));
        const Run broken = check(cut);
        QCOMPARE(broken.code, 1);
        QVERIFY2(broken.out.contains(cut + ".2"), qPrintable(broken.out));
        QVERIFY2(broken.out.contains("past its"), qPrintable(broken.out));
    }

private:
    QTemporaryDir dir_;
    QString path_;
};

QTEST_MAIN(ToyFormatTest)
#include "tst_toy_format.moc"
