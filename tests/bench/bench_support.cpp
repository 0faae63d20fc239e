#include "bench_support.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QStandardPaths>
#include <algorithm>
#include <cstdio>
#include <cstring>

namespace bench {

Args parseArgs(const QStringList& argv, int defaultRounds, bool takesQuick) {
    Args a;
    a.rounds = defaultRounds;
    if (const int env = qEnvironmentVariableIntValue("BENCH_ROUNDS"); env > 0)
        a.rounds = env;
    for (int i = 1; i < argv.size(); ++i) {
        if (takesQuick && argv[i] == "--quick")
            a.quick = true;
        else if (argv[i] == "--rounds" && i + 1 < argv.size())
            a.rounds = std::max(1, argv[++i].toInt());
        else if (argv[i] == "--cases" && i + 1 < argv.size())
            a.cases = argv[++i].toUpper();
        else
            a.scratch = argv[i];
    }
    return a;
}

double median(std::vector<double> v) {
    if (v.empty())
        return -1;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

QString findTool(const QString& name) {
    if (name.startsWith('/'))
        return QFileInfo(name).isExecutable() ? name : QString();
    return QStandardPaths::findExecutable(name);
}

QString findToolOrSkip(const QString& name) {
    const QString path = findTool(name);
    if (path.isEmpty())
        std::printf("skipped: %s not installed\n", qPrintable(name));
    return path;
}

// The child's ru_maxrss also counts the anonymous memory it inherits from us at fork(), so
// peak RSS is best measured before the caller allocates anything big (see /bin/true's).
ProcessRun runProcess(const QStringList& argv, const QString& stdoutPath, const QString& cwd) {
    std::vector<QByteArray> storage;
    for (const QString& a : argv)
        storage.push_back(QFile::encodeName(a));
    std::vector<char*> args;
    for (QByteArray& s : storage)
        args.push_back(s.data());
    args.push_back(nullptr);
    const QByteArray out = QFile::encodeName(stdoutPath), dir = QFile::encodeName(cwd);
    const bool changeDir = !cwd.isEmpty();

    ProcessRun run;
    QElapsedTimer timer;
    timer.start();
    const pid_t pid = fork();
    if (pid == 0) {  // the child: async-signal-safe calls only
        const int fd = ::open(out.constData(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || ::dup2(fd, STDOUT_FILENO) < 0 || (changeDir && ::chdir(dir.constData()) != 0))
            _exit(127);
        ::close(fd);
        ::execv(args[0], args.data());
        _exit(127);
    }
    int status = 0;
    rusage usage{};
    if (pid > 0 && wait4(pid, &status, 0, &usage) == pid) {
        run.seconds = timer.nsecsElapsed() / 1e9;
        run.peakMB = usage.ru_maxrss * 1024.0 / 1e6;
        run.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    if (!run.ok)
        std::fprintf(stderr, "warning: %s failed\n", qPrintable(argv.join(' ')));
    return run;
}

Scratch makeScratch(const QString& program, QString base, std::uint64_t needed,
                    const QString& hint) {
    Scratch scratch;
    if (base.isEmpty())
        base = QFileInfo("/var/tmp").isWritable() ? QString("/var/tmp") : QDir::tempPath();
    struct statvfs fs {};
    if (statvfs(QFile::encodeName(base).constData(), &fs) != 0) {
        std::fprintf(stderr, "%s: cannot stat %s\n", qPrintable(program), qPrintable(base));
        return scratch;
    }
    scratch.freeGB = double(fs.f_bavail) * fs.f_frsize / 1e9;
    if (std::uint64_t(fs.f_bavail) * fs.f_frsize < needed) {
        std::printf("%s: NOT ENOUGH SCRATCH SPACE in %s: %.2f GB free, ~%.1f GB needed.\n%s\n",
                    qPrintable(program), qPrintable(base), scratch.freeGB, needed / 1e9,
                    qPrintable(hint));
        return scratch;
    }
    auto dir = std::make_unique<QTemporaryDir>(base + "/" + program + "-XXXXXX");
    if (!dir->isValid()) {
        std::fprintf(stderr, "%s: cannot create a scratch directory in %s\n", qPrintable(program),
                     qPrintable(base));
        return scratch;
    }
    scratch.dir = std::move(dir);
    return scratch;
}

// An image-like byte: a gradient per image, flat boxes, a little noise.
std::vector<std::uint8_t> imageLikeBytes(std::size_t images, std::size_t side) {
    std::vector<std::uint8_t> v(images * side * side);
    XorShift next;
    for (std::size_t n = 0; n < images; ++n) {
        std::uint8_t* image = v.data() + n * side * side;
        const std::size_t shift = next() % 256;
        for (std::size_t y = 0; y < side; ++y)
            for (std::size_t c = 0; c < side; ++c)
                image[y * side + c] = std::uint8_t((y / 4 + c / 8 + shift) & 0xFF);
        for (int b = 0; b < 6; ++b) {
            const std::size_t y0 = next() % (side - 64), x0 = next() % (side - 64),
                              h = 8 + next() % 56, w = 8 + next() % 56;
            const auto colour = std::uint8_t(next());
            for (std::size_t y = y0; y < y0 + h; ++y)
                std::memset(image + y * side + x0, colour, w);
        }
        for (std::size_t i = 0; i < side * side; i += 1 + next() % 5)
            image[i] ^= std::uint8_t(next() & 3);
    }
    return v;
}

double timeMedian(int rounds, const std::function<void()>& f) {
    f();
    std::vector<double> times;
    for (int i = 0; i < rounds; ++i) {
        QElapsedTimer timer;
        timer.start();
        f();
        times.push_back(timer.nsecsElapsed() / 1e9);
    }
    return median(times);
}

ProcessRun processMedian(int rounds, const QStringList& argv, const std::function<void()>& before) {
    if (before)
        before();
    runProcess(argv);
    std::vector<double> times;
    ProcessRun result;
    for (int i = 0; i < rounds; ++i) {
        if (before)
            before();
        const ProcessRun run = runProcess(argv);
        if (!run.ok)
            return run;
        times.push_back(run.seconds);
        result.peakMB = std::max(result.peakMB, run.peakMB);
    }
    result.seconds = median(times);
    result.ok = true;
    return result;
}

ProcessPair processPairMedian(int rounds, const QStringList& first, const QStringList& second) {
    ProcessPair pair;
    runProcess(first);
    runProcess(second);
    std::vector<double> firstTimes, secondTimes, ratios;
    for (int i = 0; i < rounds; ++i) {
        // Each goes first in every other round: whatever the one before leaves
        // (a warmer cache, a faster clock) favours neither.
        ProcessRun a, b;
        if (i % 2 == 0) {
            a = runProcess(first);
            b = runProcess(second);
        } else {
            b = runProcess(second);
            a = runProcess(first);
        }
        if (!a.ok || !b.ok) {
            pair.first = a, pair.second = b;
            return pair;
        }
        firstTimes.push_back(a.seconds), secondTimes.push_back(b.seconds);
        ratios.push_back(a.seconds / b.seconds);
        pair.first.peakMB = std::max(pair.first.peakMB, a.peakMB);
        pair.second.peakMB = std::max(pair.second.peakMB, b.peakMB);
    }
    pair.first.seconds = median(firstTimes), pair.second.seconds = median(secondTimes);
    pair.first.ok = pair.second.ok = true;
    pair.ratio = median(ratios);
    return pair;
}

}  // namespace bench
