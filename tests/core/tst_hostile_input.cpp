// Hostile input, and input that changes while it is read: each case once
// crashed the program, lost data silently or leaked a file. Each now gives
// an error (or a marked node) that names the file and the reason.

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include "tensordict/guarded_read.h"
#include "tensordict/report.h"
#include "tensordict/save.h"
#include "tensordict/tensordict.h"
#include "testsupport.h"

using namespace tensordict;
using testsupport::errorOf;
using testsupport::writeFile;

namespace {

const char* const kTensorDictType = "<class 'tensordict._td.TensorDict'>";

}  // namespace

class HostileInputTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QVERIFY(scratch_.isValid()); }

    void deeplyNestedPickleIsNotDecoded() {
        // A million TUPLE1 opcodes in 1 MB: a value a million levels deep,
        // whose destruction alone used to overflow the stack.
        const QString dir = scratch_.path() + "/deep-pickle";
        testsupport::copyTree(testsupport::fixturePath("nontensor_pickle"), dir);
        QByteArray pickle("\x80\x04]", 3);
        pickle += QByteArray(1000000, '\x85');
        pickle += '.';
        writeFile(dir + "/blob/other.pickle", pickle);
        const TensorDict td = load(dir.toStdString());
        const Node* blob = td.root().child("blob");
        QVERIFY(blob);
        QCOMPARE(blob->kind(), NodeKind::NonTensorData);
        QVERIFY(blob->nonTensor().pickleOpaque);  // shown as an opaque pickle, never unpickled
    }

    void tensorclassChainCountsTowardsTheDepthLimit() {
        // 270 tensorclasses, each the only field of the one above it (deeper
        // paths would pass PATH_MAX).
        const QString root = scratch_.path() + "/tc-chain";
        writeFile(root + "/meta.json",
                  QByteArray(R"({"c": {"type": "TC"}, "shape": [], "device": "cpu", "_type": ")") +
                      kTensorDictType + "\"}");
        QString dir = root + "/c";
        for (int i = 0; i < 270; ++i) {
            writeFile(dir + "/meta.json", R"({"_type": "<class '__main__.TC'>"})");
            writeFile(
                dir + "/_tensordict/meta.json",
                QByteArray(R"({"c": {"type": "TC"}, "shape": [], "device": "cpu", "_type": ")") +
                    kTensorDictType + "\"}");
            dir += "/_tensordict/c";
        }
        writeFile(dir + "/meta.json", QByteArray(R"({"shape": [], "device": "cpu", "_type": ")") +
                                          kTensorDictType + "\"}");
        const QString message = errorOf([&] { load(root.toStdString()); });
        QVERIFY2(message.contains("nested deeper than 256 levels"), qPrintable(message));
        QVERIFY2(message.contains("tc-chain/c/_tensordict/c"), qPrintable(message));
    }

    void lazyStackMemberWithoutMetadataIsAnError() {
        const QString dir = scratch_.path() + "/stack-hole";
        testsupport::copyTree(testsupport::fixturePath("lazy_stack"), dir);
        testsupport::copyTree(dir + "/ls/1", dir + "/ls/2");  // three members: 0, 1, 2
        QVERIFY(QFile::remove(dir + "/ls/1/meta.json"));

        const QString message = errorOf([&] { load(dir.toStdString()); });
        QVERIFY2(message.contains("stack-hole/ls/1/meta.json") && message.contains("missing"),
                 qPrintable(message));

        LoadOptions tolerant;
        tolerant.throwOnError = false;
        const TensorDict td = load(dir.toStdString(), tolerant);
        const Node* stack = td.root().child("ls");
        QVERIFY(stack);
        QCOMPARE(stack->children().size(), std::size_t(3));  // member 2 is not dropped
        QCOMPARE(stack->children()[1]->kind(), NodeKind::Error);
        QCOMPARE(stack->children()[2]->kind(), NodeKind::TensorDict);
        QCOMPARE(td.errors().size(), std::size_t(1));
    }

    void symlinkOutOfTheDatasetIsMarkedAndNotExported() {
        const QString dir = scratch_.path() + "/linked/data";
        testsupport::copyTree(testsupport::fixturePath("simple"), dir);
        const QString secret = scratch_.path() + "/linked/secret.bin";
        writeFile(secret, QByteArray("my private bytes", 12));  // as long as a: 3 float32
        QVERIFY(QFile::remove(dir + "/a.memmap"));
        QVERIFY(QFile::link("../secret.bin", dir + "/a.memmap"));
        // A link that stays inside the dataset is fine.
        QVERIFY(QFile::rename(dir + "/b/c.memmap", dir + "/c-data"));
        QVERIFY(QFile::link("../c-data", dir + "/b/c.memmap"));

        const TensorDict td = load(dir.toStdString());
        const Node* a = td.root().child("a");
        QCOMPARE(QString::fromStdString(a->leaf().storage.outsideTarget()),
                 QFileInfo(secret).canonicalFilePath());
        QVERIFY(td.root().find({"b", "c"})->leaf().storage.outsideTarget().empty());

        SaveOptions options;
        options.copyExisting = true;
        for (const QString& target : {scratch_.path() + "/out.tdz", scratch_.path() + "/out-dir"}) {
            const QString message = errorOf([&] { save(td, target.toStdString(), options); });
            QVERIFY2(message.startsWith("a: ") &&
                         message.contains(QFileInfo(secret).canonicalFilePath()) &&
                         message.contains("outside the dataset"),
                     qPrintable(message));
            QVERIFY(!QFileInfo::exists(target));
        }
        options.allowOutsideLinks = true;
        const TensorDict saved =
            save(td, (scratch_.path() + "/allowed.tdz").toStdString(), options);
        QCOMPARE(
            QByteArray(reinterpret_cast<const char*>(saved.root().child("a")->bytes().data.get()),
                       12),
            QByteArray("my private b"));
    }

    void fileTruncatedWhileReadIsAnErrorNotASignal() {
        // A 16 MiB leaf whose file another program truncates while we read
        // it: between two chunks of a sha256, and under a mapping kept by a
        // reader, and under a save that copies it.
        const QString dir = scratch_.path() + "/truncated";
        writeFile(
            dir + "/meta.json",
            QByteArray(
                R"({"x": {"device": "cpu", "shape": [4194304], "dtype": "torch.float32"}, "shape": [], "device": "cpu", "_type": ")") +
                kTensorDictType + "\"}");
        writeFile(dir + "/x.memmap", QByteArray(16 << 20, '\x01'));
        const TensorDict td = load(dir.toStdString());
        const Node& x = *td.root().child("x");

        int chunks = 0;
        const QString message = errorOf([&] {
            forEachChunk(x, 1 << 20, [&](const std::byte*, std::size_t) {
                if (++chunks == 1)
                    QVERIFY(QFile::resize(dir + "/x.memmap", 0));  // after the first chunk
            });
        });
        // A helper thread reads a few chunks ahead of the hash: those read
        // before the truncation still arrive; the rest is the error.
        QVERIFY2(chunks >= 1 && chunks < 16, qPrintable(QString::number(chunks)));
        QVERIFY2(
            message.contains("truncated/x.memmap") && message.contains("changed while it was read"),
            qPrintable(message));

        // The mapping itself stays; every read through the guarded path reports.
        std::byte one[4];
        QVERIFY(!tryGuardedCopy(one, x.bytes().data.get() + (8 << 20), 4));
        QVERIFY(errorOf([&] { leafSha256(x); }).contains("changed while it was read"));
        SaveOptions options;
        options.copyExisting = true;
        for (const QString& target : {scratch_.path() + "/t.tdz", scratch_.path() + "/t-dir"}) {
            const QString saveError = errorOf([&] { save(td, target.toStdString(), options); });
            QVERIFY2(saveError.contains("changed while it was read"), qPrintable(saveError));
        }
    }

    void crcMismatchIsReportedNotRefused() {
        // One byte of a stored payload changed behind the archive's back, as
        // tensordict's in-place "r+" writes do: the data is shown, and a
        // warning names the entry.
        const QString path = scratch_.path() + "/stale-crc.tdz";
        QVERIFY(QFile::copy(testsupport::fixturePath("archive_simple.tdz"), path));
        QVERIFY(QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner));
        {
            QFile f(path);
            QVERIFY(f.open(QIODevice::ReadWrite));
            QVERIFY(f.seek(320));  // a.memmap's payload (core/FORMAT.md 8.2)
            QVERIFY(f.write(QByteArray(1, '\x7f')) == 1);
        }
        const TensorDict td = load(path.toStdString());
        const Node& a = *td.root().child("a");
        QVERIFY(a.integrityWarning().empty());  // nothing read yet
        leafSha256(a);
        QVERIFY2(QString::fromStdString(a.integrityWarning()).contains("CRC-32 mismatch"),
                 a.integrityWarning().c_str());
        QVERIFY(td.root().find({"b", "c"})->integrityWarning().empty());
        leafSha256(*td.root().find({"b", "c"}));
        QVERIFY(td.root().find({"b", "c"})->integrityWarning().empty());

        // A compressed entry whose directory CRC is wrong: inflated and shown, with the warning.
        const QString deflated = scratch_.path() + "/bad-crc-deflate.tdz";
        QVERIFY(
            testsupport::packWithPython(testsupport::fixturePath("simple"), deflated, "deflate"));
        QString error;
        QVERIFY2(testsupport::runPython({"-c",
                                         "import sys, zipfile, struct\n"
                                         "p = sys.argv[1]; data = bytearray(open(p, 'rb').read())\n"
                                         "info = zipfile.ZipFile(p).getinfo('a.memmap')\n"
                                         "at = data.rfind(b'PK\\x01\\x02', 0, "
                                         "data.find(b'a.memmap', data.find(b'PK\\x01\\x02')) + 1)\n"
                                         "at = [i for i in range(len(data)) if data[i:i+4] == "
                                         "b'PK\\x01\\x02' and data[i+46:i+54] == b'a.memmap'][0]\n"
                                         "data[at + 16:at + 20] = struct.pack('<I', info.CRC ^ 1)\n"
                                         "open(p, 'wb').write(data)\n",
                                         deflated},
                                        nullptr, &error),
                 qPrintable(error));
        const TensorDict compressed = load(deflated.toStdString());
        const Node& ca = *compressed.root().child("a");
        QCOMPARE(QByteArray::fromStdString(leafSha256(ca)),
                 QByteArray::fromStdString(leafSha256(
                     *load(testsupport::fixturePath("simple").toStdString()).root().child("a"))));
        QVERIFY2(QString::fromStdString(ca.integrityWarning()).contains("CRC-32 mismatch"),
                 ca.integrityWarning().c_str());

        // A stored .npz member: its CRC covers the .npy header before the
        // leaf's bytes too. One byte of the array changed: the warning.
        QVERIFY2(testsupport::runPython({"-c",
                                         "import sys, struct, numpy as np\n"
                                         "d = sys.argv[1]\n"
                                         "np.savez(d + '/good.npz', a=np.arange(100, dtype='f4'))\n"
                                         "b = bytearray(open(d + '/good.npz', 'rb').read())\n"
                                         "b[b.find(struct.pack('<f', 1.0)) + 2] ^= 1\n"
                                         "open(d + '/bad.npz', 'wb').write(b)\n",
                                         scratch_.path()},
                                        nullptr, &error),
                 qPrintable(error));
        for (const auto& [name, stale] :
             {std::pair<QString, bool>{"good.npz", false}, {"bad.npz", true}}) {
            const TensorDict npz = load((scratch_.path() + "/" + name).toStdString());
            const Node& member = *npz.root().child("a");
            leafSha256(member);
            QVERIFY2(
                QString::fromStdString(member.integrityWarning()).contains("CRC-32 mismatch") ==
                    stale,
                qPrintable(name + ": " + QString::fromStdString(member.integrityWarning())));
        }
    }

    void zipBombStaysWithinMemory() {
        // Four leaves of 256 MiB of zeros, deflated to a few hundred KiB: their
        // sha256 and first values stream through a few MiB of memory.
        const QString path = scratch_.path() + "/bomb.tdz";
        QString error;
        QVERIFY2(testsupport::runPython({TDSTUDIO_TEST_SUPPORT_DIR "/make_zip_bomb.py", path},
                                        nullptr, &error),
                 qPrintable(error));
        QVERIFY(QFileInfo(path).size() < (8 << 20));
        const TensorDict td = load(path.toStdString());
        QCOMPARE(td.root().child("z0")->leaf().storage.kind, StorageKind::CompressedEntry);

        const qint64 before = peakResidentKiB(true);
        DescribeOptions options;
        options.sha256 = true;
        options.firstValues = 16;
        const Value report = describe(td, options);
        const qint64 growth = peakResidentKiB(false) - before;
        QVERIFY2(growth < 100 * 1024, qPrintable(QString("peak grew by %1 KiB").arg(growth)));
        const QString expected =
            QCryptographicHash::hash(QByteArray(256 << 20, '\0'), QCryptographicHash::Sha256)
                .toHex();
        for (const Value& leaf : report.find("leaves")->asList())
            QCOMPARE(QString::fromStdString(leaf.find("sha256")->asString()), expected);
    }

    void largeEntriesInflateIntoATemporaryFile() {
        // Past the inflate cache's cap an entry is inflated into an unlinked
        // temporary file and mapped; smaller ones are cached in memory.
        QByteArray big(4 << 20, '\0'), small(1024, '\0');
        for (int i = 0; i < big.size(); ++i)
            big[i] = static_cast<char>(i * 7 % 251);
        for (int i = 0; i < small.size(); ++i)
            small[i] = static_cast<char>(i % 13);
        TensorDict td = TensorDict::create();
        td.mutableRoot().addBytes("big", DType::UInt8, {big.size()}, ownedBytes(big));
        td.mutableRoot().addBytes("small", DType::UInt8, {small.size()}, ownedBytes(small));
        const QString path = scratch_.path() + "/two-sizes.tdz";
        SaveOptions options;
        options.compression = kZipDeflate;
        save(td, path.toStdString(), options);

        LoadOptions capped;
        capped.store.inflateCacheBytes = 1 << 20;
        const TensorDict loaded = load(path.toStdString(), capped);
        const Node& b = *loaded.root().child("big");
        const LeafBytes bytes = b.bytes();
        QCOMPARE(QByteArray(reinterpret_cast<const char*>(bytes.data.get()), int(bytes.size)), big);
        QVERIFY(!b.isMaterialized());  // not in the cache: its own file mapping
        QVERIFY(testsupport::mappedFrom(bytes.data.get()).file.contains("(deleted)") ||
                testsupport::mappedFrom(bytes.data.get()).file.contains("tdstudio-inflate"));
        QVERIFY(b.integrityWarning().empty());
        const Node& s = *loaded.root().child("small");
        const LeafBytes smallBytes = s.bytes();
        QCOMPARE(
            QByteArray(reinterpret_cast<const char*>(smallBytes.data.get()), int(smallBytes.size)),
            small);
        QVERIFY(s.isMaterialized());  // cached
    }

private:
    // VmHWM of this process in KiB; `reset` first resets the peak to now.
    static qint64 peakResidentKiB(bool reset) {
        if (reset) {
            QFile clear("/proc/self/clear_refs");
            if (clear.open(QIODevice::WriteOnly))
                clear.write("5");
        }
        QFile status("/proc/self/status");
        if (!status.open(QIODevice::ReadOnly))
            return -1;
        for (const QByteArray& line : status.readAll().split('\n'))
            if (line.startsWith("VmHWM:"))
                return line.mid(6).trimmed().split(' ').front().toLongLong();
        return -1;
    }

    QTemporaryDir scratch_;
};

QTEST_GUILESS_MAIN(HostileInputTest)
#include "tst_hostile_input.moc"
