// Atomic saves under fire: a child process writing an atomic save over an
// existing prefix is killed with SIGKILL at chosen moments, and the prefix
// must load with exactly the content expected at that moment: the old one
// until the rename, the new one after it. The child stops itself at each
// moment (inside the save's own progress callback, or after save()
// returned) and tells the parent through a pipe, so the kill lands exactly
// there whatever the speed of the machine. The writing child is this test
// program started again (posix_spawn), not a fork: its writer threads start
// in a fresh process, as ThreadSanitizer requires. A full disk (a file-size
// limit) must leave the prefix untouched too.

#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tensordict/torch.h"

#include <QTemporaryDir>
#include <QtTest>
#include <atomic>

#include "libzip_reader.h"
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
        tensordict::torch::addTensor(td.mutableRoot(), "leaf" + std::to_string(i),
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
        if (td.root().children().size() != size_t(kLeaves + (hasNote ? 1 : 0)))
            return "wrong number of keys";
        const float base = hasNote ? 2.0f : 1.0f;
        for (int i = 0; i < kLeaves; ++i) {
            const Node* leaf = td.root().child("leaf" + std::to_string(i));
            if (!leaf || leaf->leaf().numel != kLeafFloats)
                return "leaf missing or resized";
            const at::Tensor t = tensordict::torch::tensor(*leaf);
            if (!t.eq(base + float(i)).all().item<bool>())
                return QString("leaf%1 has mixed content").arg(i);
        }
        return hasNote ? "new" : "old";
    } catch (const Error& e) {
        return QString("does not load: ") + e.what();
    }
}

// Where the child stops, signals the parent and waits for its SIGKILL.
enum class KillPoint {
    Started,      // the first progress report: the temporary sibling exists, nothing written
    FirstBytes,   // the first progress report: some tensor bytes written
    HalfBytes,    // the first progress report at half of the bytes or more
    AllWritten,   // every file written (the last file's report), not yet flushed nor renamed
    AfterReturn,  // save() returned: renamed into place
};

[[noreturn]] void signalAndWait(int fd, char what) {
    (void)!write(fd, &what, 1);
    for (;;)
        pause();  // until SIGKILL
}

// The child's orders, in the environment of the test program started again.
constexpr char kChildVariable[] = "TDSTUDIO_ATOMIC_CHILD";

// In the child: an atomic save of the new data to `prefix` with `threads`
// writer threads that stops at `point`, writes one byte to `fd` and waits
// there. A child that never reaches the point exits with 3 (save() failed)
// or 4 (it returned first).
[[noreturn]] void runSaveChild(const QString& prefix, int threads, KillPoint point, int fd) {
    const TensorDict td = makeData(2.0f, true);
    SaveOptions options;
    options.atomic = true;
    options.numThreads = threads;
    auto stopped = std::make_shared<std::atomic<bool>>(false);
    // Reports are throttled, but the one when the output is made, the
    // first with bytes and the one for the last file are always made:
    // every point below is reached.
    options.progress = [=](const SaveProgress& p) {
        const bool here = (point == KillPoint::Started && p.bytesDone == 0) ||
                          (point == KillPoint::FirstBytes && p.bytesDone > 0) ||
                          (point == KillPoint::HalfBytes && p.bytesDone * 2 >= p.bytesTotal) ||
                          (point == KillPoint::AllWritten && p.filesDone == p.filesTotal);
        if (here && !stopped->exchange(true))
            signalAndWait(fd, 'b');
    };
    try {
        save(td, prefix.toStdString(), options);
    } catch (...) {
        _exit(3);
    }
    if (point == KillPoint::AfterReturn)
        signalAndWait(fd, 'r');
    _exit(4);
}

// Starts the child that saves the new data (makeData(2, true)) over
// `prefix`; returns its pid, or -1.
pid_t spawnSave(const QString& prefix, int threads, KillPoint point, int fd) {
    const QByteArray orders =
        QString("%1:%2:%3:%4").arg(int(point)).arg(threads).arg(fd).arg(prefix).toUtf8();
    qputenv(kChildVariable, orders);
    const QByteArray self = QFile::encodeName(QCoreApplication::applicationFilePath());
    char* argv[] = {const_cast<char*>(self.constData()), nullptr};
    pid_t pid = -1;
    const int failed = posix_spawn(&pid, self.constData(), nullptr, nullptr, argv, environ);
    qunsetenv(kChildVariable);
    return failed ? -1 : pid;
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
    void cleanup() { testsupport::verifyArchivesWithLibzip(scratch_.path()); }

    void initTestCase() { QVERIFY(scratch_.isValid()); }

    void sigkillAtChosenMoments_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("threads");
        QTest::addColumn<int>("point");
        QTest::addColumn<QString>("expected");
        const struct {
            const char* label;
            KillPoint point;
            const char* expected;
        } points[] = {
            {"output made, nothing written", KillPoint::Started, "old"},
            {"first bytes", KillPoint::FirstBytes, "old"},
            {"half of the bytes", KillPoint::HalfBytes, "old"},
            {"all files written, before the rename", KillPoint::AllWritten, "old"},
            {"after the rename", KillPoint::AfterReturn, "new"},
        };
        for (const auto& [label, point, expected] : points) {
            QTest::addRow("directory, %s", label) << "target" << 2 << int(point) << expected;
            QTest::addRow("archive, %s", label) << "target.tdz" << 0 << int(point) << expected;
        }
    }
    void sigkillAtChosenMoments() {
        QFETCH(QString, name);
        QFETCH(int, threads);
        QFETCH(int, point);
        QFETCH(QString, expected);
        const QString prefix = scratch_.path() + "/" + name;
        const TensorDict oldData = makeData(1.0f, false);
        SaveOptions atomic;
        atomic.atomic = true;
        save(oldData, prefix.toStdString(), atomic);
        QCOMPARE(classify(prefix), QString("old"));

        int fds[2];
        QVERIFY(pipe(fds) == 0);
        const pid_t pid = spawnSave(prefix, threads, KillPoint(point), fds[1]);
        QVERIFY(pid > 0);
        close(fds[1]);
        char reached = 0;
        const ssize_t n = read(fds[0], &reached, 1);  // 0: the child exited without stopping
        close(fds[0]);
        kill(pid, SIGKILL);
        const int status = waitChild(pid);
        QVERIFY2(n == 1,
                 qPrintable(QString("the child never stopped at the kill point (%1)")
                                .arg(WIFEXITED(status) ? QString("exit %1").arg(WEXITSTATUS(status))
                                                       : QString("killed"))));
        QVERIFY(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        QCOMPARE(classify(prefix), expected);

        // What a killed writer leaves is its own temporary sibling, never the prefix.
        const QStringList leftovers =
            QDir(scratch_.path())
                .entryList({"." + name + ".tdstudio-*"}, QDir::AllEntries | QDir::Hidden);
        QCOMPARE(leftovers.size(), expected == "old" ? 1 : 0);
        for (const QString& tmp : leftovers) {
            const QString path = scratch_.path() + "/" + tmp;
            QVERIFY(QFileInfo(path).isDir() ? QDir(path).removeRecursively() : QFile::remove(path));
        }
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

int main(int argc, char** argv) {
    if (const QByteArray orders = qgetenv(kChildVariable); !orders.isEmpty()) {
        QCoreApplication app(argc, argv);
        const QStringList parts = QString::fromUtf8(orders).split(':');
        runSaveChild(parts.mid(3).join(':'), parts[1].toInt(), KillPoint(parts[0].toInt()),
                     parts[2].toInt());
    }
    QCoreApplication app(argc, argv);
    AtomicTest test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_atomic.moc"
