// Every fixture written by Python tensordict 0.14 loads and matches its
// .expected.json exactly, through every storage backend: the directory
// itself, and archives of the same data packed by independent zip writers;
// each also through a transport that cannot map (ranged reads only), as a
// remote one will be.

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <QDirIterator>
#include <QFile>
#include <QMap>
#include <QMutex>
#include <cstring>

#include "tensordict/error.h"
#include "tensordict/report.h"
#include "tensordict/source.h"
#include "tensordict/tensordict.h"
#include "testsupport.h"

using namespace tensordict;

namespace {

// Files held in memory and served by range only ("mem://NAME/..."): a
// transport added with one class and one registerTransport() call.
class MemoryTransport final : public Transport {
public:
    std::string_view scheme() const override { return "mem"; }

    void add(const QString& location, const QByteArray& bytes) {
        QMutexLocker lock(&mutex_);
        files_[location] = bytes;
    }

    SourceInfo stat(const std::string& location) const override {
        QMutexLocker lock(&mutex_);
        const QString path = QString::fromStdString(location);
        SourceInfo info;
        if (const auto it = files_.find(path); it != files_.end()) {
            info.kind = SourceInfo::Kind::File;
            info.size = std::uint64_t(it->size());
            info.version = "1";
        } else {
            const auto next = files_.lowerBound(path + "/");
            if (next != files_.end() && next.key().startsWith(path + "/"))
                info.kind = SourceInfo::Kind::Directory;
        }
        return info;
    }

    std::shared_ptr<const ByteSource> open(const std::string& location) const override {
        QMutexLocker lock(&mutex_);
        const auto it = files_.find(QString::fromStdString(location));
        if (it == files_.end())
            throw Error(location, "no such file in memory");
        return std::make_shared<Source>(location, *it);
    }

private:
    // No map(): every read is a ranged one.
    class Source final : public ByteSource {
    public:
        Source(std::string name, QByteArray bytes) : name_(std::move(name)), bytes_(bytes) {}
        const std::string& name() const override { return name_; }
        std::uint64_t size() const override { return std::uint64_t(bytes_.size()); }
        const std::string& version() const override { return version_; }
        void readAt(std::uint64_t offset, void* out, std::size_t n) const override {
            if (offset > size() || n > size() - offset)
                throw Error(name_, "read past the end");
            std::memcpy(out, bytes_.constData() + offset, n);
        }

    private:
        std::string name_;
        QByteArray bytes_;
        std::string version_ = "1";
    };

    mutable QMutex mutex_;
    QMap<QString, QByteArray> files_;
};

QByteArray readAll(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

}  // namespace

class FixtureTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void matchesExpected_data();
    void matchesExpected();

private:
    QString materialize(const QString& fixture, const QString& backend);
    QTemporaryDir scratch_;
    std::shared_ptr<MemoryTransport> memory_ = std::make_shared<MemoryTransport>();
};

void FixtureTest::initTestCase() {
    QVERIFY(scratch_.isValid());
    QVERIFY2(testsupport::fixtureNames().size() >= 18, "fixtures missing");
    registerTransport(memory_);
}

void FixtureTest::matchesExpected_data() {
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<QString>("backend");
    const QStringList backends{"directory",     "zip-stored",     "zip-deflate",
                               "zip-bzip2",     "zip-lzma",       "zip-0-r",
                               "mem-directory", "mem-zip-stored", "mem-zip-deflate"};
    for (const QString& name : testsupport::fixtureNames()) {
        if (name.startsWith("archive_")) {
            QTest::newRow(qPrintable(name + "/tdz")) << name << "tdz";
            QTest::newRow(qPrintable(name + "/mem-tdz")) << name << "mem-tdz";
            continue;
        }
        for (const QString& backend : backends)
            QTest::newRow(qPrintable(name + "/" + backend)) << name << backend;
    }
}

// The fixture as the backend stores it: the directory, or a fresh archive of it.
QString FixtureTest::materialize(const QString& fixture, const QString& backend) {
    const QString source = testsupport::fixturePath(fixture);
    if (backend.startsWith("mem-")) {
        // The same bytes, served from memory by range.
        const QString onDisk = materialize(fixture, backend.mid(4));
        if (onDisk.isEmpty())
            return {};
        const QString location = "mem://" + fixture + "/" + backend;
        if (QFileInfo(onDisk).isFile()) {
            memory_->add(location, readAll(onDisk));
            return location;
        }
        QDirIterator it(onDisk, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
        while (it.hasNext()) {
            const QString file = it.next();
            memory_->add(location + file.mid(onDisk.size()), readAll(file));
        }
        return location;
    }
    if (backend == "directory")
        return source;
    if (backend == "tdz")
        return source + ".tdz";
    const QString zip = scratch_.path() + "/" + fixture + "-" + backend + ".tdz";
    if (backend == "zip-0-r") {
        // Info-ZIP: directory entries, unaligned payloads.
        QProcess p;
        p.setWorkingDirectory(source);
        p.start("zip", {"-0", "-r", "-q", zip, "."});
        p.waitForFinished();
        if (p.exitCode() != 0)
            return {};
        return zip;
    }
    QString error;
    if (!testsupport::packWithPython(source, zip, backend.mid(4), &error)) {
        qWarning() << error;
        return {};
    }
    return zip;
}

static QJsonObject toJsonObject(const Value& v) {
    return QJsonDocument::fromJson(QByteArray::fromStdString(toJson(v, JsonStyle::Compact)))
        .object();
}

void FixtureTest::matchesExpected() {
    QFETCH(QString, fixture);
    QFETCH(QString, backend);
    const QString path = materialize(fixture, backend);
    QVERIFY2(!path.isEmpty(), "could not build the archive");

    const QJsonObject expected =
        testsupport::readJsonFile(testsupport::fixturePath(fixture + ".expected.json"));
    TensorDict td;
    try {
        td = load(path.toStdString());
    } catch (const Error& e) {
        QFAIL(e.what());
    }
    QCOMPARE(QString::fromStdString(td.format()),
             backend.endsWith("directory") ? "directory" : "archive");
    DescribeOptions options;
    options.sha256 = true;
    options.firstValues = 64;
    const QString mismatch = testsupport::compareWithExpected(toJsonObject(describe(td, options)),
                                                              expected, backend == "directory");
    QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
}

QTEST_GUILESS_MAIN(FixtureTest)
#include "tst_fixtures.moc"
