// Tensor preview: the windowed table model on every dtype and on a tensor of
// over 2^31 elements mapped from a sparse file, N-D slicing, statistics
// checked against numpy, cancel, exports read back by numpy, and the preview
// panel in the main window.

#include <fcntl.h>
#include <unistd.h>

#include <QAbstractItemModelTester>
#include <QClipboard>
#include <QComboBox>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPushButton>
#include <QRandomGenerator>
#include <QSemaphore>
#include <QSettings>
#include <QTableView>
#include <QTemporaryDir>
#include <QThreadPool>
#include <QtEndian>
#include <QtTest>
#include <atomic>

#include "color_bar.h"
#include "compare_image_view.h"
#include "document_page.h"
#include "file_dialogs.h"
#include "histogram_widget.h"
#include "image_render.h"
#include "image_view.h"
#include "libzip_reader.h"
#include "main_window.h"
#include "node_text.h"
#include "plot_view.h"
#include "png_encoder.h"
#include "preview_panel.h"
#include "slice_export.h"
#include "slice_selector.h"
#include "statistics.h"
#include "statistics_view.h"
#include "tensor_table_model.h"
#include "tensor_table_view.h"
#include "tensordict/save.h"
#include "testsupport.h"

using namespace tensordict;
using testsupport::residentKiB;
using testsupport::writeFile;

namespace {

// How long a wait for background work may take before the test fails: a
// bound for a broken run, not a timing (sanitizer builds scan 16M-element
// leaves many times slower than a release build).
constexpr int kBoundMs = 60000;

}  // namespace

class PreviewTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void cleanup() { testsupport::verifyArchivesWithLibzip(scratch_.path()); }

    void initTestCase() {
        QVERIFY(scratch_.isValid());
        testsupport::isolateSettings("tst_preview");
        QSettings().clear();  // remembered modes of an earlier run
    }

    void tableModelOnEveryDtype_data() {
        QTest::addColumn<int>("dtype_");
        for (int d = 0; d < kDTypeCount; ++d)
            QTest::newRow(dtypeName(static_cast<DType>(d)).data()) << d;
    }
    void tableModelOnEveryDtype() {
        QFETCH(int, dtype_);
        const auto dtype = static_cast<DType>(dtype_);
        const std::size_t item = itemSize(dtype);
        QByteArray raw(static_cast<int>(item * 12), '\0');
        for (int i = 0; i < raw.size(); ++i)
            raw[i] = static_cast<char>((i * 37 + 11) & 0x7f);
        const TensorSlice slice = TensorSlice::defaultFor({3, 4});
        TensorTableModel model;
        model.setLeaf(dtype, ownedBytes(raw), slice);
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.columnCount(), 4);
        const auto at = [&](int r, int c) {
            return reinterpret_cast<const std::byte*>(raw.constData()) + (r * 4 + c) * item;
        };
        const auto category = dtypeInfo(dtype).category;
        const bool floats = category == DTypeCategory::Float || category == DTypeCategory::Complex;
        for (int c : {0, 3}) {
            // A column of floats reads in one notation: scientific if one of them needs it.
            Notation notation = floats ? Notation::Positional : Notation::Auto;
            for (int r = 0; r < 3; ++r) {
                const ComplexValue z = elementAsComplex(at(r, c), dtype);
                if (floats && (reprIsScientific(z.re) || reprIsScientific(z.im)))
                    notation = Notation::Scientific;
            }
            for (int r : {0, 2})
                QCOMPARE(model.index(r, c).data().toString(),
                         QString::fromStdString(
                             formatElement(at(r, c), dtype, FloatFormat::Shortest, 6, notation)));
        }
        QCOMPARE(model.headerData(2, Qt::Vertical).toString(), QString("2"));
        model.setWindow(1, 1, 2, 2);  // a smaller window moved inside the slice
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.headerData(0, Qt::Vertical).toString(), QString("1"));
        QCOMPARE(model.index(0, 0).data().toString(), model.text(1, 1));
        model.setFloatFormat(FloatFormat::Scientific, 3);
    }

    void fourDimensionalSliceMapping() {
        QByteArray raw(2 * 3 * 4 * 5 * 4, '\0');
        auto* v = reinterpret_cast<float*>(raw.data());
        for (int i = 0; i < 120; ++i)
            v[i] = float(i);
        TensorSlice s = TensorSlice::defaultFor({2, 3, 4, 5});
        s.setDims(1, 3);  // rows: dim 1, columns: dim 3
        s.index = {1, 0, 2, 0};
        TensorTableModel model;
        model.setLeaf(DType::Float32, ownedBytes(raw), s);
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.totalRows(), 3);
        QCOMPARE(model.totalCols(), 5);
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 5; ++c)
                QCOMPARE(model.text(r, c), QString::number(1 * 60 + r * 20 + 2 * 5 + c) + ".");

        SliceSelector selector(SliceSelector::Mode::Table);
        selector.setSlice(s);
        QSignalSpy changed(&selector, &SliceSelector::sliceChanged);
        selector.setIndex(2, 3);
        QCOMPARE(changed.count(), 1);
        QCOMPARE(selector.slice().index[2], std::int64_t(3));
        QCOMPARE(selector.slice().fixedDims(), (std::vector<int>{0, 2}));
    }

    // An export is named after its key and the slice shown, as numpy indexes
    // it: on main every image was offered as "slice.png".
    void exportNamesSayWhichSlice() {
        TensorSlice s = TensorSlice::defaultFor({2, 3, 4, 5});
        s.setDims(1, 3);
        s.index = {1, 0, 2, 0};
        SliceSelector table(SliceSelector::Mode::Table);
        table.setSlice(s);
        QCOMPARE(table.fileName("x", ".csv"), "x[1,:,2].csv");
        table.setSlice(TensorSlice::defaultFor({4, 5}));
        QCOMPARE(table.fileName("x", ".npy"), "x.npy");

        QString suggested;
        file_dialogs::setChooser([&](file_dialogs::Kind, const QString&, const QString& name) {
            suggested = name;
            return QString();  // cancelled
        });
        const auto restore = qScopeGuard([] { file_dialogs::setChooser({}); });
        ImageView view;
        view.setExportStem("images");
        view.setLeaf(DType::UInt8, ownedBytes(QByteArray(30 * 8 * 8 * 3, '\x40')), {30, 8, 8, 3});
        view.sliceSelector()->setIndex(0, 27);
        QPushButton* exportButton = nullptr;
        for (QPushButton* b : view.findChildren<QPushButton*>())
            if (b->text() == "Export PNG…")
                exportButton = b;
        QVERIFY(exportButton);
        exportButton->click();
        QCOMPARE(suggested, "images[27].png");
        QCOMPARE(nodetext::exportStem(nullptr), "tensor");
    }

    void hugeSparseLeafScrollsToTheEndWithoutCopy() {
        // 2^31 + 1000 one-byte elements in a sparse file: a 2 GiB mapping, nothing in RAM.
        const std::int64_t n = (std::int64_t(1) << 31) + 1000;
        const QString dir = scratch_.path() + "/huge";
        writeFile(
            dir + "/meta.json",
            QString(
                R"({"x": {"device": "cpu", "shape": [%1], "dtype": "torch.uint8", "is_nested": false}, "shape": [], "device": "cpu", "_type": "<class 'tensordict._td.TensorDict'>"})")
                .arg(n)
                .toUtf8());
        const int fd =
            ::open(QFile::encodeName(dir + "/x.memmap").constData(), O_CREAT | O_RDWR, 0644);
        QVERIFY(fd >= 0);
        QVERIFY(::ftruncate(fd, n) == 0);
        const unsigned char first = 7, middle = 42, last = 99;
        QVERIFY(::pwrite(fd, &first, 1, 0) == 1);
        QVERIFY(::pwrite(fd, &middle, 1, std::int64_t(1) << 31) == 1);
        QVERIFY(::pwrite(fd, &last, 1, n - 1) == 1);
        ::close(fd);

        const qint64 before = residentKiB();
        const TensorDict td = load(dir.toStdString());
        const Node* x = td.root().child("x");
        QCOMPARE(x->leaf().numel, n);
        TensorTableModel model;
        model.setLeaf(x->leaf().dtype, x->bytes(), TensorSlice::defaultFor(x->leaf().shape));
        QCOMPARE(model.totalRows(), n);
        TensorTableView view(&model);
        view.resize(600, 400);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.scrollToEnd();
        QCOMPARE(model.firstRow() + model.rowCount(), n);
        QCOMPARE(model.index(model.rowCount() - 1, 0).data().toString(), QString("99"));
        QCOMPARE(model.headerData(model.rowCount() - 1, Qt::Vertical).toString(),
                 QString::number(n - 1));
        QCOMPARE(model.text(std::int64_t(1) << 31, 0), QString("42"));
        QCOMPARE(model.text(0, 0), QString("7"));
        view.scrollTo((std::int64_t(1) << 31) - 5, 0);  // row 2^31 is the sixth on screen
        QCOMPARE(model.firstRow(), (std::int64_t(1) << 31) - 5);
        QCOMPARE(model.index(5, 0).data().toString(), QString("42"));
        QCOMPARE(model.headerData(5, Qt::Vertical).toString(),
                 QString::number(std::int64_t(1) << 31));
        view.grab();
        const qint64 grown = residentKiB() - before;
        QVERIFY2(grown < 64 * 1024,
                 qPrintable(QString("resident memory grew by %1 KiB").arg(grown)));
    }

    void statisticsMatchNumpy_data() {
        QTest::addColumn<QString>("dtype");  // numpy's name
        QTest::addColumn<int>("threads");
        QTest::newRow("float32, 1 thread") << "float32" << 1;
        QTest::newRow("float32, 2 threads") << "float32" << 2;
        QTest::newRow("float64, 2 threads") << "float64" << 2;
        QTest::newRow("int16, 2 threads") << "int16" << 2;
    }
    void statisticsMatchNumpy() {
        QFETCH(QString, dtype);
        QFETCH(int, threads);
        const QString path = scratch_.path() + "/stats-" + dtype + ".bin";
        const int count = 5'000'000;  // more than one chunk
        QVERIFY(testsupport::runPython(
            {"-c", QString("import numpy as np; r = np.random.default_rng(5); a = "
                           "(r.standard_normal(%1) * 1000 + 3)"
                           ".astype('%2'); ")
                           .arg(count)
                           .arg(dtype) +
                       (dtype.startsWith("float")
                            ? "a[::997] = np.nan; a[5] = np.inf; a[6] = -np.inf; a[7:20] = 0; "
                            : "a[7:20] = 0; ") +
                       QString("a.tofile('%1')").arg(path)}));
        QString out;
        QVERIFY(testsupport::runPython({TDSTUDIO_TEST_SUPPORT_DIR "/numpy_stats.py", path, dtype,
                                        QString::number(count), "64"},
                                       &out));
        const QJsonObject np = QJsonDocument::fromJson(out.toUtf8()).object();

        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        StatisticsRequest request;
        request.dtype = *dtypeFromString(("torch." + dtype).toStdString());
        request.bytes = ownedBytes(f.readAll());
        request.numel = count;
        request.threads = threads;
        const Statistics s = computeStatistics(request);
        QCOMPARE(s.count, qint64(np["count"].toInteger()));
        QCOMPARE(s.nans, qint64(np["nans"].toInteger()));
        QCOMPARE(s.infs, qint64(np["infs"].toInteger()));
        QCOMPARE(s.zeros, qint64(np["zeros"].toInteger()));
        QCOMPARE(s.min, np["min"].toDouble());
        QCOMPARE(s.max, np["max"].toDouble());
        QVERIFY(std::abs(s.mean - np["mean"].toDouble()) <=
                1e-9 * std::max(1.0, std::abs(np["mean"].toDouble())));
        QVERIFY(std::abs(s.std - np["std"].toDouble()) <= 1e-9 * np["std"].toDouble());
        QVERIFY(std::abs(s.sampleStd - np["sample_std"].toDouble()) <=
                1e-9 * np["sample_std"].toDouble());
        const QJsonArray hist = np["histogram"].toArray();
        QCOMPARE(int(s.histogram.size()), hist.size());
        for (int i = 0; i < hist.size(); ++i)
            QCOMPARE(s.histogram[static_cast<std::size_t>(i)], hist[i].toInteger());
    }

    // The view says which std it shows (both: numpy's population one and
    // torch.std's sample one), and that a complex leaf's are of |z|.
    void statisticsSayWhatTheyAreOf() {
        StatisticsView view;
        view.show();
        std::vector<float> values{1, 2, 3, 4};
        view.setLeaf(DType::Float32, ownedBytes(std::move(values)), 4);
        QSignalSpy done(&view, &StatisticsView::finished);
        view.compute();
        QVERIFY(done.wait(kBoundMs));
        // As shown, 10 significant digits: numpy's std, then torch.std's.
        QCOMPARE(view.field("Std (population, N)"), QString::number(std::sqrt(1.25), 'g', 10));
        QCOMPARE(view.field("Std (sample, N − 1)"), QString::number(std::sqrt(5.0 / 3), 'g', 10));
        QVERIFY(view.field("Of").isEmpty());

        std::vector<float> complex{3, 4, 0, 1};  // 3+4j, 1j: |z| = 5, 1
        view.setLeaf(DType::Complex64, ownedBytes(std::move(complex)), 2);
        view.compute();
        QVERIFY(done.wait(kBoundMs));
        QVERIFY2(view.field("Of").startsWith("|z|"), qPrintable(view.field("Of")));
        QCOMPARE(view.field("Max").toDouble(), 5.0);

        // Counts are written as everywhere else in the window (the details'
        // "1,228,800"), not as a bare "12345".
        const QLocale before;
        QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates));
        const auto restore = qScopeGuard([&] { QLocale::setDefault(before); });
        view.setLeaf(DType::Float32, ownedBytes(std::vector<float>(12345, 0.0f)), 12345);
        view.compute();
        QVERIFY(done.wait(kBoundMs));
        QCOMPARE(view.field("Elements"), "12,345");
        QCOMPARE(view.field("Zeros"), "12,345");
    }

    void statisticsOfASlice() {
        QByteArray raw(4 * 6 * 4, '\0');
        auto* v = reinterpret_cast<float*>(raw.data());
        for (int i = 0; i < 24; ++i)
            v[i] = float(i);
        StatisticsRequest request;
        request.bytes = ownedBytes(raw);
        request.numel = 24;
        TensorSlice s = TensorSlice::defaultFor({4, 6});
        s.setDims(0, -1);  // column 2: 2, 8, 14, 20
        s.index = {0, 2};
        request.slice = s;
        const Statistics st = computeStatistics(request);
        QCOMPARE(st.count, qint64(4));
        QCOMPARE(st.min, 2.0);
        QCOMPARE(st.max, 20.0);
        QCOMPARE(st.mean, 11.0);
    }

    void statisticsCancel() {
        QByteArray raw(64 << 20, '\0');
        StatisticsRequest request;
        request.bytes = ownedBytes(raw);
        request.numel = raw.size() / 4;
        request.threads = 2;
        int calls = 0;
        const Statistics s = computeStatistics(request, [&calls](double) { return ++calls < 2; });
        QVERIFY(s.cancelled);
        QCOMPARE(calls, 2);
    }

    void exportsReadBackByNumpy() {
        QByteArray raw(3 * 4 * 2, '\0');
        auto* v = reinterpret_cast<std::uint16_t*>(raw.data());
        for (int i = 0; i < 12; ++i)
            v[i] = static_cast<std::uint16_t>(0x3C00 + i);  // float16 around 1.0
        TensorSlice s = TensorSlice::defaultFor({3, 4});
        const QString npy = scratch_.path() + "/slice.npy", csv = scratch_.path() + "/slice.csv";
        QVERIFY2(slice_export::writeNpy(npy, DType::Float16, ownedBytes(raw), s).ok(),
                 "export failed");
        QVERIFY2(slice_export::writeCsv(csv, DType::Float16, ownedBytes(raw), s).ok(),
                 "export failed");
        QString out;
        QVERIFY(testsupport::runPython(
            {"-c",
             "import numpy as np,sys; a=np.load(sys.argv[1]); b=np.loadtxt(sys.argv[2], "
             "delimiter=','); "
             "print(a.dtype, a.shape, float(a[2,3]), bool((a==b.astype(a.dtype)).all()))",
             npy, csv},
            &out));
        QCOMPARE(out.trimmed(), QString("float16 (3, 4) 1.0107421875 True"));
        s.setDims(1, -1);  // one column: shape (4,)
        QVERIFY2(slice_export::writeNpy(npy, DType::BFloat16, ownedBytes(raw), s).ok(),
                 "export failed");
        QVERIFY(testsupport::runPython(
            {"-c", "import numpy as np,sys; a=np.load(sys.argv[1]); print(a.dtype, a.shape)", npy},
            &out));
        QCOMPARE(out.trimmed(), QString("float32 (4,)"));
    }

    // An image whose rows each deflate best under one of PNG's five
    // filters, as the specification defines them (9.2): rows of 0s and 1s
    // (None), ramps (Sub), copies of the row above (Up), and rows built so
    // that the Average and the Paeth predictors are exact, each over a row
    // of noise. Gray, one byte a pixel.
    static QImage rowsForEveryFilter(int width) {
        QRandomGenerator rng(11);
        QImage image(width, 10, QImage::Format_Grayscale8);
        for (int y = 0; y < image.height(); ++y) {
            std::uint8_t* row = image.scanLine(y);
            const std::uint8_t* above = y ? image.constScanLine(y - 1) : nullptr;
            const auto up = [&](int x) { return above ? int(above[x]) : 0; };
            for (int x = 0; x < width; ++x) {
                const int a = x ? row[x - 1] : 0, b = up(x), c = x ? up(x - 1) : 0;
                int v = 0;
                switch (y % 10) {
                    case 0:
                    case 2:
                    case 4:
                    case 6:
                    case 8:
                        v = int(rng.bounded(256));
                        break;
                    case 1:
                        v = x % 2;
                        break;  // None
                    case 3:
                        v = (40 + 3 * x) % 256;
                        break;  // Sub
                    case 5:
                        v = b;
                        break;  // Up
                    case 7:
                        v = (a + b) / 2;
                        break;  // Average
                    case 9: {   // Paeth
                        const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b),
                                  pc = std::abs(p - c);
                        // From a first pixel off its prediction (a row Paeth
                        // predicts whole would be the row above).
                        v = x ? (pa <= pb && pa <= pc ? a : pb <= pc ? b : c) : (b + 100) % 256;
                    }
                }
                row[x] = std::uint8_t(v);
            }
        }
        return image;
    }

    // The filter byte of each row of an encoded PNG (one IDAT, as ours writes).
    static QList<int> rowFilters(const QByteArray& png, int rowBytes) {
        QList<int> filters;
        const int at = png.indexOf("IDAT");
        if (at < 4)
            return filters;
        const quint32 length = qFromBigEndian<quint32>(png.constData() + at - 4);
        QByteArray prefixed(4, '\0');
        qToBigEndian<quint32>(quint32(1u << 26), prefixed.data());  // qUncompress's size hint
        const QByteArray raw = qUncompress(prefixed + png.mid(at + 4, qsizetype(length)));
        for (qsizetype i = 0; i < raw.size(); i += rowBytes + 1)
            filters << int(std::uint8_t(raw[i]));
        return filters;
    }

    void pngEncoderWritesWhatLibpngReadsBack() {
        QRandomGenerator rng(5);
        const auto noisy = [&rng](QImage::Format format, int w, int h) {
            QImage image(w, h, format);
            for (int y = 0; y < h; ++y)
                for (int x = 0; x < w; ++x)
                    image.setPixelColor(x, y,
                                        y % 3 == 0
                                            ? QColor(x * 7 % 256, y * 5 % 256, 90, 255 - x % 200)
                                            : QColor::fromRgb(rng.generate()));
            if (image.hasAlphaChannel())
                image.setPixelColor(0, 0, QColor(1, 2, 3, 4));
            return image;
        };
        // Slopes with a little noise: Paeth's and Average's rows, with ties
        // between its neighbours (Paeth takes the left one first).
        const auto slope = [&rng](QImage::Format format, int w, int h) {
            QImage image(w, h, format);
            for (int y = 0; y < h; ++y)
                for (int x = 0; x < w; ++x) {
                    const int v = (3 * x + 2 * y + int(rng.bounded(3))) % 256;
                    image.setPixelColor(x, y, QColor(v, (v + 40) % 256, (255 - v), 200 + x % 50));
                }
            return image;
        };
        const QList<QImage> images = {
            slope(QImage::Format_Grayscale8, 64, 48),
            slope(QImage::Format_RGB32, 64, 48),
            slope(QImage::Format_ARGB32, 33, 20),
            noisy(QImage::Format_RGB32, 37, 23),
            noisy(QImage::Format_ARGB32, 19, 11),
            noisy(QImage::Format_Grayscale8, 13, 7),
            noisy(QImage::Format_RGB888, 5, 4),
            noisy(QImage::Format_RGB32, 1, 1),
            noisy(QImage::Format_ARGB32, 1, 6),
            noisy(QImage::Format_Grayscale8, 2, 1),
            rowsForEveryFilter(512),
        };
        for (const QImage& image : images)
            for (const int level : {1, 6, 12}) {
                const QByteArray png = png_encoder::encode(image, level);
                QImage back;
                QVERIFY2(back.loadFromData(png, "PNG"), qPrintable(QString::number(level)));
                QCOMPARE(back.size(), image.size());
                QCOMPARE(back.hasAlphaChannel(), image.hasAlphaChannel());
                QCOMPARE(back.isGrayscale(), image.format() == QImage::Format_Grayscale8);
                QCOMPARE(back.convertToFormat(QImage::Format_ARGB32),
                         image.convertToFormat(QImage::Format_ARGB32));
            }

        // Every filter is chosen where it is best (fast levels try None, Sub
        // and Up only), and what each wrote decoded exactly above.
        const QImage every = rowsForEveryFilter(512);
        const QList<int> all = rowFilters(png_encoder::encode(every, 6), 512);
        QCOMPARE(all.size(), 10);
        for (int filter = 0; filter < 5; ++filter)
            QCOMPARE(all[2 * filter + 1], filter);  // the odd rows; the even ones are noise
        const QList<int> fast = rowFilters(png_encoder::encode(every, 1), 512);
        QCOMPARE(fast.size(), 10);
        QCOMPARE(fast[1], 0);
        QCOMPARE(fast[3], 1);
        QCOMPARE(fast[5], 2);
        for (const int f : fast)
            QVERIFY(f <= 2);
        QVERIFY(png_encoder::encode(QImage(), 1).isEmpty());

        // A window's screenshot goes through it (PngEffort::Fast).
        const QString shot = scratch_.path() + "/fast.png";
        const QImage window = noisy(QImage::Format_RGB32, 40, 30);
        QVERIFY2(slice_export::writePng(shot, window, slice_export::PngEffort::Fast).ok(),
                 "export failed");
        QFile file(shot);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(file.readAll(), png_encoder::encode(window, 1));

        // Deeper channels are left to Qt's writer, which keeps their 16 bits.
        QVERIFY(!png_encoder::keepsEveryBit(QImage::Format_RGBA64));
        QVERIFY(!png_encoder::keepsEveryBit(QImage::Format_Grayscale16));
        QImage deep(3, 2, QImage::Format_Grayscale16);
        for (int y = 0; y < 2; ++y)
            for (int x = 0; x < 3; ++x)
                reinterpret_cast<quint16*>(deep.scanLine(y))[x] = quint16(257 * x + 1000 * y + 1);
        QVERIFY2(slice_export::writePng(shot, deep, slice_export::PngEffort::Fast).ok(),
                 "export failed");
        QImage back;
        QVERIFY(back.load(shot, "PNG"));
        QCOMPARE(back.convertToFormat(QImage::Format_Grayscale16), deep);
    }

    void pngExportsReplaceTheFileAtomically() {
        // The export goes to a new file renamed over the old one, never into
        // the old file: a second name of the old file keeps the old bytes.
        const QString png = scratch_.path() + "/atomic.png";
        const QString other = scratch_.path() + "/atomic-link.png";
        {
            QFile f(png);
            QVERIFY(f.open(QIODevice::WriteOnly));
            QCOMPARE(f.write("old bytes"), qint64(9));
        }
        QCOMPARE(::link(QFile::encodeName(png).constData(), QFile::encodeName(other).constData()),
                 0);
        QImage image(5, 3, QImage::Format_RGB32);
        image.fill(QColor(10, 20, 30));
        QVERIFY2(slice_export::writePng(png, image).ok(), "export failed");
        QImage back;
        QVERIFY(back.load(png, "PNG"));
        QCOMPARE(back.size(), QSize(5, 3));
        QCOMPARE(QColor(back.pixel(4, 2)), QColor(10, 20, 30));
        QFile old(other);
        QVERIFY(old.open(QIODevice::ReadOnly));
        QCOMPARE(old.readAll(), QByteArray("old bytes"));
        // Nothing else was left beside them.
        QCOMPARE(QDir(scratch_.path()).entryList({"atomic*"}, QDir::Files).size(), 2);

        // Errors name the path; a failed export leaves nothing behind.
        const QString missing = scratch_.path() + "/no-such-dir/x.png";
        QVERIFY(slice_export::writePng(missing, image).text().startsWith(missing + ": "));
        QVERIFY(slice_export::writePng(png, QImage()).text().startsWith(png + ": "));
        QVERIFY(back.load(png, "PNG"));  // the earlier export is still whole
    }

    void previewInTheMainWindow() {
        const QString prefix = scratch_.path() + "/demo.tdz";
        TensorDict td = TensorDict::create({4});
        QByteArray image(4 * 8 * 8 * 3, '\0');
        for (int i = 0; i < image.size(); ++i)
            image[i] = static_cast<char>(i % 251);
        QByteArray grid(4 * 10 * 4, '\0');
        td.mutableRoot().addBytes("rgb", DType::UInt8, {4, 8, 8, 3}, ownedBytes(image));
        td.mutableRoot().addBytes("a", DType::Float32, {4, 10}, ownedBytes(grid));
        td.mutableRoot().addBytes("b", DType::Float32, {4, 10}, ownedBytes(grid));
        td.mutableRoot().addNonTensor("note", Value("hi"));
        save(td, prefix.toStdString());

        MainWindow w;
        w.show();
        QSignalSpy loaded(&w, &MainWindow::documentLoaded);
        w.openPath(prefix);
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, kBoundMs);
        PreviewPanel* preview = w.documentPage()->previewPanel();
        QSignalSpy ready(preview, &PreviewPanel::leafReady);
        QVERIFY(w.selectKeyPath({"rgb"}));
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, kBoundMs);
        QCOMPARE(preview->mode(), PreviewPanel::ImageMode);  // colour images open as images
        QTRY_VERIFY_WITH_TIMEOUT(!preview->imageView()->image().isNull(), kBoundMs);
        QCOMPARE(preview->imageView()->image().size(), QSize(8, 8));
        QCOMPARE(QColor(preview->imageView()->image().pixel(1, 0)).red(),
                 3);  // raw bytes shown as they are

        QVERIFY(w.selectKeyPath({"a"}));
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 2, kBoundMs);
        QCOMPARE(preview->mode(), PreviewPanel::TableMode);
        QCOMPARE(preview->tableModel()->totalRows(), 4);
        QCOMPARE(preview->tableModel()->totalCols(), 10);
        preview->setMode(PreviewPanel::PlotMode);  // remembered for 2-D leaves
        QVERIFY(w.selectKeyPath({"b"}));
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 3, kBoundMs);
        QCOMPARE(preview->mode(), PreviewPanel::PlotMode);
        preview->setMode(PreviewPanel::TableMode);

        auto* table = preview->tableView()->table();
        table->selectionModel()->select(
            QItemSelection(preview->tableModel()->index(0, 0), preview->tableModel()->index(1, 1)),
            QItemSelectionModel::Select);
        preview->tableView()->copySelection();
        QCOMPARE(QGuiApplication::clipboard()->text(), QString("0.\t0.\n0.\t0.\n"));

        QVERIFY(w.selectKeyPath({"note"}));
        QCOMPARE(preview->valueText(), QString("\"hi\""));
    }

    void compressedLeavesAreReadPageByPage() {
        // A deflated [24, 1024, 1024] uint8 leaf with access points: each view
        // reads the pages of the slice it shows; the entry is never inflated
        // whole, and every value shown is the leaf's.
        const int slices = 24, side = 1024;
        QByteArray raw(slices * side * side, '\0');
        for (int i = 0; i < raw.size(); ++i)
            raw[i] = static_cast<char>((i / (side * side)) * 7 + (i % side) % 5);
        const QString path = scratch_.path() + "/paged.tdz";
        {
            TensorDict td = TensorDict::create();
            td.mutableRoot().addBytes("x", DType::UInt8, {slices, side, side}, ownedBytes(raw));
            SaveOptions options;
            options.compression = kZipDeflate;
            options.compressionLevel = 1;
            save(td, path.toStdString(), options);
        }
        const auto td = std::make_shared<const TensorDict>(load(path.toStdString()));
        const Node* x = td->root().child("x");
        QVERIFY(x->hasRandomAccess());
        PreviewPanel panel;
        PreviewPanel* preview = &panel;
        panel.resize(1000, 700);
        panel.show();
        QSignalSpy ready(preview, &PreviewPanel::leafReady);
        preview->showNode(td, x);
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, kBoundMs);
        preview->setMode(PreviewPanel::TableMode);
        TensorTableModel* table = preview->tableModel();
        QTRY_VERIFY_WITH_TIMEOUT(!table->isFilling(), kBoundMs);
        QCOMPARE(table->text(0, 3), QString("3"));
        // The last slice, in the table and as an image.
        preview->tableSlice()->setIndex(0, slices - 1);
        QTRY_VERIFY_WITH_TIMEOUT(!table->isFilling(), kBoundMs);
        QCOMPARE(table->text(5, 3), QString::number(((slices - 1) * 7 + 3 % 5) % 256));
        // A cell far from the window is not read (its pages are not held).
        QCOMPARE(table->text(5, 1023), QString());
        preview->setMode(PreviewPanel::ImageMode);
        ImageView* image = preview->imageView();
        QTRY_VERIFY_WITH_TIMEOUT(!image->image().isNull() && !image->isRendering(), kBoundMs);
        QCOMPARE(image->sliceSelector()->slice().index[0], std::int64_t(slices - 1));
        // Drawn at screen resolution: pixel x is column x * stride. Columns
        // 5k are the slice's darkest value, 5k + 4 its brightest.
        const int stride = (side + image->image().width() - 1) / image->image().width();
        int brightest = 0;
        while ((brightest * stride) % 5 != 4)
            ++brightest;
        QCOMPARE(QColor(image->image().pixel(0, 9)).red(), 0);
        QCOMPARE(QColor(image->image().pixel(brightest, 9)).red(), 255);
        // Statistics read every page; still not the entry as a whole.
        preview->setMode(PreviewPanel::StatisticsMode);
        StatisticsView* stats = preview->statisticsView();
        QTRY_VERIFY_WITH_TIMEOUT(!stats->isRunning() && stats->result().count > 0, kBoundMs);
        QCOMPARE(stats->result().count, std::int64_t(raw.size()));  // the whole leaf
        QCOMPARE(stats->result().max, double((slices - 1) * 7 + 4));
        QCOMPARE(stats->result().min, 0.0);
        QVERIFY(!x->isMaterialized());
        QVERIFY(preview->message().isEmpty());
    }

    void fileTruncatedUnderThePreviewOffersReload_data() {
        QTest::addColumn<int>("mode");
        QTest::newRow("table") << int(PreviewPanel::TableMode);
        QTest::newRow("image") << int(PreviewPanel::ImageMode);
        QTest::newRow("plot") << int(PreviewPanel::PlotMode);
        QTest::newRow("statistics") << int(PreviewPanel::StatisticsMode);
    }
    void fileTruncatedUnderThePreviewOffersReload() {
        // A training job rewrites the leaf's file while it is shown: the view
        // reads through the guarded path, says the file changed and offers
        // Reload, which shows the new contents. No SIGBUS, on any thread.
        QFETCH(int, mode);
        const QString dir = scratch_.path() + "/changing-" + QString::number(mode);
        QByteArray data(512 * 512 * 4, '\0');
        for (int i = 0; i < data.size(); i += 4)
            data[i + 3] = 0x3f;  // 0.5f
        TensorDict td = TensorDict::create();
        td.mutableRoot().addBytes("x", DType::Float32, {512, 512}, ownedBytes(data));
        td.mutableRoot().addBytes("y", DType::Float32, {4}, ownedBytes(QByteArray(16, '\0')));
        save(td, dir.toStdString());

        MainWindow w;
        w.show();
        QSignalSpy loaded(&w, &MainWindow::documentLoaded);
        w.openPath(dir);
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, kBoundMs);
        PreviewPanel* preview = w.documentPage()->previewPanel();
        QSignalSpy ready(preview, &PreviewPanel::leafReady);
        QVERIFY(w.selectKeyPath({"x"}));
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, kBoundMs);
        preview->setMode(PreviewPanel::TableMode);
        QVERIFY(preview->message().isEmpty());

        if (mode == PreviewPanel::ImageMode) {  // the first picture is done before the file goes
            preview->setMode(PreviewPanel::ImageMode);
            QTRY_VERIFY_WITH_TIMEOUT(
                !preview->imageView()->image().isNull() && !preview->imageView()->isRendering(),
                kBoundMs);
        }
        QVERIFY(QFile::resize(dir + "/x.memmap", 0));  // the pages behind the mapping are gone
        if (mode == PreviewPanel::TableMode)
            preview->tableModel()->text(511, 511);  // what a repaint reads
        else
            preview->setMode(static_cast<PreviewPanel::Mode>(mode));
        if (mode == PreviewPanel::ImageMode)
            preview->imageView()->setColormap(Colormap::Magma);  // renders again, reading the file
        if (mode == PreviewPanel::PlotMode)
            preview->plotView()->zoomTo(0, 512);
        QTRY_VERIFY_WITH_TIMEOUT(preview->offersReload(), kBoundMs);
        QVERIFY2(preview->message().contains("changed while it was read"),
                 qPrintable(preview->message()));
        QVERIFY(w.selectKeyPath({"y"}));  // the rest of the tree stays usable
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 2, kBoundMs);
        QVERIFY(w.selectKeyPath({"x"}));
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 3, kBoundMs);

        // The job writes the file again; Reload shows it.
        data[3] = 0x40;  // 2.0f
        writeFile(dir + "/x.memmap", data);
        preview->setMode(PreviewPanel::TableMode);
        preview->tableModel()->text(0, 0);
        QTRY_VERIFY_WITH_TIMEOUT(preview->offersReload() || preview->message().isEmpty(), kBoundMs);
        w.reload();
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 2, kBoundMs);
        QTRY_VERIFY_WITH_TIMEOUT(ready.count() >= 4, kBoundMs);
        QTRY_VERIFY_WITH_TIMEOUT(preview->message().isEmpty(), kBoundMs);
        QCOMPARE(preview->tableModel()->totalRows(), 512);
        QCOMPARE(preview->tableModel()->text(511, 511), QString("0.5"));
    }

    void tableTabNeverRendersImages() {
        // A 2-D leaf opens in the table: the image and plot tabs are hidden and do nothing.
        const QString dir = scratch_.path() + "/table-only";
        TensorDict td = TensorDict::create();
        td.mutableRoot().addBytes("x", DType::Float32, {256, 300},
                                  ownedBytes(QByteArray(256 * 300 * 4, '\1')));
        save(td, dir.toStdString());
        QSettings().setValue("preview/mode/2d", int(PreviewPanel::TableMode));
        std::atomic<int> renders{0};
        MainWindow w;
        ImageHooks counting;
        counting.renderStarted = [&renders](const ImageRequest&) { ++renders; };
        w.documentPage()->previewPanel()->imageView()->setHooks(counting);
        w.show();
        QSignalSpy loaded(&w, &MainWindow::documentLoaded);
        w.openPath(dir);
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, kBoundMs);
        PreviewPanel* preview = w.documentPage()->previewPanel();
        QSignalSpy ready(preview, &PreviewPanel::leafReady);
        QVERIFY(w.selectKeyPath({"x"}));
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, kBoundMs);
        QCOMPARE(preview->mode(), PreviewPanel::TableMode);
        w.grab();                           // the table paints
        QCoreApplication::processEvents();  // queued starts of the shown tab's work
        QThreadPool::globalInstance()->waitForDone();
        QCoreApplication::processEvents();
        QCOMPARE(renders.load(), 0);
        QCOMPARE(preview->plotView()->pointCount(), 0);
        QVERIFY(!preview->statisticsView()->isRunning());

        preview->setMode(PreviewPanel::ImageMode);  // shown: now it renders
        QTRY_VERIFY_WITH_TIMEOUT(!preview->imageView()->image().isNull(), kBoundMs);
        QVERIFY(renders.load() >= 1);
        QSettings().remove("preview/mode/2d");
    }

    void switchingLeavesCancelsTheOldLeafsWork() {
        const QString dir = scratch_.path() + "/switch";
        TensorDict td = TensorDict::create();
        td.mutableRoot().addBytes("big", DType::Float32, {2048, 2048},
                                  ownedBytes(QByteArray(2048 * 2048 * 4, '\0')));
        td.mutableRoot().addBytes("small", DType::Float32, {40},  // no image: nothing supersedes
                                  ownedBytes(QByteArray(40 * 4, '\0')));
        save(td, dir.toStdString());
        QSettings().setValue("preview/mode/2d", int(PreviewPanel::ImageMode));

        // The first render of "big" waits in the hook until the test lets it go.
        QSemaphore release;
        std::atomic<bool> entered{false}, bigFinished{false}, bigCancelled{false};
        const std::vector<std::int64_t> bigShape{2048, 2048};
        ImageHooks hold;
        hold.renderStarted = [&](const ImageRequest& r) {
            if (r.slice.shape == bigShape) {
                entered = true;
                release.acquire();
            }
        };
        hold.renderFinished = [&](const ImageResult& r) {
            if (r.image.isNull() && !bigFinished) {
                bigCancelled = r.cancelled;
                bigFinished = true;
            }
        };
        auto unhook = qScopeGuard([&] { QSettings().remove("preview/mode/2d"); });

        MainWindow w;
        w.documentPage()->previewPanel()->imageView()->setHooks(hold);
        auto letGo = qScopeGuard([&] {  // before the window waits for its workers
            release.release(100);
            QThreadPool::globalInstance()->waitForDone();
        });
        w.show();
        QSignalSpy loaded(&w, &MainWindow::documentLoaded);
        w.openPath(dir);
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, kBoundMs);
        PreviewPanel* preview = w.documentPage()->previewPanel();
        ImageView* view = preview->imageView();
        QList<QSize> shown;
        connect(view, &ImageView::rendered, this, [&] { shown << view->image().size(); });
        QSignalSpy ready(preview, &PreviewPanel::leafReady);
        QVERIFY(w.selectKeyPath({"big"}));
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, kBoundMs);
        QCOMPARE(preview->mode(), PreviewPanel::ImageMode);
        QTRY_VERIFY_WITH_TIMEOUT(entered.load(),
                                 kBoundMs);  // big's render is on a worker, held in the hook

        QVERIFY(w.selectKeyPath({"small"}));  // the user moves on
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 2, kBoundMs);
        release.release();
        QTRY_VERIFY_WITH_TIMEOUT(bigFinished.load(), kBoundMs);
        QVERIFY2(bigCancelled.load(), "the old leaf's render ran to its end");
        QCoreApplication::processEvents();  // the old job's end reaches the view: dropped
        QVERIFY(shown.isEmpty());
        QVERIFY(view->image().isNull());
        QVERIFY(!view->isRendering());
    }

    // Controls that do nothing for an image are disabled, saying why: the
    // colormap for colour, the scale too for 8-bit colour (shown as stored).
    void colourImagesDisableWhatDoesNotApply() {
        ImageView view;
        view.setLeaf(DType::UInt8, ownedBytes(QByteArray(2 * 8 * 8 * 3, '\x40')), {2, 8, 8, 3});
        QVERIFY(!view.controls()->colormapBox()->isEnabled());
        QVERIFY(!view.controls()->scaleBox()->isEnabled());
        QVERIFY(!view.controls()->colormapBox()->toolTip().isEmpty());
        view.setLeaf(DType::Float32, ownedBytes(QByteArray(8 * 8 * 3 * 4, '\0')), {8, 8, 3});
        QVERIFY(!view.controls()->colormapBox()->isEnabled());
        QVERIFY(view.controls()->scaleBox()->isEnabled());  // float colour is scaled
        view.setLeaf(DType::UInt8, ownedBytes(QByteArray(8 * 8, '\0')), {8, 8});
        QVERIFY(view.controls()->colormapBox()->isEnabled());
        QVERIFY(view.controls()->scaleBox()->isEnabled());
    }

    // An image says what its colours mean: a colour bar from the low to the
    // high end of its range, and NaN's magenta for floats; colour images,
    // which show their own colours, have none. The histogram has a count
    // axis and says each bar's range and count. On main there was neither.
    void imagesAndHistogramsHaveKeys() {
        ImageView view;
        view.resize(520, 420);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QSignalSpy rendered(&view, &ImageView::rendered);
        std::vector<float> ramp(64 * 64);
        for (std::size_t i = 0; i < ramp.size(); ++i)
            ramp[i] = float(i % 64) - 10;  // -10 … 53
        ramp[5] = std::nanf("");
        view.setLeaf(DType::Float32, ownedBytes(std::move(ramp)), {64, 64});
        QTRY_VERIFY_WITH_TIMEOUT(rendered.count() >= 1 && view.rangeIsExact(), kBoundMs);
        ColorBar* bar = view.colorBar();
        QVERIFY(bar->isVisible());
        QCOMPARE(bar->low(), -10.0);
        QCOMPARE(bar->high(), 53.0);
        QCOMPARE(bar->labels(), (QStringList{"-10", "21.5", "53"}));
        QVERIFY(bar->nanShown());
        QCOMPARE(bar->colormap(), view.controls()->colormap());
        view.setLeaf(DType::Int32, ownedBytes(std::vector<std::int32_t>(64, 7)), {8, 8});
        QTRY_VERIFY_WITH_TIMEOUT(rendered.count() >= 2, kBoundMs);
        QVERIFY(!bar->nanShown());  // integers hold no NaN
        view.setLeaf(DType::UInt8, ownedBytes(QByteArray(8 * 8 * 3, '\x40')), {8, 8, 3});
        QTRY_VERIFY_WITH_TIMEOUT(rendered.count() >= 3, kBoundMs);
        QVERIFY(!bar->isVisible());

        HistogramWidget histogram;
        histogram.resize(400, 200);
        histogram.show();
        histogram.setData({5, 1200, 37, 0}, 0.0, 1.0);
        QCOMPARE(histogram.axisTop(), std::int64_t(1500));  // a round count at the top
        QCOMPARE(histogram.binText(1), QString("[0.25, 0.5): 1,200 values (96.6%)"));
        QCOMPARE(histogram.binText(3), QString("[0.75, 1]: 0 values (0.0%)"));
        histogram.setData({3, 997}, -2.0, 2.0);
        QCOMPARE(histogram.axisTop(), std::int64_t(1000));
        // A point over the second half of the plot is the second bin.
        QCOMPARE(histogram.binAt({histogram.width() * 3 / 4, histogram.height() / 2}), 1);
        QCOMPARE(histogram.binAt({1, 1}), -1);  // the axis' labels
    }

    // A leaf far wider than tall (a Linear layer's weight) is drawn with a
    // stride per axis and fills the view: all of its 10 rows are drawn (one
    // stride for both axes drew 1 row of 10). The same for a tall leaf.
    void elongatedLeavesDrawEveryRowAndColumn_data() {
        QTest::addColumn<bool>("wide");
        QTest::newRow("[10, 7200]") << true;
        QTest::newRow("[7200, 10]") << false;
    }
    void elongatedLeavesDrawEveryRowAndColumn() {
        QFETCH(bool, wide);
        const std::int64_t few = 10, many = 7200;
        std::vector<float> values(std::size_t(few * many));
        for (std::int64_t i = 0; i < few * many; ++i)  // the short axis' index, as a value
            values[std::size_t(i)] = float(wide ? i / many : i % few);
        ImageView view;
        view.resize(620, 420);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QSignalSpy rendered(&view, &ImageView::rendered);
        view.setLeaf(
            DType::Float32, ownedBytes(std::move(values)),
            wide ? std::vector<std::int64_t>{few, many} : std::vector<std::int64_t>{many, few});
        QTRY_VERIFY_WITH_TIMEOUT(rendered.count() >= 1 && !view.isRendering(), kBoundMs);
        const QImage image = view.image();
        QCOMPARE(wide ? image.height() : image.width(), int(few));
        QVERIFY(wide ? image.width() < many : image.height() < many);
        // Each of the 10 is there, darkest to brightest.
        int previous = -1;
        for (int k = 0; k < few; ++k) {
            const int grey = QColor(wide ? image.pixel(0, k) : image.pixel(k, 0)).red();
            QVERIFY2(grey > previous, qPrintable(QString("index %1: %2").arg(k).arg(grey)));
            previous = grey;
        }
        QVERIFY2(view.statusText().contains(wide ? "a pixel per 1 × " : " × 1 elements"),
                 qPrintable(view.statusText()));
        QVERIFY(!view.colorBar()->nanShown());  // no NaN drawn, none in the key
    }

    // A - B of two [10, 7200] leaves that differ in columns the sampled
    // picture skips: each difference pixel is the largest difference of
    // its block, so the change shows in its row.
    void comparisonShowsChangesBetweenSampledColumns() {
        std::vector<float> a(10 * 7200, 1.0f), b = a;
        for (int c = 101; c < 104; ++c)
            b[std::size_t(7 * 7200 + c)] = 6.0f;
        ImageRequest ra, rb;
        ra.dtype = rb.dtype = DType::Float32;
        ra.bytes = ownedBytes(std::move(a));
        rb.bytes = ownedBytes(std::move(b));
        ra.slice = TensorSlice::defaultFor({10, 7200});
        ra.maxSide = 400;
        const ComparisonImages images = renderComparison(ra, rb);
        QCOMPARE(images.difference.stride.rows, 1);
        QVERIFY(images.difference.stride.cols > 3);
        QCOMPARE(images.maxAbsDiff, 5.0);
        const QImage& d = images.difference.image;
        QCOMPARE(d.height(), 10);
        const QRgb equal = d.pixel(0, 0);  // no difference there
        int changed = 0;
        for (int y = 0; y < d.height(); ++y)
            for (int x = 0; x < d.width(); ++x)
                if (d.pixel(x, y) != equal) {
                    QCOMPARE(y, 7);
                    ++changed;
                }
        QVERIFY(changed >= 1);
        QCOMPARE(CompareImageView::strideText({1, 21}), QString(" (every row, every 21st column)"));
        QCOMPARE(CompareImageView::strideText({2, 12}),
                 QString(" (every 2nd row, every 12th column)"));
    }

    // An integer histogram has bins of whole numbers: int32 0..49, each 6
    // times, is 50 bars of 6, not a comb of 64 bins.
    void integerHistogramsHaveWholeNumberBins() {
        std::vector<std::int32_t> values;
        for (int k = 0; k < 6; ++k)
            for (int v = 0; v < 50; ++v)
                values.push_back(v);
        StatisticsRequest request;
        request.dtype = DType::Int32;
        request.bytes = ownedBytes(std::move(values));
        request.numel = 300;
        const Statistics s = computeStatistics(request);
        QCOMPARE(s.histogram, std::vector<std::int64_t>(50, 6));
        QCOMPARE(s.histogramLow, -0.5);
        QCOMPARE(s.histogramHigh, 49.5);
        // More values than bins: each bin the same count of whole numbers.
        std::vector<std::int16_t> wide(1000);
        for (int v = 0; v < 1000; ++v)
            wide[std::size_t(v)] = std::int16_t(v);
        request.dtype = DType::Int16;
        request.bytes = ownedBytes(std::move(wide));
        request.numel = 1000;
        const Statistics w = computeStatistics(request);
        QCOMPARE(int(w.histogram.size()), 63);  // bins of 16 values: 62 full, the last 8
        QCOMPARE(w.histogram.front(), std::int64_t(16));
        QCOMPARE(w.histogram.back(), std::int64_t(1000 - 62 * 16));
    }

    void largeImageIsRenderedAtScreenResolution() {
        const int side = 2048;
        QByteArray raw(side * side * 4, '\0');
        auto* v = reinterpret_cast<float*>(raw.data());
        for (int i = 0; i < side * side; ++i)
            v[i] = float(i % 1000);
        ImageView view;
        view.resize(520, 420);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QSignalSpy rendered(&view, &ImageView::rendered);
        view.setLeaf(DType::Float32, ownedBytes(raw), {side, side});
        // The first picture; the exact range may already have redrawn it (timing is the machine's).
        QTRY_VERIFY_WITH_TIMEOUT(rendered.count() >= 1, kBoundMs);
        // The sample sees only even values: the exact range (0 … 999) redraws it once.
        QTRY_VERIFY_WITH_TIMEOUT(view.rangeIsExact() && !view.isRendering(), kBoundMs);
        QCOMPARE(view.rangeHigh(), 999.0);
        const int before = rendered.count();
        const ImageCanvas* canvas = view.canvas();
        const QSize screen = canvas->size() * canvas->devicePixelRatioF();
        const QSize image = view.image().size();
        QVERIFY2(image.width() <= screen.width() && image.height() <= screen.height(),
                 qPrintable(QString("%1x%2 drawn on %3x%4")
                                .arg(image.width())
                                .arg(image.height())
                                .arg(screen.width())
                                .arg(screen.height())));
        QVERIFY(image.width() >= screen.width() / 2 || image.height() >= screen.height() / 2);
        QVERIFY(canvas->detail().isNull());  // at fit, nothing finer is needed

        // Zoomed in to 4 screen pixels an element: the region on screen at 1:1.
        view.canvas()->setZoom(4);
        QTRY_COMPARE_WITH_TIMEOUT(rendered.count(), before + 1, kBoundMs);
        const QImage& detail = canvas->detail();
        QVERIFY(!detail.isNull());
        QVERIFY(detail.width() <= screen.width() && detail.height() <= screen.height());
        const QRectF visible = canvas->visibleElements();
        QVERIFY(visible.width() < 200);
        QCOMPARE(view.image().size(), image);  // the whole-slice picture stays as it was
    }

    void stackFramesAreReadAhead() {
        // [50, 3, 64, 64]: the neighbours of the shown frame are rendered ahead,
        // so the slider shows the next one at once, without waiting for a worker.
        const int frames = 50, pixels = 3 * 64 * 64;
        QByteArray raw(frames * pixels, '\0');
        for (int i = 0; i < raw.size(); ++i)
            raw[i] = static_cast<char>(i / pixels);  // frame f is all f
        ImageView view;
        view.resize(400, 300);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QSignalSpy rendered(&view, &ImageView::rendered);
        view.setLeaf(DType::UInt8, ownedBytes(raw), {frames, 3, 64, 64});
        QTRY_COMPARE_WITH_TIMEOUT(rendered.count(), 1, kBoundMs);
        QTRY_VERIFY_WITH_TIMEOUT(view.cachedFrames() >= 3,
                                 kBoundMs);  // this one, the next and the one after
        for (int f = 1; f <= 2; ++f) {
            view.sliceSelector()->setIndex(0, f);
            QCOMPARE(rendered.count(), 1 + f);  // from the read-ahead, in the same call
            QCOMPARE(QColor(view.image().pixel(0, 0)).red(), f);
            QTRY_VERIFY_WITH_TIMEOUT(!view.isRendering() && view.cachedFrames() >= 3 + f, kBoundMs);
        }
    }

    void sliceRangeMatchesTheRenderersRange_data() {
        QTest::addColumn<int>("scale");
        QTest::addColumn<bool>("continuous");  // float64, (nearly) all distinct: every radix pass
        QTest::newRow("min-max") << int(ImageScale::MinMax) << false;
        QTest::newRow("percentile") << int(ImageScale::Percentile) << false;
        QTest::newRow("percentile, float64") << int(ImageScale::Percentile) << true;
    }
    void sliceRangeMatchesTheRenderersRange() {
        // The renderer at stride 1 sees every element: the exact range is its range.
        QFETCH(int, scale);
        QFETCH(bool, continuous);
        const int rows = 301, cols = 257;
        ImageRequest r;
        QByteArray raw;
        std::uint32_t x = 12345;
        const auto next = [&x] { return x = x * 1664525u + 1013904223u; };
        if (continuous) {
            r.dtype = DType::Float64;
            raw.resize(rows * cols * 8);
            auto* v = reinterpret_cast<double*>(raw.data());
            for (int i = 0; i < rows * cols; ++i)
                v[i] = (double(next()) - 2e9) * 1e-7 + double(next()) * 1e-17;
            v[7] = std::numeric_limits<double>::quiet_NaN();
        } else {
            raw.resize(rows * cols * 4);
            auto* v = reinterpret_cast<float*>(raw.data());
            for (int i = 0; i < rows * cols; ++i)
                v[i] = float(int(next() >> 20) % 2000 - 700) * 0.25f;  // repeats, negatives, zeros
            v[7] = std::numeric_limits<float>::quiet_NaN();
            v[8] = std::numeric_limits<float>::infinity();
            v[9] = -std::numeric_limits<float>::infinity();
        }
        r.bytes = ownedBytes(raw);
        r.slice = TensorSlice::defaultFor({rows, cols});
        r.scale = static_cast<ImageScale>(scale);
        r.stride = {1, 1};
        const ImageResult drawn = renderImage(r);
        QVERIFY(drawn.stride.isOne());
        const RangeResult exact = sliceRange(r);
        QVERIFY(!exact.cancelled && !exact.sourceChanged);
        QCOMPARE(exact.low, drawn.low);
        QCOMPARE(exact.high, drawn.high);
        QVERIFY(exact.low < exact.high);

        tensordict::CancelToken cancel;
        cancel.cancel();
        QVERIFY(sliceRange(r, &cancel).cancelled);
    }

    void colourRangeIsRefinedToTheExactOne() {
        // 4096 x 4096 zeros and one 1000 at a prime row and column: the first
        // picture (a pixel per several elements) cannot see it.
        const int side = 4096, row = 4093, col = 4091;
        QByteArray raw(side * side * 4, '\0');
        reinterpret_cast<float*>(raw.data())[std::int64_t(row) * side + col] = 1000;
        QSemaphore release;
        std::atomic<bool> entered{false};
        ImageHooks hold;
        hold.rangeStarted = [&](const ImageRequest&) {
            if (!entered.exchange(true))  // the first one only
                release.acquire();
        };
        auto letGo = qScopeGuard([&] {
            release.release(100);
            QThreadPool::globalInstance()->waitForDone();
        });
        ImageView view;
        view.setHooks(hold);
        view.resize(520, 420);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QSignalSpy rendered(&view, &ImageView::rendered);
        view.setLeaf(DType::Float32, ownedBytes(raw), {side, side});
        QTRY_COMPARE_WITH_TIMEOUT(rendered.count(), 1, kBoundMs);
        QVERIFY(view.image().width() < side);
        QVERIFY(!view.rangeIsExact());
        QCOMPARE(view.rangeHigh(), 0.0);
        QVERIFY2(view.hoverText().contains("colour range 0 … 0 (sampled)"),
                 qPrintable(view.hoverText()));
        QTRY_VERIFY_WITH_TIMEOUT(entered.load(),
                                 kBoundMs);  // after the first picture, held in the hook

        release.release();
        QTRY_VERIFY_WITH_TIMEOUT(view.rangeIsExact(), kBoundMs);
        QCOMPARE(view.rangeLow(), 0.0);
        QCOMPARE(view.rangeHigh(), 1000.0);
        QVERIFY2(view.hoverText().contains("colour range 0 … 1000 (exact)"),
                 qPrintable(view.hoverText()));
        QTRY_VERIFY_WITH_TIMEOUT(!view.isRendering(), kBoundMs);
        QCOMPARE(rendered.count(), 2);  // redrawn once with the exact range

        // Percentile: the one outlier is above the 99th: the sample was right.
        view.setScale(ImageScale::Percentile);
        QTRY_VERIFY_WITH_TIMEOUT(view.rangeIsExact() && !view.isRendering(), kBoundMs);
        QCOMPARE(view.rangeHigh(), 0.0);
    }

    void rangeRefinementIsDroppedWhenTheLeafChanges() {
        const int sideA = 4096, sideB = 2048;
        QByteArray a(sideA * sideA * 4, '\0'), b(sideB * sideB * 4, '\0');
        reinterpret_cast<float*>(a.data())[std::int64_t(4093) * sideA + 4091] = 1000;
        reinterpret_cast<float*>(b.data())[std::int64_t(2039) * sideB + 2029] = 7;
        // A's range is computed (0 … 1000), then held on its way back.
        QSemaphore release;
        std::atomic<bool> heldA{false};
        ImageHooks hold;
        hold.rangeFinished = [&](const RangeResult& r) {
            if (r.high == 1000 && !heldA) {
                heldA = true;
                release.acquire();
            }
        };
        auto letGo = qScopeGuard([&] {
            release.release(100);
            QThreadPool::globalInstance()->waitForDone();
        });
        ImageView view;
        view.setHooks(hold);
        view.resize(520, 420);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QSignalSpy rendered(&view, &ImageView::rendered);
        view.setLeaf(DType::Float32, ownedBytes(a), {sideA, sideA});
        QTRY_COMPARE_WITH_TIMEOUT(rendered.count(), 1, kBoundMs);
        QTRY_VERIFY_WITH_TIMEOUT(heldA.load(), kBoundMs);

        view.setLeaf(DType::Float32, ownedBytes(b), {sideB, sideB});  // the user moves on
        release.release();
        QTRY_VERIFY_WITH_TIMEOUT(view.rangeIsExact() && !view.isRendering(), kBoundMs);
        QCOMPARE(view.rangeLow(), 0.0);
        QCOMPARE(view.rangeHigh(), 7.0);  // B's, never A's 1000
        QVERIFY2(view.hoverText().contains("colour range 0 … 7 (exact)"),
                 qPrintable(view.hoverText()));
        QThreadPool::globalInstance()->waitForDone();
        QCoreApplication::processEvents();
        QCOMPARE(view.rangeHigh(), 7.0);
    }

private:
    QTemporaryDir scratch_;
};

QTEST_MAIN(PreviewTest)
#include "tst_preview.moc"
