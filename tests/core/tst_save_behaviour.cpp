// save() options as users of the Python library expect them: no prefix
// (memfd, shared with forked children), copy_existing, return_early with
// progress and cancel, share_non_tensor, and refusals that name the key.

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tensordict/torch.h"

#include <QDirIterator>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QtTest>
#include <future>
#include <mutex>

#include "libzip_reader.h"
#include "tensordict/report.h"
#include "tensordict/save.h"
#include "tensordict/store.h"
#include "testsupport.h"
#include "tree/node_builder.h"

using namespace tensordict;

namespace {

// A copy of `node` under another key.
std::unique_ptr<Node> renamed(const Node& node, const std::string& key) {
    auto copy = node.clone();
    NodeBuilder(*copy).setKey(key);
    return copy;
}

}  // namespace

namespace {

// A tensordict of `leaves` float32 leaves of `mib` MiB each, all equal to `value`.
TensorDict makeData(int leaves, int mib, float value) {
    TensorDict td = TensorDict::create();
    for (int i = 0; i < leaves; ++i)
        tensordict::torch::addTensor(td.mutableRoot(), "leaf" + std::to_string(i),
                                     at::full({mib * 262144}, value));
    return td;
}

QStringList temporarySiblings(const QString& dir) {
    return QDir(dir).entryList({".*.tdstudio-*"}, QDir::AllEntries | QDir::Hidden);
}

float firstFloat(const TensorDict& td, const char* key) {
    float v;
    std::memcpy(&v, td.root().child(key)->bytes().data.get(), sizeof v);
    return v;
}

}  // namespace

class SaveBehaviourTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void cleanup() { testsupport::verifyArchivesWithLibzip(scratch_.path()); }

    void initTestCase() { QVERIFY(scratch_.isValid()); }

    void noPrefixGoesToSharedMemorySeenByForkedChildren() {
        const TensorDict td = load(testsupport::fixturePath("simple").toStdString());
        const TensorDict m = save(td, "");
        QVERIFY(m.isLocked());
        const Node* a = m.root().child("a");
        QCOMPARE(a->leaf().storage.kind, StorageKind::Memory);
        const LeafBytes bytes = a->bytes();
        QVERIFY2(testsupport::mappedFrom(bytes.data.get()).file.startsWith("/memfd:tensordict:a"),
                 qPrintable(testsupport::mappedFrom(bytes.data.get()).file));
        QCOMPARE(leafSha256(*m.root().find({"b", "c"})),
                 std::string("f46913286d895f62d646314f400fc3d7a543cf34eb4ae56df87f43dc4582a36b"));
        const pid_t pid = fork();
        if (pid == 0) {
            const float v = 42.0f;
            std::memcpy(bytes.data.get(), &v, sizeof v);
            _exit(0);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        QCOMPARE(firstFloat(m, "a"), 42.0f);  // the child's write is the parent's
        QCOMPARE(tensordict::torch::tensor(*a)[0].item<float>(), 42.0f);
        QVERIFY_THROWS_EXCEPTION(Error, const_cast<TensorDict&>(m).mutableRoot());
    }

    void shareNonTensorAcrossFork() {
        const TensorDict td = load(testsupport::fixturePath("nontensor_string").toStdString());
        SaveOptions options;
        options.shareNonTensor = true;
        options.copyExisting = true;
        const TensorDict m = save(td, (scratch_.path() + "/shared").toStdString(), options);
        const Node* s = m.root().child("s");
        QCOMPARE(s->value(), Value("hello world"));
        const pid_t pid = fork();
        if (pid == 0) {
            s->setSharedValue(Value(Value::List{Value("from"), Value("child")}));
            _exit(0);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        QCOMPARE(s->value(), Value(Value::List{Value("from"), Value("child")}));
        // Without sharing, the saved tree is locked: values cannot change behind the files.
        const TensorDict plain = save(td, "");
        QVERIFY_THROWS_EXCEPTION(Error, plain.root().child("s")->setSharedValue(Value(1)));
        QCOMPARE(plain.root().child("s")->value(), Value("hello world"));
    }

    void everyReaderSeesTheSharedValue() {
        // After a shared value changes, the report (what --info and the
        // fixtures' expectations print) shows the new value, as value() does.
        const TensorDict td = load(testsupport::fixturePath("nontensor_string").toStdString());
        SaveOptions options;
        options.shareNonTensor = true;
        options.copyExisting = true;
        const TensorDict m = save(td, (scratch_.path() + "/shared-report").toStdString(), options);
        m.root().child("s")->setSharedValue(Value("changed"));
        const Value report = describe(m);
        const Value* entries = report.find("non_tensor");
        QVERIFY(entries && entries->isList());
        const Value* data = nullptr;
        for (const Value& entry : entries->asList())
            if (*entry.find("key") == Value(Value::List{Value("s")}))
                data = entry.find("data");
        QVERIFY(data);
        QCOMPARE(*data, Value("changed"));
        // A copy takes the value as it is now.
        QCOMPARE(m.root().child("s")->clone()->value(), Value("changed"));
    }

    void copyExistingBothWays() {
        const QString src = scratch_.path() + "/copy-src";
        testsupport::copyTree(testsupport::fixturePath("simple"), src);
        // Aged before opening: a file whose time changes after opening is
        // one that changed, and reading it again is refused.
        QVERIFY(testsupport::ageFiles(src + "/b/c.memmap"));
        const TensorDict td = load(src.toStdString());
        const QString dst = scratch_.path() + "/copy-dst";
        try {
            save(td, dst.toStdString());
            QFAIL("a mapped leaf was copied without copy_existing");
        } catch (const Error& e) {
            const QString m = e.what();
            QVERIFY2(m.contains("a") && m.contains(src + "/a.memmap") &&
                         m.contains(dst + "/a.memmap") && m.contains("copy_existing"),
                     e.what());
        }
        QVERIFY(!QFileInfo::exists(dst + "/a.memmap"));
        SaveOptions options;
        options.copyExisting = true;
        const TensorDict copied = save(td, dst.toStdString(), options);
        QCOMPARE(QString::fromStdString(copied.root().child("a")->store()->container().location()),
                 dst);

        // Saving onto its own files reuses them: not rewritten (a rewrite
        // would replace the file, a new inode, or at least move its mtime
        // off the moment long past that it was set to above).
        const QDateTime before = QFileInfo(src + "/b/c.memmap").lastModified();
        struct stat st {};
        QVERIFY(::stat(QFile::encodeName(src + "/b/c.memmap").constData(), &st) == 0);
        const ino_t ino = st.st_ino;
        save(td, src.toStdString());
        QCOMPARE(QFileInfo(src + "/b/c.memmap").lastModified(), before);
        QVERIFY(::stat(QFile::encodeName(src + "/b/c.memmap").constData(), &st) == 0);
        QCOMPARE(st.st_ino, ino);

        // Never truncate a file another leaf still has to be read from.
        TensorDict swapped = TensorDict::create({3});
        auto a = renamed(*td.root().find({"b", "c"}), "a");
        TensorLeaf& part = NodeBuilder(*a).leaf();
        part.shape = {3};  // the first 12 bytes of b/c.memmap
        part.numel = 3;
        part.nbytes = 12;
        NodeBuilder(swapped.mutableRoot()).put(std::move(a));
        Node& b = swapped.mutableRoot().addTensorDict("b");
        NodeBuilder(b).put(renamed(*td.root().child("a"), "c"));
        try {
            save(swapped, src.toStdString(), options);
            QFAIL("overwrote a file still to be read");
        } catch (const Error& e) {
            QVERIFY2(QString(e.what()).contains("is read from it"), e.what());
        }
        options.atomic = true;  // atomic writes elsewhere first: safe
        const TensorDict done = save(swapped, src.toStdString(), options);
        QCOMPARE(leafSha256(*done.root().child("a")),
                 std::string("8a31a40ecac0ceb4d87b30bd156ca7a547e8e33dc071454b765fbc777d1c34a1"));
    }

    void returnEarlyReportsProgressAndCompletes() {
        auto td = std::make_shared<const TensorDict>(makeData(8, 4, 1.5f));
        SaveOptions options;
        options.numThreads = 2;
        std::mutex mutex;
        std::uint64_t total = 0, most = 0;
        int reports = 0;
        options.progress = [&](const SaveProgress& p) {
            std::lock_guard<std::mutex> lock(mutex);
            ++reports;
            total = p.bytesTotal;
            most = std::max(most, p.bytesDone);
        };
        const QString prefix = scratch_.path() + "/async";
        std::future<TensorDict> future = saveAsync(td, prefix.toStdString(), options);
        const TensorDict result = future.get();
        QVERIFY(result.isLocked());
        QCOMPARE(result.root().children().size(), size_t(8));
        QCOMPARE(firstFloat(result, "leaf7"), 1.5f);
        QVERIFY(reports > 0);
        QVERIFY(total >= std::uint64_t(32) << 20);  // the leaves, and the meta.json files
        QCOMPARE(most, total);
    }

    void cancelLeavesPrefixUnchanged_data() {
        QTest::addColumn<QString>("name");
        QTest::newRow("directory") << "cancel-dir";
        QTest::newRow("archive") << "cancel.tdz";
    }
    void cancelLeavesPrefixUnchanged() {
        QFETCH(QString, name);
        const QString prefix = scratch_.path() + "/" + name;
        SaveOptions options;
        options.atomic = true;
        save(makeData(1, 1, 7.0f), prefix.toStdString(), options);  // the old content
        QVERIFY(testsupport::ageFiles(prefix));
        const QStringList before = testsupport::fileFingerprints(prefix);

        // The writers stop inside their first progress report, with part of
        // the 64 MiB written, until the future has been cancelled: the cancel
        // lands in the middle of the save however fast this machine writes.
        auto big = std::make_shared<const TensorDict>(makeData(16, 4, 3.0f));
        options.numThreads = 2;
        std::atomic<bool> once{false};
        testsupport::SaveHold hold(
            [&once](const SaveProgress& p) { return p.bytesDone > 0 && !once.exchange(true); });
        options.progress = hold.callback();
        const CancelToken cancel = options.cancel;
        std::future<TensorDict> future;
        const auto letGo = qScopeGuard([&] {
            hold.open();
            if (future.valid())
                future.wait();
        });
        future = saveAsync(big, prefix.toStdString(), options);
        QVERIFY2(hold.waitHeld(), "the save never reported progress");
        const SaveProgress at = hold.at();
        QVERIFY2(
            at.bytesDone < at.bytesTotal,
            qPrintable(QString("held at %1 of %2 bytes").arg(at.bytesDone).arg(at.bytesTotal)));
        QVERIFY(future.wait_for(std::chrono::seconds(0)) == std::future_status::timeout);
        cancel.cancel();
        hold.release();
        try {
            future.get();
            QFAIL("a cancelled save completed");
        } catch (const Cancelled&) {
        }
        QCOMPARE(testsupport::fileFingerprints(prefix), before);
        QCOMPARE(firstFloat(load(prefix.toStdString()), "leaf0"), 7.0f);
        QCOMPARE(temporarySiblings(scratch_.path()), QStringList());
    }

    void cancelThrowsCancelled_data() {
        QTest::addColumn<QString>("name");
        QTest::newRow("directory") << "typed-cancel";
        QTest::newRow("archive") << "typed-cancel.tdz";
    }
    void cancelThrowsCancelled() {
        // A token cancelled at the first report (the output made, nothing
        // written): save() throws the Cancelled type, naming the output, and
        // leaves nothing behind.
        QFETCH(QString, name);
        const QString prefix = scratch_.path() + "/" + name;
        SaveOptions options;
        options.atomic = true;
        int reports = 0;
        options.progress = [&](const SaveProgress& p) {
            if (reports++ == 0) {
                QCOMPARE(p.bytesDone, std::uint64_t(0));
                options.cancel.cancel();
            }
        };
        try {
            save(makeData(2, 2, 1.0f), prefix.toStdString(), options);
            QFAIL("the save ran to its end");
        } catch (const Cancelled& e) {
            QVERIFY2(QString(e.what()).contains(prefix), e.what());
        } catch (const Error& e) {
            QFAIL(qPrintable(QString("not Cancelled: ") + e.what()));
        }
        QCOMPARE(reports, 1);
        QVERIFY(!QFileInfo::exists(prefix));
        QCOMPARE(temporarySiblings(scratch_.path()), QStringList());
    }

    void refusalsNameTheKey() {
        TensorDict td = TensorDict::create();
        tensordict::torch::addTensor(td.mutableRoot(), "shape", at::zeros({2}));
        try {
            save(td, (scratch_.path() + "/reserved").toStdString());
            QFAIL("reserved key saved");
        } catch (const Error& e) {
            QVERIFY2(QString(e.what()).contains("shape") && QString(e.what()).contains("collides"),
                     e.what());
        }
        QVERIFY(!QFileInfo::exists(scratch_.path() + "/reserved/shape.memmap"));

        const TensorDict keys = load(testsupport::fixturePath("robust_keys").toStdString());
        SaveOptions raw;
        raw.robustKey = false;
        raw.copyExisting = true;
        try {
            save(keys, (scratch_.path() + "/raw").toStdString(), raw);
            QFAIL("a key escaping its directory was written raw");
        } catch (const Error& e) {
            QVERIFY2(QString(e.what()).contains("a/b") || QString(e.what()).contains("back\\slash"),
                     e.what());
        }

        TensorDict q = TensorDict::create();
        try {
            tensordict::torch::addTensor(
                q.mutableRoot(), "q", at::quantize_per_tensor(at::ones({2}), 0.1, 0, at::kQInt8));
            QFAIL("quantized dtype accepted");
        } catch (const Error& e) {
            QVERIFY2(QString(e.what()).contains("q") && QString(e.what()).contains("QInt8"),
                     e.what());
        }

        SaveOptions compressDir;
        compressDir.compression = kZipDeflate;
        QVERIFY_THROWS_EXCEPTION(Error,
                                 save(td, (scratch_.path() + "/nope").toStdString(), compressDir));
        QVERIFY(!zipMethodFromName("zstd"));
    }

    void unwritablePrefixIsExplained() {
        const TensorDict td = makeData(1, 1, 1.0f);
        QFile file(scratch_.path() + "/plain-file");
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.close();
        try {
            save(td, (scratch_.path() + "/plain-file/sub").toStdString());
            QFAIL("saved under a regular file");
        } catch (const Error& e) {
            QVERIFY2(QString(e.what()).contains("plain-file"), e.what());
        }
        try {
            save(td, "/proc/tdstudio-cannot-write-here");
            QFAIL("saved into /proc");
        } catch (const Error& e) {
            QVERIFY2(QString(e.what()).contains("/proc/tdstudio-cannot-write-here"), e.what());
        }
        // An atomic save replaces whole directories: never one that is not a tensordict.
        QDir().mkpath(scratch_.path() + "/precious");
        QFile keep(scratch_.path() + "/precious/notes.txt");
        QVERIFY(keep.open(QIODevice::WriteOnly));
        keep.write("mine");
        keep.close();
        SaveOptions atomic;
        atomic.atomic = true;
        QVERIFY_THROWS_EXCEPTION(Error,
                                 save(td, (scratch_.path() + "/precious").toStdString(), atomic));
        QVERIFY(QFileInfo::exists(scratch_.path() + "/precious/notes.txt"));
    }

private:
    QTemporaryDir scratch_;
};

QTEST_GUILESS_MAIN(SaveBehaviourTest)
#include "tst_save_behaviour.moc"
