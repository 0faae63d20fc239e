// Statistics of whole leaves (tensordict/statistics.h, `--info --stats`):
// every float8 dtype of safetensors decoded to float64, NaN and Inf counted
// apart, against what numpy computes from each format's definition
// (tests/support/make_low_precision.py); the same figures on any number of
// threads and through a compressed archive entry; a file that shrinks
// underneath, or a cancel, stops with an error that names it.

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtEndian>
#include <QtTest>
#include <cmath>
#include <cstring>
#include <random>

#include "../../core/src/statistics/float32_sums.h"
#include "memory_transport.h"
#include "tensordict/element.h"
#include "tensordict/error.h"
#include "tensordict/guarded_read.h"
#include "tensordict/report.h"
#include "tensordict/save.h"
#include "tensordict/series.h"
#include "tensordict/source.h"
#include "tensordict/statistics.h"
#include "tensordict/tensordict.h"
#include "testsupport.h"

using namespace tensordict;

namespace {

// Sums in another order differ in the last bits: equal within 1e-12 of the
// spread of the values.
bool close(double ours, double numpy, double scale) {
    return std::abs(ours - numpy) <= 1e-12 * std::max({std::abs(numpy), scale, 1.0});
}

const Value& field(const Value& object, const char* key) {
    const Value* v = object.find(key);
    if (!v)
        throw std::runtime_error(std::string("no field ") + key);
    return *v;
}

const Node& leafAt(const TensorDict& td, const std::string& key) {
    const Node* node = td.root().find({key});
    if (!node || !node->isTensor())
        throw std::runtime_error("no leaf " + key);
    return *node;
}

}  // namespace

class StatisticsTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(scratch_.isValid());
        file_ = scratch_.filePath("low.safetensors");
        QString out, error;
        QVERIFY2(testsupport::runPython({TDSTUDIO_TEST_SUPPORT_DIR "/make_low_precision.py", file_},
                                        &out, &error),
                 qPrintable(error));
        expected_ = QJsonDocument::fromJson(out.toUtf8()).object()["tensors"].toObject();
        QCOMPARE(expected_.size(), 16);
    }

    void everyFloat8LeafMatchesNumpy() {
        const TensorDict td = load(file_.toStdString());
        for (auto it = expected_.begin(); it != expected_.end(); ++it) {
            const std::string name = it.key().toStdString();
            const QJsonObject want = it.value().toObject();
            const Node& leaf = leafAt(td, name);
            // Each value as numpy decodes it (every code of the format in
            // the every_code leaves).
            const QJsonArray values = want["values"].toArray();
            LeafBytes bytes = leaf.bytes();
            for (int i = 0; i < values.size(); ++i) {
                const double v = elementAsDouble(bytes.data.get() + i, leaf.leaf().dtype);
                const QJsonValue w = values[i];
                if (w.isNull())
                    QVERIFY2(std::isnan(v), qPrintable(it.key() + " [" + QString::number(i) + "]"));
                else if (w.isString())
                    QCOMPARE(v, w.toString() == "inf" ? INFINITY : -INFINITY);
                else
                    QCOMPARE(v, w.toDouble());
            }
            const LeafStatistics one = leafStatistics(leaf, 1);
            const LeafStatistics two = leafStatistics(leaf, 2);
            const QJsonObject s = want["stats"].toObject();
            QCOMPARE(one.nans, s["nan"].toInteger());
            QCOMPARE(one.infs, s["inf"].toInteger());
            QCOMPARE(one.count, std::int64_t(leaf.leaf().numel));
            const double spread = s["std"].toDouble();
            QCOMPARE(one.min, s["min"].toDouble());
            QCOMPARE(one.max, s["max"].toDouble());
            QVERIFY2(close(one.mean, s["mean"].toDouble(), spread), qPrintable(it.key()));
            QVERIFY2(close(one.std, spread, spread), qPrintable(it.key()));
            // Pieces merged in order: the same figures on any number of threads.
            QCOMPARE(two.mean, one.mean);
            QCOMPARE(two.std, one.std);
        }
    }

    // describe() (and so --info --json --stats) carries the same figures;
    // min to std are null where no value is finite.
    void describeCarriesStats() {
        const TensorDict td = load(file_.toStdString());
        DescribeOptions options;
        options.stats = true;
        const Value described = describe(td, options);
        int seen = 0;
        for (const Value& leaf : field(described, "leaves").asList()) {
            const Value& stats = field(leaf, "stats");
            const std::string name = field(leaf, "key").asList().at(0).asString();
            const QJsonObject want =
                expected_[QString::fromStdString(name)].toObject()["stats"].toObject();
            QCOMPARE(field(stats, "nan").asInt(), want["nan"].toInteger());
            QCOMPARE(field(stats, "max").asDouble(), want["max"].toDouble());
            ++seen;
        }
        QCOMPARE(seen, 16);

        const float values[] = {NAN, INFINITY, -INFINITY};
        QByteArray header = R"({"x":{"dtype":"F32","shape":[3],"data_offsets":[0,12]}})";
        header.append((8 - header.size() % 8) % 8, ' ');
        QByteArray file(8, '\0');
        qToLittleEndian<quint64>(header.size(), file.data());
        file += header + QByteArray(reinterpret_cast<const char*>(values), sizeof values);
        const QString path = scratch_.filePath("nonfinite.safetensors");
        testsupport::writeFile(path, file);
        const Value onlyNonFinite = describe(load(path.toStdString()), options);
        const Value& stats = field(field(onlyNonFinite, "leaves").asList().at(0), "stats");
        QVERIFY(field(stats, "min").isNull() && field(stats, "std").isNull());
        QCOMPARE(field(stats, "nan").asInt(), std::int64_t(1));
        QCOMPARE(field(stats, "inf").asInt(), std::int64_t(2));
    }

    // A deflated archive entry is inflated front to back: the same figures.
    void compressedEntryGivesTheSameFigures() {
        const TensorDict td = load(file_.toStdString());
        SaveOptions options;
        options.compression = kZipDeflate;
        const std::string archive = scratch_.filePath("low.tdz").toStdString();
        save(select(td, {{"f8_e5m2.weights"}}), archive, options);
        const TensorDict packed = load(archive);
        const Node& plain = leafAt(td, "f8_e5m2.weights");
        const Node& deflated = leafAt(packed, "f8_e5m2.weights");
        QCOMPARE(deflated.leaf().storage.kind, StorageKind::CompressedEntry);
        const LeafStatistics a = leafStatistics(plain), b = leafStatistics(deflated);
        QCOMPARE(b.nans, a.nans);
        QCOMPARE(b.infs, a.infs);
        QCOMPARE(b.min, a.min);
        QCOMPARE(b.max, a.max);
        QVERIFY(close(b.mean, a.mean, a.std));
        QVERIFY(close(b.std, a.std, a.std));
    }

    // F4 and F6 leaves are unpacked range by range: any range equals that
    // part of the whole, from disk and from a transport that cannot map.
    void packedRangesUnpackAsTheWhole() {
        QFile f(file_);
        QVERIFY(f.open(QIODevice::ReadOnly));
        memory_->add("mem://low/low.safetensors", f.readAll());
        registerTransport(memory_);
        for (const std::string& location :
             {file_.toStdString(), std::string("mem://low/low.safetensors")}) {
            const TensorDict td = load(location);
            for (const std::string key : {"f4.weights", "f6_e2m3.weights", "f6_e3m2.weights"}) {
                const Node& leaf = leafAt(td, key);
                QCOMPARE(leaf.leaf().nbytes, std::uint64_t(leaf.leaf().numel));
                const LeafBytes whole = leaf.bytes();
                std::mt19937_64 random(34);
                for (int i = 0; i < 50; ++i) {
                    const std::uint64_t offset = random() % leaf.leaf().nbytes;
                    const std::uint64_t length = 1 + random() % (leaf.leaf().nbytes - offset);
                    std::vector<std::byte> part(length);
                    leaf.readInto(offset, part.data(), part.size());
                    QVERIFY2(std::memcmp(part.data(), whole.data.get() + offset, length) == 0,
                             qPrintable(QString::fromStdString(key + " at " + location)));
                    const LeafBytes range = leaf.bytesRange(offset, length);
                    QVERIFY(std::memcmp(range.data.get(), whole.data.get() + offset, length) == 0);
                }
            }
        }
    }

    // What --info and the details say of a packed tensor is what the file
    // holds: its bytes (numel x bits / 8, not its codes), the file's size and
    // where the bytes start, as the header read here gives them.
    void packedTensorsReportTheirBytesAsStored() {
        QFile f(file_);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray bytes = f.readAll();
        const quint64 headerSize = qFromLittleEndian<quint64>(bytes.constData());
        const QJsonObject header = QJsonDocument::fromJson(bytes.mid(8, int(headerSize))).object();
        const TensorDict td = load(file_.toStdString());
        for (const QString key : {"f4.every_code", "f4.weights", "f6_e2m3.every_code",
                                  "f6_e2m3.weights", "f6_e3m2.weights", "f8_e4m3.weights"}) {
            const QJsonArray offsets = header[key].toObject()["data_offsets"].toArray();
            const qint64 begin = offsets[0].toInteger(), end = offsets[1].toInteger();
            Value::Object properties;
            for (NodeProperty& p : nodeProperties(leafAt(td, key.toStdString())))
                properties.emplace_back(std::string(p.name), std::move(p.value));
            const Value shown(std::move(properties));
            QCOMPARE(field(shown, "nbytes").asInt(), end - begin);
            QCOMPARE(field(shown, "file_size").asInt(), qint64(bytes.size()));
            QCOMPARE(field(shown, "byte_offset").asInt(), qint64(8 + headerSize) + begin);
        }
    }

    // A packed tensor that does not fill whole bytes is refused, named; a
    // packed tensor is not written where no format holds it.
    void packedTensorsRefusedWhereTheyCannotBe() {
        QByteArray header = R"({"odd":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}})";
        header.append((8 - header.size() % 8) % 8, ' ');
        QByteArray bytes(8, '\0');
        qToLittleEndian<quint64>(header.size(), bytes.data());
        bytes += header + QByteArray(2, '\x21');
        const QString odd = scratch_.filePath("odd.safetensors");
        testsupport::writeFile(odd, bytes);
        const std::optional<Failure> failure =
            testsupport::failureOf([&] { (void)load(odd.toStdString()); });
        QVERIFY(failure);
        QCOMPARE(failure->kind, ErrorKind::Corrupt);
        QVERIFY2(QString::fromStdString(failure->where).contains("\"odd\""),
                 failure->where.c_str());

        const TensorDict td = load(file_.toStdString());
        const TensorDict f4 = select(td, {{"f4.weights"}});
        for (const std::string target : {"f4.tdz", "f4.safetensors"}) {
            const std::optional<Failure> refused = testsupport::failureOf([&] {
                (void)save(f4, scratch_.filePath(QString::fromStdString(target)).toStdString());
            });
            QVERIFY(refused);
            QCOMPARE(refused->kind, ErrorKind::Unsupported);
            QVERIFY2(QString::fromStdString(refused->where).contains("f4.weights"),
                     refused->where.c_str());
            QVERIFY(!QFile::exists(scratch_.filePath(QString::fromStdString(target))));
        }
    }

    void shrunkFileIsNamed() {
        const QString copy = scratch_.filePath("shrinks.safetensors");
        QVERIFY(QFile::copy(file_, copy));
        const TensorDict td = load(copy.toStdString());
        QVERIFY(QFile::resize(copy, 4096));
        try {
            (void)leafStatistics(leafAt(td, "f8_e8m0.weights"));
            QFAIL("statistics of a leaf past the end of its file");
        } catch (const Error& e) {
            QVERIFY2(QString(e.what()).contains("shrinks.safetensors"), e.what());
        }
    }

    // Squares past the largest double: the spread overflows to Inf as
    // numpy's does ([1e200, -1e200, 5]: std inf), the mean stays right.
    void hugeValuesOverflowToInf() {
        const double values[] = {1e200, -1e200, 5.0};
        const Moments m =
            momentsOfElements(reinterpret_cast<const std::byte*>(values), DType::Float64, 3);
        QCOMPARE(m.finite, std::int64_t(3));
        QVERIFY(std::abs(m.mean - 5.0 / 3) < 1e-12);
        QVERIFY2(std::isinf(m.populationStd()), qPrintable(QString::number(m.populationStd())));
        QCOMPARE(m.min, -1e200);
        QCOMPARE(m.max, 1e200);
    }

    // The hot loop of --series (float32_sums.h) in every version this CPU
    // runs, against sums taken here in long double: lengths around the
    // vector widths (the tails), signed zeros, subnormals, float32's
    // largest values, equal and moved positions. A NaN or an Inf on either
    // side leaves a sum non-finite, which sends the piece the careful way.
    void seriesKernelsAgreeWithAReference() {
        std::mt19937 random(35);
        std::uniform_real_distribution<float> uniform(-3.0f, 3.0f);
        const std::vector<Float32Kernel>& kernels = float32KernelsOnThisCpu();
        QCOMPARE(kernels.front(), Float32Kernel::Portable);
        qInfo("kernels on this CPU: %d", int(kernels.size()));
        const float special[] = {0.0f, -0.0f, 1e-40f, -1e-45f, 3.4e38f, -3.4e38f, 1.0f};
        for (const std::size_t n : {1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 1000, 100003}) {
            std::vector<float> a(n), b(n);
            for (std::size_t i = 0; i < n; ++i) {
                a[i] = i % 13 == 5 ? special[i % 7] : uniform(random);
                b[i] = i % 3 == 0 ? a[i] : a[i] + uniform(random) * 1e-3f;
            }
            const float shift = b[0];
            long double sum = 0, sumsq = 0, dot = 0, sumAbs = 0, dotAbs = 0;
            float lo = shift, hi = shift, maxAbs = 0;
            std::int64_t changed = 0;
            for (std::size_t i = 0; i < n; ++i) {
                const long double d = (long double)b[i] - shift;
                sum += d, sumsq += d * d, dot += (long double)a[i] * b[i];
                sumAbs += std::fabs(d), dotAbs += std::fabs((long double)a[i] * b[i]);
                lo = std::min(lo, b[i]), hi = std::max(hi, b[i]);
                maxAbs = std::max(maxAbs, std::fabs(b[i] - a[i]));
                changed += a[i] != b[i];
            }
            // Sums in another order: equal within 1e-12 of the sum of magnitudes.
            const auto near = [](double got, long double want, long double magnitudes) {
                return std::fabs((long double)got - want) <= 1e-12L * std::max(magnitudes, 1.0L);
            };
            for (const Float32Kernel kernel : kernels) {
                const QString where =
                    QString("kernel %1, n %2").arg(int(kernel)).arg(qulonglong(n));
                const Float32Sums s = float32Sums(b.data(), a.data(), n, shift, kernel);
                QVERIFY2(s.allFinite(), qPrintable(where));
                QVERIFY2(near(s.sum, sum, sumAbs), qPrintable(where + " sum"));
                QVERIFY2(near(s.sumsq, sumsq, sumsq), qPrintable(where + " sumsq"));
                QVERIFY2(near(s.dot, dot, dotAbs), qPrintable(where + " dot"));
                QCOMPARE(s.lo, lo);
                QCOMPARE(s.hi, hi);
                QCOMPARE(s.maxAbs, maxAbs);
                QCOMPARE(s.changed, changed);
                const Float32Sums alone = float32Sums(b.data(), nullptr, n, shift, kernel);
                QVERIFY2(
                    alone.allFinite() && alone.sum == s.sum && alone.changed == 0 && alone.dot == 0,
                    qPrintable(where + " without a"));
                for (const float bad : {NAN, INFINITY, -INFINITY}) {
                    std::vector<float> withBad = b;
                    withBad[n - 1] = bad;  // in the tail or the last vector
                    QVERIFY2(!float32Sums(withBad.data(), a.data(), n, shift, kernel).allFinite(),
                             qPrintable(where + " bad b"));
                    std::vector<float> badBefore = a;
                    badBefore[n / 2] = bad;
                    QVERIFY2(!float32Sums(b.data(), badBefore.data(), n, shift, kernel).allFinite(),
                             qPrintable(where + " bad a"));
                }
            }
        }
    }

    void cancelStops() {
        const TensorDict td = load(file_.toStdString());
        CancelToken cancel;
        cancel.cancel();
        QVERIFY_THROWS_EXCEPTION(Cancelled,
                                 leafStatistics(leafAt(td, "f8_e4m3.weights"), 2, &cancel));
    }

    // A folder given to --series: its steps are the members named alike
    // but for their numbers, in natural order; what a run keeps beside them
    // (a config, a log, the final model) is no step.
    void aFolderOfStepsLeavesOutWhatIsNoStep_data() {
        QTest::addColumn<QStringList>("files");
        QTest::addColumn<QStringList>("folders");
        QTest::addColumn<QStringList>("steps");
        QTest::newRow("step files")
            << QStringList{"step-10.pt",  "step-9.pt", "step-100.pt",
                           "config.json", "train.log", ".hidden-1.pt"}
            << QStringList{} << QStringList{"step-9.pt", "step-10.pt", "step-100.pt"};
        QTest::newRow("Trainer output_dir")
            << QStringList{"config.json", "model.safetensors", "trainer_state.json",
                           "training_args.bin"}
            << QStringList{"checkpoint-1500", "checkpoint-500", "checkpoint-1000"}
            << QStringList{"checkpoint-500", "checkpoint-1000", "checkpoint-1500"};
        QTest::newRow("Lightning")
            << QStringList{"epoch=0-step=50.ckpt", "epoch=1-step=100.ckpt", "last.ckpt"}
            << QStringList{} << QStringList{"epoch=0-step=50.ckpt", "epoch=1-step=100.ckpt"};
        QTest::newRow("none alike") << QStringList{"before.pt", "after.pt"} << QStringList{}
                                    << QStringList{"after.pt", "before.pt"};
        QTest::newRow("TensorBoard beside")
            << QStringList{"events.out.tfevents.1700000000.host.1.0",
                           "events.out.tfevents.1700000100.host.2.0"}
            << QStringList{"step_000200", "step_000100"}
            << QStringList{"step_000100", "step_000200"};
        QTest::newRow("sidecars") << QStringList{"ckpt_100.pt", "ckpt_100.json", "ckpt_200.pt",
                                                 "ckpt_200.json"}
                                  << QStringList{} << QStringList{"ckpt_100.pt", "ckpt_200.pt"};
        QTest::newRow("final model in shards")
            << QStringList{"model-00001-of-00003.safetensors", "model-00002-of-00003.safetensors",
                           "model-00003-of-00003.safetensors", "model.safetensors.index.json",
                           "config.json"}
            << QStringList{"checkpoint-1000", "checkpoint-500"}
            << QStringList{"checkpoint-500", "checkpoint-1000"};
        QTest::newRow("SLURM logs beside")
            << QStringList{"step_1.pt", "step_2.pt", "slurm-11.out", "slurm-12.out", "slurm-13.out"}
            << QStringList{} << QStringList{"step_1.pt", "step_2.pt"};
        QTest::newRow("epochs of ten")
            << QStringList{"epoch-1-of-10.pt", "epoch-2-of-10.pt"} << QStringList{}
            << QStringList{"epoch-1-of-10.pt", "epoch-2-of-10.pt"};
        QTest::newRow("one checkpoint")
            << QStringList{"config.json", "trainer_state.json"} << QStringList{"checkpoint-500"}
            << QStringList{"checkpoint-500"};
        // Two runs of steps alike in size: which is meant is not known.
        QTest::newRow("two runs") << QStringList{"ema_1.pt", "ema_2.pt", "model_1.pt", "model_2.pt"}
                                  << QStringList{} << QStringList{};
    }

    void aFolderOfStepsLeavesOutWhatIsNoStep() {
        QFETCH(QStringList, files);
        QFETCH(QStringList, folders);
        QFETCH(QStringList, steps);
        const QString dir = scratch_.filePath("run-" + QString(QTest::currentDataTag()));
        QVERIFY(QDir().mkpath(dir));
        for (const QString& name : files)
            testsupport::writeFile(dir + "/" + name, "x");
        for (const QString& name : folders)
            QVERIFY(QDir().mkpath(dir + "/" + name));
        QStringList found;
        try {
            for (const std::string& step : seriesInFolder(dir.toStdString()))
                found << QString::fromStdString(step).section('/', -1);
        } catch (const Error& e) {
            QVERIFY2(steps.isEmpty(), e.what());
            QCOMPARE(QString::fromStdString(e.reason()),
                     QString("the folder holds 2 steps each of 2 runs (ema_#.pt, model_#.pt, # "
                             "for the step): give the checkpoints of one"));
            return;
        }
        QVERIFY2(!steps.isEmpty(), "two runs of steps were taken as one");
        QCOMPARE(found, steps);
    }

private:
    QTemporaryDir scratch_;
    QString file_;
    QJsonObject expected_;
    std::shared_ptr<testsupport::MemoryTransport> memory_ =
        std::make_shared<testsupport::MemoryTransport>();
};

QTEST_GUILESS_MAIN(StatisticsTest)
#include "tst_statistics.moc"
