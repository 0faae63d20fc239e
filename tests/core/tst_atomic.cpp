// Atomic saves under fire: a child process writing an atomic save over an
// existing prefix is killed with SIGKILL at many moments, and the prefix must
// always load with either the complete old or the complete new content. A
// full disk (a file-size limit) must leave the prefix untouched too.

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tensordict/torch.h"

#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QtTest>
#include <chrono>
#include <thread>

#include "tensordict/save.h"
#include "tensordict/tensordict.h"
#include "testsupport.h"

using namespace tensordict;

namespace {

constexpr int kLeaves = 6;
constexpr int kLeafFloats = 1 << 20;  // 4 MiB each

TensorDict makeData(float value, bool withNote) {
    TensorDict td = TensorDict::create();
    for (int i = 0; i < kLeaves; ++i)
        td.mutableRoot().addTensor("leaf" + std::to_string(i),
                                   at::full({kLeafFloats}, value + float(i)));
    if (withNote)
        td.mutableRoot().addNonTensor("note", Value("new"));
    return td;
}

// "old", "new", or what is wrong with what `prefix` holds.
QString classify(const QString& prefix) {
    try {
        const TensorDict td = load(prefix.toStdString());
        const bool hasNote = td.root().child("note") != nullptr;
        if (td.root().children.size() != size_t(kLeaves + (hasNote ? 1 : 0)))
            return "wrong number of keys";
        const float base = hasNote ? 2.0f : 1.0f;
        for (int i = 0; i < kLeaves; ++i) {
            const Node* leaf = td.root().child("leaf" + std::to_string(i));
            if (!leaf || leaf->numel != kLeafFloats)
                return "leaf missing or resized";
            const at::Tensor t = leaf->tensor();
            if (!t.eq(base + float(i)).all().item<bool>())
                return QString("leaf%1 has mixed content").arg(i);
        }
        return hasNote ? "new" : "old";
    } catch (const Error& e) {
        return QString("does not load: ") + e.what();
    }
}

// Runs `save` in a forked child; returns its pid.
pid_t forkSave(const TensorDict& td, const QString& prefix, int threads) {
    const pid_t pid = fork();
    if (pid == 0) {
        SaveOptions options;
        options.atomic = true;
        options.numThreads = threads;
        try {
            save(td, prefix.toStdString(), options);
        } catch (...) {
            _exit(1);
        }
        _exit(0);
    }
    return pid;
}

int waitChild(pid_t pid) {
    int status = 0;
    waitpid(pid, &status, 0);
    return status;
}

}  // namespace

class AtomicTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QVERIFY(scratch_.isValid()); }

    void sigkillAtManyMoments_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("threads");
        QTest::newRow("directory") << "target" << 2;
        QTest::newRow("archive") << "target.tdz" << 0;
    }
    void sigkillAtManyMoments() {
        QFETCH(QString, name);
        QFETCH(int, threads);
        const QString prefix = scratch_.path() + "/" + name;
        const TensorDict oldData = makeData(1.0f, false), newData = makeData(2.0f, true);
        SaveOptions atomic;
        atomic.atomic = true;
        save(oldData, prefix.toStdString(), atomic);
        QCOMPARE(classify(prefix), QString("old"));

        // How long one whole save takes here, to spread the kills over it.
        QElapsedTimer timer;
        timer.start();
        QCOMPARE(waitChild(forkSave(newData, scratch_.path() + "/timing-" + name, threads)), 0);
        const qint64 full = std::max<qint64>(timer.nsecsElapsed(), 1000000);

        constexpr int kKills = 50;
        int sawOld = 0, sawNew = 0;
        for (int i = 0; i < kKills; ++i) {
            const auto delay = std::chrono::nanoseconds(full * 11 / 10 * i / (kKills - 1));
            const pid_t pid = forkSave(newData, prefix, threads);
            std::this_thread::sleep_for(delay);
            kill(pid, SIGKILL);
            waitChild(pid);
            const QString state = classify(prefix);
            QVERIFY2(
                state == "old" || state == "new",
                qPrintable(
                    QString("kill %1 after %2 ms: %3").arg(i).arg(delay.count() / 1e6).arg(state)));
            if (state == "new") {
                ++sawNew;
                save(oldData, prefix.toStdString(), atomic);  // back to the old content
            } else {
                ++sawOld;
            }
            // What a killed writer leaves is its own temporary sibling, never the prefix.
            for (const QString& tmp :
                 QDir(scratch_.path())
                     .entryList({"." + name + ".tdstudio-*"}, QDir::AllEntries | QDir::Hidden)) {
                const QString path = scratch_.path() + "/" + tmp;
                QVERIFY(QFileInfo(path).isDir() ? QDir(path).removeRecursively()
                                                : QFile::remove(path));
            }
        }
        qInfo("%d kills over %.1f ms: old content %d times, new content %d times", kKills,
              full / 1e6, sawOld, sawNew);
        QVERIFY(sawOld > 0);
        QVERIFY(sawNew > 0);
    }

    void fullDiskLeavesPrefixUnchanged_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<bool>("atomic");
        QTest::newRow("directory atomic") << "disk-dir" << true;
        QTest::newRow("archive atomic") << "disk.tdz" << true;
        QTest::newRow("directory in place") << "disk-inplace" << false;
    }
    void fullDiskLeavesPrefixUnchanged() {
        QFETCH(QString, name);
        QFETCH(bool, atomic);
        const QString prefix = scratch_.path() + "/" + name;
        SaveOptions options;
        options.atomic = true;
        save(makeData(1.0f, false), prefix.toStdString(), options);
        const QStringList before = testsupport::fileFingerprints(prefix);

        int fds[2];
        QVERIFY(pipe(fds) == 0);
        const TensorDict newData = makeData(2.0f, true);
        const pid_t pid = fork();
        if (pid == 0) {
            // A disk that fills after 1 MiB of any file.
            signal(SIGXFSZ, SIG_IGN);
            rlimit limit{1 << 20, 1 << 20};
            setrlimit(RLIMIT_FSIZE, &limit);
            SaveOptions o;
            o.atomic = atomic;
            std::string message = "saved";
            try {
                save(newData, prefix.toStdString(), o);
            } catch (const Error& e) {
                message = e.what();
            }
            (void)!write(fds[1], message.data(), message.size());
            _exit(0);
        }
        close(fds[1]);
        QByteArray message;
        char buf[4096];
        for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;)
            message.append(buf, n);
        close(fds[0]);
        waitChild(pid);
        QVERIFY2(message.contains("File too large"), message.constData());
        QVERIFY2(message.contains(prefix.toUtf8()) ||
                     message.contains((scratch_.path() + "/." + name).toUtf8()),
                 message.constData());
        if (atomic) {
            QVERIFY2(message.contains("nothing was changed"), message.constData());
            QCOMPARE(testsupport::fileFingerprints(prefix), before);
            QCOMPARE(classify(prefix), QString("old"));
            QCOMPARE(QDir(scratch_.path())
                         .entryList({"." + name + ".tdstudio-*"}, QDir::AllEntries | QDir::Hidden),
                     QStringList());
        } else {
            QVERIFY2(message.contains("partly written output is left"), message.constData());
        }
    }

private:
    QTemporaryDir scratch_;
};

QTEST_GUILESS_MAIN(AtomicTest)
#include "tst_atomic.moc"
