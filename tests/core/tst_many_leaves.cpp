// A memmap directory of 100,000 leaves read, hashed, saved (to a .tdz and to
// a directory) and compared, while the process holds a bounded number of
// mappings: the kernel allows 65,530, so a reader that kept one per leaf
// would fail near leaf 65,000 with "Cannot allocate memory".

#include <QCryptographicHash>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <atomic>
#include <cstring>

#include "libzip_reader.h"
#include "tensordict/compare.h"
#include "tensordict/report.h"
#include "tensordict/save.h"
#include "tensordict/tensordict.h"
#include "testsupport.h"

using namespace tensordict;

namespace {

constexpr int kGroups = 100;
constexpr int kLeavesPerGroup = 1000;
constexpr int kLeafElements = 4;
// What this process may map above what it mapped before opening the
// dataset: the directory store's cache of mappings (256), the leaves
// being read on each thread, and the archive written.
constexpr int kMappingBound = 1024;

int mappingCount() {
    QFile maps("/proc/self/maps");
    if (!maps.open(QIODevice::ReadOnly))
        return -1;
    return static_cast<int>(maps.readAll().count('\n'));
}

// The largest mapping count seen by the callbacks of an operation.
struct PeakMappings {
    std::atomic<int> peak{0};
    std::atomic<int> calls{0};
    void sample() {
        if (calls++ % 64 != 0)  // /proc/self/maps is not free to read
            return;
        const int now = mappingCount();
        int seen = peak.load();
        while (now > seen && !peak.compare_exchange_weak(seen, now)) {
        }
    }
};

std::vector<std::string> leafPath(int group, int leaf) {
    return {QString("group_%1").arg(group, 3, 10, QChar('0')).toStdString(),
            QString("leaf_%1").arg(leaf, 4, 10, QChar('0')).toStdString()};
}

}  // namespace

class ManyLeavesTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void cleanup() { testsupport::verifyArchivesWithLibzip(scratch_.path()); }

    void initTestCase() {
        QVERIFY(scratch_.isValid());
        source_ = scratch_.path() + "/wide";
        testsupport::writeWideTree(source_, kGroups, kLeavesPerGroup, kLeafElements);
        // Distinct values in one leaf, to check that the right bytes arrive.
        const float values[kLeafElements] = {1.5f, -2.0f, 3.25f, 1e6f};
        marked_ = QByteArray(reinterpret_cast<const char*>(values), sizeof values);
        QFile file(source_ + "/group_042/leaf_0777.memmap");
        QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
        QCOMPARE(file.write(marked_), qint64(marked_.size()));
        file.close();
        baseline_ = mappingCount();
        QVERIFY(baseline_ > 0);
    }

    // Small leaves are read into memory and large ones mapped; with every
    // leaf mapped, the store's cache of mappings is what bounds them.
    void everyOperationHoldsFewMappings_data() {
        QTest::addColumn<quint64>("mapLeavesFrom");
        QTest::newRow("small leaves read") << quint64(LoadOptions{}.store.mapLeavesFrom);
        QTest::newRow("every leaf mapped") << quint64(1);
    }

    void everyOperationHoldsFewMappings() {
        QFETCH(quint64, mapLeavesFrom);
        LoadOptions options;
        options.store.mapLeavesFrom = mapLeavesFrom;
        const TensorDict td = load(source_.toStdString(), options);
        QCOMPARE(int(td.root().children().size()), kGroups);

        // Hashed, as --info --sha256 does.
        DescribeOptions describeOptions;
        describeOptions.sha256 = true;
        const Value report = describe(td, describeOptions);
        const Value::List& leaves = report.find("leaves")->asList();
        QCOMPARE(int(leaves.size()), kGroups * kLeavesPerGroup);
        const Node* marked = td.root().find(leafPath(42, 777));
        QVERIFY(marked);
        QCOMPARE(QByteArray::fromStdString(leafSha256(*marked)),
                 QCryptographicHash::hash(marked_, QCryptographicHash::Sha256).toHex());
        QVERIFY2(mappingCount() - baseline_ < kMappingBound,
                 qPrintable(QString("%1 mappings after hashing").arg(mappingCount() - baseline_)));

        // Saved to an archive and (once: 100,000 more files) to a directory,
        // as --save does.
        QStringList targets{scratch_.path() + "/out.tdz"};
        if (mapLeavesFrom == 1)
            targets << scratch_.path() + "/out";
        for (const QString& target : targets) {
            PeakMappings peak;
            SaveOptions saveOptions;
            saveOptions.copyExisting = true;  // as --save: the leaves are mapped from elsewhere
            saveOptions.numThreads = 2;
            saveOptions.progress = [&peak](const SaveProgress&) { peak.sample(); };
            TensorDict saved;
            try {
                saved = save(td, target.toStdString(), saveOptions);
            } catch (const Error& e) {
                QFAIL(e.what());
            }
            QVERIFY2(
                peak.peak - baseline_ < kMappingBound,
                qPrintable(
                    QString("%1 mappings while saving %2").arg(peak.peak - baseline_).arg(target)));

            // Compared with the source, as --diff does: every key the same.
            PeakMappings comparePeak;
            CompareOptions compareOptions;
            compareOptions.numThreads = 2;
            compareOptions.progress = [&comparePeak](const CompareProgress&) {
                comparePeak.sample();
            };
            const CompareResult result = compare(td, saved, compareOptions);
            QVERIFY(!result.cancelled);
            QVERIFY2(result.equal(), result.errors().empty()
                                         ? "the saved copy differs"
                                         : result.errors().front()->error.c_str());
            QCOMPARE(int(result.keys.size()), kGroups * kLeavesPerGroup + kGroups + 1);
            QVERIFY2(comparePeak.peak - baseline_ < kMappingBound,
                     qPrintable(
                         QString("%1 mappings while comparing").arg(comparePeak.peak - baseline_)));
            const Node* copy = saved.root().find(leafPath(42, 777));
            QVERIFY(copy);
            QCOMPARE(leafSha256(*copy), leafSha256(*marked));
        }
        QVERIFY2(mappingCount() - baseline_ < kMappingBound,
                 qPrintable(QString("%1 mappings at the end").arg(mappingCount() - baseline_)));
    }

private:
    QTemporaryDir scratch_;
    QString source_;
    QByteArray marked_;
    int baseline_ = 0;
};

QTEST_GUILESS_MAIN(ManyLeavesTest)
#include "tst_many_leaves.moc"
