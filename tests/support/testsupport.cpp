#include "testsupport.h"

#include "tensordict/error.h"
#include "tensordict/keys.h"
#include "tensordict/report.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QDateTime>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QStandardPaths>
#include <QTest>
#include <algorithm>

namespace testsupport {

std::size_t countNodes(const tensordict::Node& node) {
    std::size_t n = 1;
    for (const auto& child : node.children())
        n += countNodes(*child);
    return n;
}

QString errorOf(const std::function<void()>& f) {
    try {
        f();
    } catch (const tensordict::Error& e) {
        return QString::fromUtf8(e.what());
    }
    return {};
}

std::optional<tensordict::Failure> failureOf(const std::function<void()>& f) {
    try {
        f();
    } catch (const tensordict::Error& e) {
        return e.failure();
    }
    return std::nullopt;
}

QString fixturesDir() {
    return QStringLiteral(TDSTUDIO_FIXTURES_DIR);
}

QString torchFixturesDir() {
    return QStringLiteral(TDSTUDIO_TORCH_FIXTURES_DIR);
}

QString fixturePath(const QString& name) {
    return fixturesDir() + "/" + name;
}

QStringList fixtureNames() {
    QStringList names;
    const auto entries =
        QDir(fixturesDir()).entryList({"*.expected.json"}, QDir::Files, QDir::Name);
    for (const QString& e : entries)
        names << e.chopped(QStringLiteral(".expected.json").size());
    return names;
}

void copyTree(const QString& src, const QString& dst) {
    QDir().mkpath(dst);
    QFile::setPermissions(dst, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    const QDir dir(src);
    for (const QFileInfo& fi :
         dir.entryInfoList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden)) {
        const QString target = dst + "/" + fi.fileName();
        if (fi.isDir()) {
            copyTree(fi.filePath(), target);
        } else {
            QFile::copy(fi.filePath(), target);
            QFile::setPermissions(target, QFile::ReadOwner | QFile::WriteOwner);
        }
    }
}

bool runPython(const QStringList& args, QString* out, QString* error) {
    QProcess p;
    p.start(QStringLiteral("/usr/bin/python3"), args);
    if (!p.waitForFinished(300000)) {
        if (error)
            *error = "python3 did not finish: " + p.errorString();
        return false;
    }
    if (out)
        *out = QString::fromUtf8(p.readAllStandardOutput());
    if (p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        if (error)
            *error = QString::fromUtf8(p.readAllStandardError());
        return false;
    }
    return true;
}

bool packWithPython(const QString& dir, const QString& zipPath, const QString& method,
                    QString* error) {
    return runPython(
        {QStringLiteral(TDSTUDIO_TEST_SUPPORT_DIR "/pack_zip.py"), dir, zipPath, method}, nullptr,
        error);
}

void isolateSettings(const QString& testName) {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName("tdstudio-tests");
    QCoreApplication::setApplicationName(testName);
}

void writeRampArchive(const QString& path, std::size_t bytes, char seed) {
    QByteArray data(qsizetype(bytes), '\0');
    for (qsizetype i = 0; i < data.size(); ++i)
        data[i] = static_cast<char>(seed + i * 7 + i / 1000);
    tensordict::TensorDict td = tensordict::TensorDict::create();
    td.mutableRoot().addBytes("x", tensordict::DType::UInt8, {std::int64_t(bytes)},
                              tensordict::ownedBytes(data));
    tensordict::SaveOptions options;
    options.archive = true;
    tensordict::save(td, path.toStdString(), options);
}

void writeFile(const QString& path, const QByteArray& content) {
    QDir().mkpath(QFileInfo(path).path());
    QFile f(path);
    f.open(QIODevice::WriteOnly | QIODevice::Truncate);
    f.write(content);
}

void writeWideTree(const QString& dir, int groups, int leaves, int leafElements) {
    // group_042, leaf_0777: zero-padded to the width of the largest number.
    auto name = [](const char* prefix, int i, int count, int minDigits) {
        const int digits = std::max(minDigits, int(QString::number(count - 1).size()));
        return QString("%1_%2").arg(prefix).arg(i, digits, 10, QChar('0'));
    };
    const QByteArray tail =
        R"("shape": [], "device": "cpu", "_type": "<class 'tensordict._td.TensorDict'>"})";
    const QByteArray leaf = QString(R"({"device": "cpu", "shape": [%1], "dtype": "torch.float32", )"
                                    R"("is_nested": false}, )")
                                .arg(leafElements)
                                .toUtf8();
    QByteArray root = "{";
    for (int g = 0; g < groups; ++g) {
        const QString group = groups == 1 ? QString("group") : name("group", g, groups, 3);
        root += "\"" + group.toUtf8() + R"(": {"type": "TensorDict"}, )";
        QByteArray meta = "{";
        for (int l = 0; l < leaves; ++l) {
            const QString key = name("leaf", l, leaves, 4);
            meta += "\"" + key.toUtf8() + "\": " + leaf;
            if (leafElements > 0)
                writeFile(dir + "/" + group + "/" + key + ".memmap",
                          QByteArray(qsizetype(leafElements) * 4, '\0'));
        }
        writeFile(dir + "/" + group + "/meta.json", meta + tail);
    }
    writeFile(dir + "/meta.json", root + tail);
}

MappedFrom mappedFrom(const void* address) {
    const auto a = reinterpret_cast<quint64>(address);
    QFile maps("/proc/self/maps");
    maps.open(QIODevice::ReadOnly | QIODevice::Text);
    for (const QByteArray& line : maps.readAll().split('\n')) {
        const QStringList parts = QString::fromUtf8(line).simplified().split(' ');
        if (parts.size() < 5)
            continue;
        const QStringList range = parts[0].split('-');
        const quint64 start = range[0].toULongLong(nullptr, 16),
                      end = range[1].toULongLong(nullptr, 16);
        if (a >= start && a < end)
            return {parts.size() >= 6 ? parts.mid(5).join(' ') : QString(),
                    a - start + parts[2].toULongLong(nullptr, 16)};
    }
    return {};
}

qint64 residentKiB() {
    QFile status("/proc/self/status");
    status.open(QIODevice::ReadOnly | QIODevice::Text);
    for (const QByteArray& line : status.readAll().split('\n'))
        if (line.startsWith("VmRSS:"))
            return line.mid(6).trimmed().split(' ').front().toLongLong();
    return -1;
}

QStringList fileFingerprints(const QString& root) {
    QStringList out;
    QFileInfo rootInfo(root);
    QStringList files;
    if (rootInfo.isFile()) {
        files << root;
    } else {
        QDirIterator it(root, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
        while (it.hasNext())
            files << it.next();
    }
    files.sort();
    for (const QString& path : files) {
        QFile f(path);
        f.open(QIODevice::ReadOnly);
        const QByteArray hash =
            QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256).toHex();
        const QFileInfo fi(path);
        out << path + " " + hash + " " + QString::number(fi.lastModified().toMSecsSinceEpoch()) +
                   " " + QString::number(fi.size());
    }
    return out;
}

SaveHold::SaveHold(std::function<bool(const tensordict::SaveProgress&)> when)
    : when_(std::move(when)) {}

std::function<void(const tensordict::SaveProgress&)> SaveHold::callback() {
    return [this](const tensordict::SaveProgress& p) {
        std::unique_lock<std::mutex> lock(mutex_);
        if (open_ || !when_(p))
            return;
        at_ = p;
        held_ = true;
        const int generation = ++generation_;
        changed_.notify_all();
        changed_.wait(lock, [&] { return open_ || generation_ != generation; });
        held_ = false;
    };
}

bool SaveHold::waitHeld(int timeoutMs) {
    return QTest::qWaitFor(
        [this] {
            std::lock_guard<std::mutex> lock(mutex_);
            return held_;
        },
        timeoutMs);
}

tensordict::SaveProgress SaveHold::at() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return at_;
}

void SaveHold::release() {
    std::lock_guard<std::mutex> lock(mutex_);
    held_ = false;  // until the writers stop again
    ++generation_;
    changed_.notify_all();
}

void SaveHold::open() {
    std::lock_guard<std::mutex> lock(mutex_);
    open_ = true;
    changed_.notify_all();
}

bool ageFiles(const QString& root) {
    QStringList files;
    if (QFileInfo(root).isFile()) {
        files << root;
    } else {
        QDirIterator it(root, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
        while (it.hasNext())
            files << it.next();
    }
    const QDateTime past = QDateTime::fromSecsSinceEpoch(946684800);  // 2000-01-01
    bool ok = true;
    for (const QString& path : files) {
        QFile f(path);
        ok = ok && f.open(QIODevice::ReadOnly) &&
             f.setFileTime(past, QFileDevice::FileModificationTime);
    }
    return ok;
}

QString leafMismatch(const tensordict::Node* leaf, const QJsonObject& expected) {
    if (!leaf || !leaf->isTensor())
        return leaf ? "not a tensor" : "missing";
    const QString dtype = QString::fromUtf8(tensordict::dtypeName(leaf->leaf().dtype));
    if (dtype != expected["dtype"].toString())
        return "dtype " + dtype + ", expected " + expected["dtype"].toString();
    std::vector<std::int64_t> shape;
    for (const auto d : expected["shape"].toArray())
        shape.push_back(d.toInteger());
    if (leaf->leaf().shape != shape)
        return "another shape than " + QJsonDocument(expected["shape"].toArray()).toJson();
    const QString sha = QString::fromStdString(tensordict::leafSha256(*leaf));
    if (sha != expected["sha256"].toString())
        return "sha256 " + sha + ", expected " + expected["sha256"].toString();
    return {};
}

QJsonObject readJsonFile(const QString& path) {
    QFile f(path);
    f.open(QIODevice::ReadOnly);
    return QJsonDocument::fromJson(f.readAll()).object();
}

QString compareWithExpected(const QJsonObject& actual, const QJsonObject& expected,
                            bool compareFiles) {
    auto differs = [](const QString& what, const QJsonValue& a, const QJsonValue& e) {
        return QString("%1: got %2, expected %3")
            .arg(what,
                 QString::fromUtf8(QJsonDocument(QJsonArray{a}).toJson(QJsonDocument::Compact)),
                 QString::fromUtf8(QJsonDocument(QJsonArray{e}).toJson(QJsonDocument::Compact)));
    };
    if (!actual["errors"].toArray().isEmpty())
        return differs("errors", actual["errors"], QJsonArray{});
    if (actual["root_class"] != expected["root_class"])
        return differs("root_class", actual["root_class"], expected["root_class"]);
    if (actual["batch_size"] != expected["batch_size"])
        return differs("batch_size", actual["batch_size"], expected["batch_size"]);
    struct Section {
        const char* name;
        QStringList fields;
    };
    const QList<Section> sections{
        {"nodes",
         {"key", "class", "batch_size", "device", "stack_dim", "is_tensorclass",
          "non_tensor_fields"}},
        {"leaves", {"key", "dtype", "shape", "numel", "nbytes", "sha256"}},
        {"non_tensor", {"key", "class", "batch_size", "data"}}};
    for (const Section& section : sections) {
        const QJsonArray exp = expected[section.name].toArray(),
                         act = actual[section.name].toArray();
        if (exp.size() != act.size())
            return differs(QString(section.name) + " count", act.size(), exp.size());
        for (int i = 0; i < exp.size(); ++i) {
            const QJsonObject e = exp[i].toObject(), a = act[i].toObject();
            for (const QString& field : section.fields)
                if (e.contains(field) && a[field] != e[field])
                    return differs(QString("%1[%2].%3").arg(section.name).arg(i).arg(field),
                                   a[field], e[field]);
            if (QString(section.name) == "leaves") {
                const QJsonArray ev = e["first_values"].toArray(), av = a["first_values"].toArray();
                for (int j = 0; j < ev.size(); ++j)
                    if (j >= av.size() || av[j] != ev[j])
                        return differs(QString("leaves[%1].first_values[%2]").arg(i).arg(j),
                                       av.at(j), ev[j]);
                if (compareFiles && a["file"] != e["file"])
                    return differs(QString("leaves[%1].file").arg(i), a["file"], e["file"]);
            }
        }
    }
    return {};
}

tensordict::TensorDict loadFixture(const QString& name) {
    QString path = fixturePath(name);
    if (name.startsWith("archive_"))
        path += ".tdz";
    tensordict::LoadOptions options;
    options.robustKey = name != "legacy_keys";
    return tensordict::load(path.toStdString(), options);
}

QString listingPropertiesMismatch(const tensordict::Node& node) {
    using namespace tensordict;
    if (node.isTensor()) {
        const auto listed = [](const std::vector<NodeProperty>& properties, bool filter) {
            QStringList out;
            for (const NodeProperty& p : properties)
                if (!filter || p.name == "dtype" || p.name == "shape" || p.name == "nbytes" ||
                    p.name == "storage" || p.name == "file" || p.name == "reading")
                    out << QString::fromUtf8(p.name.data(), qsizetype(p.name.size())) + "=" +
                               QString::fromStdString(toJson(p.value));
            return out;
        };
        const QStringList all = listed(nodeProperties(node, PropertyDetail::WithoutReads), true);
        const QStringList brief = listed(nodeProperties(node, PropertyDetail::Listing), false);
        return all == brief ? QString()
                            : QString::fromStdString(formatKeyPath(node.keyPath())) + ": listed " +
                                  brief.join(", ") + "; all: " + all.join(", ");
    }
    for (const Node* child : node.children())
        if (QString m = listingPropertiesMismatch(*child); !m.isEmpty())
            return m;
    return {};
}

}  // namespace testsupport
