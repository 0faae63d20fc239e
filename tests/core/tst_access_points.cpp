// Access points of the deflate entries we write (core/src/containers/access_index.h):
// other zip readers read such archives unchanged, any part of an entry reads
// back exactly without inflating the rest, and a damaged or forged index is
// never trusted into wrong values.

#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <cstring>
#include <thread>

#include "../../core/src/codec/codec.h"
#include "libzip_reader.h"
#include "tensordict/check.h"
#include "tensordict/error.h"
#include "tensordict/leaf_pages.h"
#include "tensordict/node.h"
#include "tensordict/report.h"
#include "tensordict/save.h"
#include "tensordict/tensordict.h"
#include "testsupport.h"

using namespace tensordict;

namespace {

constexpr std::uint64_t kLeafBytes = (21u << 20) + 4321;  // six segments of 4 MiB, the last short

// Compressible bytes that differ everywhere: a ramp, runs and a little noise.
std::vector<std::uint8_t> sampleBytes(std::size_t n) {
    std::vector<std::uint8_t> v(n);
    std::uint32_t x = 12345;
    for (std::size_t i = 0; i < n; ++i) {
        x = x * 1103515245u + 12345u;
        v[i] = static_cast<std::uint8_t>((i / 4096) * 7 + (i % 97 < 40 ? 0 : (x >> 24) & 7));
    }
    return v;
}

// The ids of the extra blocks in each entry's central record, and whether
// zipfile's testzip() and numpy read the leaf back as `expectedSha`.
QJsonObject readWithPython(const QString& archive) {
    QString out, error;
    const bool ok = testsupport::runPython(
        {"-c",
         "import hashlib, json, struct, sys, zipfile\n"
         "z = zipfile.ZipFile(sys.argv[1])\n"
         "ids = {}\n"
         "for info in z.infolist():\n"
         "    e, found = info.extra, []\n"
         "    while len(e) >= 4:\n"
         "        i, n = struct.unpack('<HH', e[:4]); found.append(i); e = e[4 + n:]\n"
         "    ids[info.filename] = found\n"
         "print(json.dumps({'testzip': z.testzip(), 'ids': ids,\n"
         "    'sha256': hashlib.sha256(z.read('x.memmap')).hexdigest()}))\n",
         archive},
        &out, &error);
    if (!ok)
        qWarning("python: %s", qPrintable(error));
    return QJsonDocument::fromJson(out.toUtf8()).object();
}

// Rewrites the access index of x.memmap in the central directory with
// Python: `how` is "flip" (one byte of a segment length, the block's own
// CRC left stale) or "swap" (two segment lengths swapped and the block's
// CRC made right again: a forged index that passes every check but the
// data's).
bool damageIndex(const QString& archive, const QString& how) {
    QString error;
    const bool ok = testsupport::runPython(
        {"-c",
         "import struct, sys, zlib\n"
         "path, how = sys.argv[1], sys.argv[2]\n"
         "data = bytearray(open(path, 'rb').read())\n"
         "cd = data.find(b'PK\\x01\\x02')\n"
         "while cd >= 0:\n"
         "    n, m = struct.unpack('<HH', data[cd + 28:cd + 32])\n"
         "    if data[cd + 46:cd + 46 + n] == b'x.memmap': break\n"
         "    cd = data.find(b'PK\\x01\\x02', cd + 4)\n"
         "e = cd + 46 + n\n"
         "end = e + m\n"
         "while e < end:\n"
         "    i, k = struct.unpack('<HH', data[e:e + 4])\n"
         "    if i == 0x7874: break\n"
         "    e += 4 + k\n"
         "else: sys.exit('no access index')\n"
         "block = e + 4\n"
         "table = block + 10\n"
         "if how == 'flip':\n"
         "    data[table + 1] ^= 0x01\n"
         "else:\n"
         "    s = table + (32 if how == 'late' else 0)\n"
         "    a = data[s:s + 4]; data[s:s + 4] = data[s + 8:s + 12]\n"
         "    data[s + 8:s + 12] = a\n"
         "    struct.pack_into('<I', data, block + k - 4, zlib.crc32(bytes(data[block:block + k - "
         "4])))\n"
         "open(path, 'wb').write(data)\n",
         archive, how},
        nullptr, &error);
    if (!ok)
        qWarning("python: %s", qPrintable(error));
    return ok;
}

QByteArray sha256Of(const std::vector<std::uint8_t>& v) {
    return QCryptographicHash::hash(QByteArrayView(reinterpret_cast<const char*>(v.data()),
                                                   static_cast<qsizetype>(v.size())),
                                    QCryptographicHash::Sha256)
        .toHex();
}

}  // namespace

class TestAccessPoints : public QObject {
    Q_OBJECT

private:
    QTemporaryDir scratch_;
    std::vector<std::uint8_t> bytes_ = sampleBytes(kLeafBytes);

    QString write(const QString& name, int level, int threads, bool points) {
        TensorDict td = TensorDict::create();
        td.mutableRoot().addBytes("x", DType::UInt8, {std::int64_t(bytes_.size())},
                                  ownedBytes(bytes_));
        SaveOptions options;
        options.compression = kZipDeflate;
        options.compressionLevel = level;
        options.numThreads = threads;
        options.deflateAccessPoints = points;
        const QString path = scratch_.path() + "/" + name;
        save(td, path.toStdString(), options);
        return path;
    }

    // Bytes [offset, offset + n) of the leaf x of `archive`, read from a fresh load.
    QByteArray range(const TensorDict& td, std::uint64_t offset, std::uint64_t n) {
        const LeafBytes part = td.root().child("x")->bytesRange(offset, n);
        return QByteArray(reinterpret_cast<const char*>(part.data.get()), qsizetype(part.size));
    }
    QByteArray expected(std::uint64_t offset, std::uint64_t n) const {
        return QByteArray(reinterpret_cast<const char*>(bytes_.data()) + offset, qsizetype(n));
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY(scratch_.isValid()); }

    // Chunks of many lengths and contents, deflated as the writer deflates
    // them (primed where the codec takes a dictionary) and concatenated, are
    // one stream that zlib inflates to the input, ending at its last byte:
    // the join holds whatever bit a chunk's stream ended on, for stored,
    // fixed and dynamic blocks, and for an empty chunk.
    void chunksJoinIntoOneStream_data() {
        QTest::addColumn<int>("level");
        for (int level = -1; level <= 9; ++level)
            if (level != 0)
                QTest::addRow("level %d", level) << level;
    }
    void chunksJoinIntoOneStream() {
        QFETCH(int, level);
        std::vector<std::uint8_t> data;
        std::vector<std::size_t> cuts{0, 0};  // an empty chunk first
        std::uint64_t x = 88172645463325252ull;
        const auto next = [&x] {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            return x;
        };
        for (int piece = 0; piece < 160; ++piece) {
            const std::size_t n = piece % 40 == 39 ? kDeflateChunk : next() % 20000;
            const int kind = int(next() % 4);
            for (std::size_t i = 0; i < n; ++i)
                data.push_back(kind == 0   ? 0                                    // a run
                               : kind == 1 ? std::uint8_t(next())                 // noise: stored
                               : kind == 2 ? std::uint8_t("deflate "[i % 8])      // text
                                           : std::uint8_t(i / 64 + next() % 3));  // a ramp
            cuts.push_back(data.size());
        }
        const auto* bytes = reinterpret_cast<const std::byte*>(data.data());
        std::string stream;
        for (std::size_t c = 1; c < cuts.size(); ++c) {
            const std::size_t begin = cuts[c - 1], end = cuts[c];
            const std::size_t dictionary = std::min<std::size_t>(begin, 32768);
            stream += deflateChunk(bytes + begin, end - begin, bytes + begin - dictionary,
                                   dictionary, c + 1 == cuts.size(), level);
        }
        std::vector<std::uint8_t> back(data.size() + 1);
        z_stream z{};
        QCOMPARE(inflateInit2(&z, -MAX_WBITS), Z_OK);
        z.next_in = reinterpret_cast<Bytef*>(stream.data());
        z.avail_in = uInt(stream.size());
        z.next_out = back.data();
        z.avail_out = uInt(back.size());
        const int rc = inflate(&z, Z_FINISH);
        const std::uint64_t out = z.total_out;
        inflateEnd(&z);
        QCOMPARE(rc, Z_STREAM_END);
        QCOMPARE(z.avail_in, 0u);
        QCOMPARE(out, std::uint64_t(data.size()));
        QVERIFY(std::memcmp(back.data(), data.data(), data.size()) == 0);
    }

    void otherReadersReadThemUnchanged_data() {
        QTest::addColumn<int>("level");
        QTest::addColumn<int>("threads");
        for (int level : {1, 4, 5, 6, 7, 9})
            for (int threads : {1, 2})
                QTest::addRow("level %d, %d thread(s)", level, threads) << level << threads;
    }
    void otherReadersReadThemUnchanged() {
        QFETCH(int, level);
        QFETCH(int, threads);
        const QString path =
            write(QString("read-%1-%2.tdz").arg(level).arg(threads), level, threads, true);
        const QJsonObject py = readWithPython(path);
        QVERIFY2(py["testzip"].isNull(), "zipfile found a bad CRC");
        QCOMPARE(py["sha256"].toString().toLatin1(), sha256Of(bytes_));
        QVERIFY2(py["ids"].toObject()["x.memmap"].toArray().contains(0x7874),
                 "the entry has no access index");
        for (const QStringList& tool : {QStringList{"unzip", "-tq"}, QStringList{"7z", "t"}}) {
            QProcess p;
            p.start(tool[0], {tool[1], path});
            QVERIFY(p.waitForFinished(120000));
            QVERIFY2(p.exitCode() == 0, qPrintable(tool[0] + ": " + p.readAllStandardOutput()));
        }
        const testsupport::LibzipReading libzip = testsupport::readWithLibzip(path);
        QVERIFY2(libzip.error.isEmpty(), qPrintable(libzip.error));
        QCOMPARE(libzip.read, libzip.entries);
        QVERIFY(check(path.toStdString()).sound());
        const TensorDict back = load(path.toStdString());
        QCOMPARE(QByteArray::fromStdString(leafSha256(*back.root().child("x"))), sha256Of(bytes_));
    }

    void pointsCostLittle() {
        // Independent segments cannot refer back across their start: the
        // cost is a few bytes per 4 MiB.
        for (int level : {1, 6}) {
            const QString with = write(QString("cost-%1-with.tdz").arg(level), level, 2, true);
            const QString without =
                write(QString("cost-%1-without.tdz").arg(level), level, 2, false);
            QVERIFY(
                !readWithPython(without)["ids"].toObject()["x.memmap"].toArray().contains(0x7874));
            const double ratio = double(QFileInfo(with).size()) / QFileInfo(without).size();
            qInfo("level %d: with access points %lld B, without %lld B: %.5fx", level,
                  QFileInfo(with).size(), QFileInfo(without).size(), ratio);
            QVERIFY2(ratio <= 1.005, qPrintable(QString::number(ratio)));
        }
    }

    void anyPartReadsBackWithoutTheRest() {
        const QString path = write("parts.tdz", 6, 2, true);
        const std::uint64_t mib = 1u << 20;
        const std::vector<std::pair<std::uint64_t, std::uint64_t>> parts = {
            {0, 1},                     // the first byte
            {5 * mib + 3, 1000},        // inside one segment
            {4 * mib - 10, 20},         // across a segment's start
            {3 * mib, 10 * mib},        // over several segments
            {kLeafBytes - 4321, 4321},  // the short last segment
            {kLeafBytes - 1, 1},        // the last byte
        };
        for (const auto& [offset, n] : parts) {
            const TensorDict td = load(path.toStdString());
            QCOMPARE(range(td, offset, n), expected(offset, n));
            // The entry as a whole was never inflated.
            QVERIFY(!td.root().child("x")->isMaterialized());
        }
        // A second read of the same part comes from the segment kept.
        const TensorDict td = load(path.toStdString());
        QCOMPARE(range(td, 9 * mib, 4096), expected(9 * mib, 4096));
        QCOMPARE(range(td, 9 * mib + 1, 4096), expected(9 * mib + 1, 4096));
        // Out of the leaf: an error naming it, not a read.
        try {
            range(td, kLeafBytes - 1, 2);
            QFAIL("a range past the leaf was read");
        } catch (const Error& e) {
            QVERIFY2(QString(e.what()).contains("past the leaf"), e.what());
        }
        // The whole entry, inflated on every thread from the points.
        const LeafBytes whole = td.root().child("x")->bytes();
        QCOMPARE(QByteArray(reinterpret_cast<const char*>(whole.data.get()), qsizetype(whole.size)),
                 expected(0, kLeafBytes));
    }

    void damagedOrForgedIndexIsNotTrusted_data() {
        QTest::addColumn<QString>("how");
        QTest::newRow("a flipped byte") << "flip";
        QTest::newRow("a forged index whose checks pass") << "swap";
        // The first four segments read from the points, the rest from the stream.
        QTest::newRow("a forged index, wrong from its fifth segment") << "late";
    }
    void damagedOrForgedIndexIsNotTrusted() {
        QFETCH(QString, how);
        const QString path = write("damaged-" + how + ".tdz", 6, 2, true);
        QVERIFY(damageIndex(path, how));
        // Other readers do not care; we read the right bytes, from the start.
        QVERIFY(readWithPython(path)["testzip"].isNull());
        // --check names a block that does not fit its entry; a forged one
        // that fits is found only when a segment fails to inflate.
        const CheckReport report = check(path.toStdString());
        if (how == "flip") {
            QCOMPARE(report.problems.size(), std::size_t(1));
            QCOMPARE(QString::fromStdString(report.problems[0].kind), QString("access_index"));
            QVERIFY(QString::fromStdString(report.problems[0].file).endsWith("x.memmap"));
        } else {
            QVERIFY(report.sound());
        }
        // Hashed first, part by part from the points: the right digest all the
        // same, and where the points fail, the rest streamed: the entry is
        // never inflated whole (into memory, or a file for a large one).
        {
            const TensorDict hashed = load(path.toStdString());
            QCOMPARE(QByteArray::fromStdString(leafSha256(*hashed.root().child("x"))),
                     sha256Of(bytes_));
            QVERIFY(!hashed.root().child("x")->isMaterialized());
        }
        const std::uint64_t mib = 1u << 20;
        for (const auto& [offset, n] : std::vector<std::pair<std::uint64_t, std::uint64_t>>{
                 {5 * mib + 3, 1000}, {3 * mib, 10 * mib}, {0, kLeafBytes}}) {
            const TensorDict td = load(path.toStdString());
            QCOMPARE(range(td, offset, n), expected(offset, n));
            QVERIFY2(td.root().child("x")->integrityWarning().empty(),
                     td.root().child("x")->integrityWarning().c_str());
        }
        const TensorDict td = load(path.toStdString());
        const LeafBytes whole = td.root().child("x")->bytes();
        QCOMPARE(QByteArray(reinterpret_cast<const char*>(whole.data.get()), qsizetype(whole.size)),
                 expected(0, kLeafBytes));
        QCOMPARE(QByteArray::fromStdString(leafSha256(*td.root().child("x"))), sha256Of(bytes_));
    }

    void largeLeavesHashWhileTheyAreRead_data() {
        QTest::addColumn<bool>("points");
        QTest::newRow("inflated front to back") << false;
        QTest::newRow("segments inflated on every core") << true;
    }
    void largeLeavesHashWhileTheyAreRead() {
        // Over 16 MiB other threads read ahead (copy, or inflate a stream or
        // the segments between access points) while this one hashes: the
        // same digest, and a corrupt stream is an error from a reading
        // thread, not a hang.
        QFETCH(bool, points);
        const QString stored = scratch_.path() + "/hash-stored.tdz";
        {
            TensorDict td = TensorDict::create();
            td.mutableRoot().addBytes("x", DType::UInt8, {std::int64_t(bytes_.size())},
                                      ownedBytes(bytes_));
            save(td, stored.toStdString());
        }
        QCOMPARE(
            QByteArray::fromStdString(leafSha256(*load(stored.toStdString()).root().child("x"))),
            sha256Of(bytes_));
        const QString whole = write(QString("hash-%1.tdz").arg(points), 6, 2, points);
        QCOMPARE(
            QByteArray::fromStdString(leafSha256(*load(whole.toStdString()).root().child("x"))),
            sha256Of(bytes_));
        const QString broken = write(QString("hash-broken-%1.tdz").arg(points), 6, 2, points);
        {
            QFile f(broken);
            QVERIFY(f.open(QIODevice::ReadWrite));
            const qint64 middle = f.size() / 2;
            f.seek(middle);
            const QByteArray run = f.read(64);
            QByteArray flipped = run;
            for (char& c : flipped)
                c = static_cast<char>(~c);
            f.seek(middle);
            f.write(flipped);
        }
        const TensorDict td = load(broken.toStdString());
        try {
            const std::string digest = leafSha256(*td.root().child("x"));
            QVERIFY2(!td.root().child("x")->integrityWarning().empty(),
                     "a corrupt stream hashed without a word");
            QVERIFY(QByteArray::fromStdString(digest) != sha256Of(bytes_));
        } catch (const Error& e) {
            QVERIFY2(QString(e.what()).contains("x.memmap"), e.what());
        }
    }

    void bytesNotRequiredFaultInDebugBuilds_data() {
        QTest::addColumn<int>("unfilled");
        QTest::newRow("faults") << int(LeafPages::Unfilled::Faults);
        QTest::newRow("reads as zero") << int(LeafPages::Unfilled::ReadsAsZero);
    }

    void bytesNotRequiredFaultInDebugBuilds() {
        // A reader (a preview mode) that reads bytes it did not require:
        // where unfilled pages fault, as in every debug build, it dies at
        // that read instead of showing zeros; in release builds the bytes
        // read as zero. Each read is made in a child process.
#ifdef NDEBUG
        QCOMPARE(LeafPages::kUnfilledByDefault, LeafPages::Unfilled::ReadsAsZero);
#else
        QCOMPARE(LeafPages::kUnfilledByDefault, LeafPages::Unfilled::Faults);
#endif
        QFETCH(int, unfilled);
        const bool faults = LeafPages::Unfilled(unfilled) == LeafPages::Unfilled::Faults;
        const QString path = write("unrequired.tdz", 1, 2, true);
        const auto td = std::make_shared<TensorDict>(load(path.toStdString()));
        const Node& x = *td->root().child("x");
        const std::uint64_t page = LeafPages::kCompressedPageSize;
        auto pages = LeafPages::create(td, x, 2 * page, LeafPages::Unfilled(unfilled));
        const LeafBytes bytes = pages->bytes();
        const auto held = requireBytes(bytes, page + 5, 10);
        const auto* data = reinterpret_cast<const volatile std::uint8_t*>(bytes.data.get());
        // What a child's read of byte `at` ends in: its value, or 256 for a fault.
        const auto readInChild = [&](std::uint64_t at) {
            const pid_t pid = ::fork();
            if (pid == 0) {
                // exit_group directly: a sanitizer's _exit would run its
                // end-of-process work in the child.
                struct sigaction onFault {};
                onFault.sa_handler = [](int) { ::syscall(SYS_exit_group, 100); };
                ::sigaction(SIGSEGV, &onFault, nullptr);
                ::sigaction(SIGBUS, &onFault, nullptr);
                ::syscall(SYS_exit_group, data[at] == 0 ? 0 : 1);
            }
            int status = 0;
            ::waitpid(pid, &status, 0);
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        };
        // The held range reads right in the child as here.
        QCOMPARE(readInChild(page + 5), bytes_[page + 5] == 0 ? 0 : 1);
        // Bytes of a page nobody required, and of one given back.
        QCOMPARE(readInChild(3 * page), faults ? 100 : 0);
        auto first = requireBytes(bytes, 0, 1);
        QCOMPARE(QByteArray(reinterpret_cast<const char*>(bytes.data.get()), 1), expected(0, 1));
        first.reset();
        requireBytes(bytes, 2 * page, 1);  // over the cap: page 0, unheld, goes back
        requireBytes(bytes, 3 * page, 1);
        QVERIFY(!pages->isFilled(0, 1));
        QCOMPARE(readInChild(0), faults ? 100 : 0);
        // Required again, it reads right.
        const auto again = requireBytes(bytes, 0, 16);
        QCOMPARE(QByteArray(reinterpret_cast<const char*>(bytes.data.get()), 16), expected(0, 16));
    }

    void pagesFillOnlyWhatIsRequired() {
        // A viewer's reading of a large compressed leaf: one slice inflates
        // its page, not the entry; pages beyond the cap that no reader
        // holds are given back; held ones never are.
        const QString path = write("pages.tdz", 1, 2, true);
        const auto td = std::make_shared<TensorDict>(load(path.toStdString()));
        const Node& x = *td->root().child("x");
        QVERIFY(x.hasRandomAccess());
        const std::uint64_t page = LeafPages::kCompressedPageSize;
        auto pages = LeafPages::create(td, x, 2 * page);
        const LeafBytes bytes = pages->bytes();
        QCOMPARE(bytes.size, std::size_t(kLeafBytes));
        QVERIFY(bytes.pages);
        const auto at = [&](std::uint64_t offset, std::uint64_t n) {
            return QByteArray(reinterpret_cast<const char*>(bytes.data.get()) + offset,
                              qsizetype(n));
        };
        // The last bytes: one (short) page filled, nothing else inflated.
        auto last = requireBytes(bytes, kLeafBytes - 100, 100);
        QCOMPARE(at(kLeafBytes - 100, 100), expected(kLeafBytes - 100, 100));
        QCOMPARE(pages->residentBytes(), kLeafBytes % page);
        QVERIFY(!pages->isFilled(0, 1));
        QVERIFY(!x.isMaterialized());
        // Across a page boundary: both pages.
        auto across = requireBytes(bytes, page - 10, 20);
        QCOMPARE(at(page - 10, 20), expected(page - 10, 20));
        QVERIFY(pages->isFilled(0, 2 * page));
        // Over the cap while held: nothing held is given back.
        auto third = requireBytes(bytes, 2 * page + 5, 10);
        QVERIFY(pages->residentBytes() > 2 * page);
        QVERIFY(pages->isFilled(0, 3 * page));
        QCOMPARE(at(page - 10, 20), expected(page - 10, 20));
        // Let go: the least recently required go back to the system first.
        across.reset();
        QVERIFY(pages->residentBytes() <= 2 * page);
        QVERIFY(!pages->isFilled(0, 1));  // the oldest let go
        QVERIFY(pages->isFilled(kLeafBytes - 1, 1));
        QVERIFY(pages->isFilled(2 * page, 1));
        QVERIFY(!pages->holdIfFilled(0, 1));  // no read on that path
        QVERIFY(pages->holdIfFilled(2 * page, 1));
        // Required again: read again, right.
        across = requireBytes(bytes, 0, 2 * page);
        QCOMPARE(at(0, 2 * page), expected(0, 2 * page));
        // Out of the leaf: an error naming it.
        try {
            requireBytes(bytes, kLeafBytes - 1, 2);
            QFAIL("a range past the leaf was required");
        } catch (const Error& e) {
            QVERIFY2(QString(e.what()).contains("past the leaf") && QString(e.what()).contains("x"),
                     e.what());
        }
        // Cancelled before it reads: nothing filled.
        last.reset(), across.reset(), third.reset();
        CancelToken cancel;
        cancel.cancel();
        auto fresh = LeafPages::create(td, x);
        QVERIFY_THROWS_EXCEPTION(Cancelled, fresh->require(0, 10, &cancel));
        QCOMPARE(fresh->residentBytes(), std::uint64_t(0));
    }

    void pagesServeConcurrentReaders() {
        // The image, the table and the statistics of one leaf read at once:
        // each page inflated once, every reader sees the right bytes.
        const QString path = write("pages-threads.tdz", 6, 2, true);
        const auto td = std::make_shared<TensorDict>(load(path.toStdString()));
        auto pages = LeafPages::create(td, *td->root().child("x"));
        const LeafBytes bytes = pages->bytes();
        std::atomic<int> wrong{0};
        std::vector<std::thread> readers;
        for (int t = 0; t < 4; ++t)
            readers.emplace_back([&, t] {
                for (std::uint64_t offset = std::uint64_t(t) * 977; offset < kLeafBytes;
                     offset += 3u << 20) {
                    const std::uint64_t n = std::min<std::uint64_t>(5u << 20, kLeafBytes - offset);
                    const auto hold = requireBytes(bytes, offset, n);
                    if (std::memcmp(bytes.data.get() + offset, bytes_.data() + offset, n) != 0)
                        ++wrong;
                }
            });
        for (auto& r : readers)
            r.join();
        QCOMPARE(wrong.load(), 0);
        QCOMPARE(pages->residentBytes(), kLeafBytes);  // under the default cap: all kept
    }

    void pagesOfACorruptStreamFailWithTheReason() {
        // A damaged stream (and a forged index) never reach a reader as
        // wrong bytes: the page fails with a message naming the entry, and
        // stays unfilled.
        const QString path = write("pages-broken.tdz", 6, 2, true);
        {
            QFile f(path);
            QVERIFY(f.open(QIODevice::ReadWrite));
            f.seek(f.size() / 3);
            QByteArray run = f.read(256);
            for (char& c : run)
                c = static_cast<char>(~c);
            f.seek(f.size() / 3);
            f.write(run);
        }
        const auto td = std::make_shared<TensorDict>(load(path.toStdString()));
        auto pages = LeafPages::create(td, *td->root().child("x"));
        const LeafBytes bytes = pages->bytes();
        int failed = 0;
        for (std::uint64_t offset = 0; offset < kLeafBytes;
             offset += LeafPages::kCompressedPageSize) {
            const std::uint64_t n =
                std::min<std::uint64_t>(LeafPages::kCompressedPageSize, kLeafBytes - offset);
            try {
                const auto hold = requireBytes(bytes, offset, n);
                QVERIFY2(std::memcmp(bytes.data.get() + offset, bytes_.data() + offset, n) == 0,
                         "wrong bytes without an error");
            } catch (const Error& e) {
                ++failed;
                QVERIFY2(QString(e.what()).contains("x.memmap"), e.what());
                QVERIFY(!pages->isFilled(offset, n));
                QVERIFY(pages->failure());
                QCOMPARE(QString::fromStdString(pages->failure()->text()), QString(e.what()));
                QCOMPARE(pages->failure()->kind, ErrorKind::Corrupt);
            }
        }
        // The damaged segment fails its CRC, the index is dropped, and the
        // plain inflate from the start then stops at the damage: an error.
        QVERIFY2(failed > 0, "a damaged stream read without an error");
    }

    void firstPassLeavesPointsInPythonArchives_data() {
        QTest::addColumn<QString>("pass");
        QTest::newRow("sha256 (streamed)") << "sha256";
        QTest::newRow("whole leaf into a temporary file") << "bytes";
    }
    void firstPassLeavesPointsInPythonArchives() {
        // An archive Python's zipfile deflated has no access points: the
        // first front-to-back inflate records some (ISA-L's state every
        // 4 MiB), and later parts read from the nearest one, checked
        // against the CRC-32 of their segment, without inflating the rest.
        // Half of the leaf is noise, which zlib writes as stored blocks.
        QFETCH(QString, pass);
        std::vector<std::uint8_t> mixed = bytes_;
        std::uint64_t x = 88172645463325252ull;
        for (std::size_t i = 0; i < mixed.size() / 2; ++i) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            mixed[i] = static_cast<std::uint8_t>(x);
        }
        const QString dir = scratch_.path() + "/python-points-dir-" + pass;
        {
            TensorDict source = TensorDict::create();
            source.mutableRoot().addBytes("x", DType::UInt8, {std::int64_t(mixed.size())},
                                          ownedBytes(mixed));
            save(source, dir.toStdString());
        }
        const QString packed = scratch_.path() + "/python-points-" + pass + ".tdz";
        QVERIFY(testsupport::packWithPython(dir, packed, "deflate"));
        LoadOptions options;
        options.store.inflateCacheBytes = 8u << 20;  // the leaf never stays whole in memory
        const TensorDict td = load(packed.toStdString(), options);
        const Node& leaf = *td.root().child("x");
        QVERIFY(!leaf.hasRandomAccess());
        if (pass == "sha256") {
            QCOMPARE(QByteArray::fromStdString(leafSha256(leaf)), sha256Of(mixed));
        } else {
            const LeafBytes whole = leaf.bytes();
            QVERIFY(std::memcmp(whole.data.get(), mixed.data(), mixed.size()) == 0);
        }
        QVERIFY(leaf.hasRandomAccess());
        QVERIFY(!leaf.isMaterialized());
        // From here a whole inflate fails (no room for its temporary file):
        // every part below comes from the points.
        const QByteArray tmpdir = qgetenv("TMPDIR");
        qputenv("TMPDIR", QFile::encodeName(scratch_.path() + "/no-such-dir"));
        const auto restore =
            qScopeGuard([&] { tmpdir.isNull() ? qunsetenv("TMPDIR") : qputenv("TMPDIR", tmpdir); });
        const std::uint64_t mib = 1u << 20;
        for (const auto& [offset, n] : std::vector<std::pair<std::uint64_t, std::uint64_t>>{
                 {5 * mib + 3, 1000},        // in the noise
                 {4 * mib - 10, 20},         // across a point
                 {15 * mib, 5 * mib},        // over two points, compressible
                 {kLeafBytes - 4321, 4321},  // the short last segment
                 {0, kLeafBytes}}) {         // all of it, from every point
            const LeafBytes part = leaf.bytesRange(offset, n);
            QVERIFY2(std::memcmp(part.data.get(), mixed.data() + offset, n) == 0,
                     qPrintable(QString("bytes %1 + %2").arg(offset).arg(n)));
        }
        QVERIFY(leaf.integrityWarning().empty());
        // Points live in this process's store, under the cache's cap: a new
        // load starts without them.
        QVERIFY(!load(packed.toStdString(), options).root().child("x")->hasRandomAccess());
    }

    void archivesWithoutPointsReadAsBefore() {
        // Ours written without points, and Python's zipfile's own deflate.
        const QString path = write("plain.tdz", 6, 2, false);
        const TensorDict td = load(path.toStdString());
        QVERIFY(!td.root().child("x")->hasRandomAccess());
        QCOMPARE(range(td, 7u << 20, 100), expected(7u << 20, 100));

        const QString dir = scratch_.path() + "/plain-dir";
        {
            TensorDict source = TensorDict::create();
            source.mutableRoot().addBytes("x", DType::UInt8, {std::int64_t(bytes_.size())},
                                          ownedBytes(bytes_));
            save(source, dir.toStdString());
        }
        const QString packed = scratch_.path() + "/python-deflate.tdz";
        QVERIFY(testsupport::packWithPython(dir, packed, "deflate"));
        const TensorDict py = load(packed.toStdString());
        QVERIFY(!py.root().child("x")->hasRandomAccess());
        QCOMPARE(range(py, 7u << 20, 100), expected(7u << 20, 100));
        QCOMPARE(range(py, 0, kLeafBytes), expected(0, kLeafBytes));
    }
};

QTEST_GUILESS_MAIN(TestAccessPoints)
#include "tst_access_points.moc"
