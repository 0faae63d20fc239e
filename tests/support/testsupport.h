#pragma once

#include <QDir>
#include <QJsonObject>
#include <QString>
#include <QStringList>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "tensordict/report.h"
#include "tensordict/save.h"

// Helpers shared by the test suites: fixture paths, scratch copies, and the
// independent Python tools (/usr/bin/python3 with zipfile, numpy, torch).
namespace testsupport {

// The nodes of the tree under `node`, itself included: what --info walks,
// reading no leaf bytes.
std::size_t countNodes(const tensordict::Node& node);

// The message of the tensordict::Error that `f` throws, "" when it throws none.
QString errorOf(const std::function<void()>& f);
// The failure of the tensordict::Error that `f` throws (its kind decides), or none.
std::optional<tensordict::Failure> failureOf(const std::function<void()>& f);

// tests/fixtures/tensordict-0.14 (read-only: copy before writing).
QString fixturesDir();
QString fixturePath(const QString& name);
// Every fixture name that has an .expected.json, directories and archives.
QStringList fixtureNames();
// tests/fixtures/pytorch-1.13: checkpoints, safetensors and numpy files.
QString torchFixturesDir();

// Recursively copies `src` to `dst` with writable permissions.
void copyTree(const QString& src, const QString& dst);

// Runs /usr/bin/python3 with `args`; returns stdout, fails the test (via
// exception text in `error`) if it exits non-zero.
bool runPython(const QStringList& args, QString* out = nullptr, QString* error = nullptr);
// Packs a directory into a zip with Python's zipfile ("stored", "deflate", "bzip2", "lzma").
bool packWithPython(const QString& dir, const QString& zipPath, const QString& method,
                    QString* error = nullptr);

// Points QSettings (recent files, preview modes) at a test-only location.
void isolateSettings(const QString& testName);

// Writes `content` to `path`, creating its directory.
void writeFile(const QString& path, const QByteArray& content);

// Saves a .tdz of one uint8 leaf "x" of `bytes` bytes that differ from
// each other (and from another `seed`'s): a read of the wrong range or
// version shows.
void writeRampArchive(const QString& path, std::size_t bytes, char seed);

// Writes a memmap directory of `groups` TensorDicts "group_000", ... (one:
// "group") each of `leaves` float32 leaves "leaf_0000", ... of `leafElements` elements (0:
// no files to write, so 100k keys take a moment), in meta.json files only
// and, for leafElements > 0, zero-filled .memmap files.
void writeWideTree(const QString& dir, int groups, int leaves, int leafElements = 0);

// The file and file offset that `address` is mapped from (/proc/self/maps).
struct MappedFrom {
    QString file;
    quint64 offset = 0;
};
MappedFrom mappedFrom(const void* address);

// Resident memory of this process, in KiB.
qint64 residentKiB();

// sha256 and mtime of every file under `root`, for "unchanged" checks.
QStringList fileFingerprints(const QString& root);
// Sets the modification time of every file under `root` (or of the file
// `root`) to a fixed moment long past, so that any later write shows in
// fileFingerprints() without waiting for the clock to move. False if one
// could not be set.
bool ageFiles(const QString& root);

// Holds a save's writer threads inside their progress report (the
// SaveOptions::progress callback) when `when` says so, until the test's
// thread lets them go, so that a test acts at a chosen point of a save
// whatever the speed of the machine. The test's thread runs its event loop
// while it waits. std primitives (not Qt's futex-based ones), so that
// ThreadSanitizer sees the hand-over. Must outlive the save; open() it
// before anything waits for the save to end (a scope guard), or a failing
// test would leave the writers held.
class SaveHold {
public:
    explicit SaveHold(std::function<bool(const tensordict::SaveProgress&)> when);
    // The callback for SaveOptions::progress.
    std::function<void(const tensordict::SaveProgress&)> callback();
    // Waits, processing events, until the writers are held (false after
    // `timeoutMs`: a bound for a broken save, not a timing the test needs).
    bool waitHeld(int timeoutMs = 60000);
    // The report the writers are held in (or were last held in).
    tensordict::SaveProgress at() const;
    // Lets the writers go on, until the next point `when` chooses.
    void release();
    // Lets them go for good, held or not.
    void open();

private:
    std::function<bool(const tensordict::SaveProgress&)> when_;
    mutable std::mutex mutex_;
    std::condition_variable changed_;
    bool held_ = false, open_ = false;
    int generation_ = 0;
    tensordict::SaveProgress at_;
};

// Compares a describe() report (as JSON) with a fixture's .expected.json:
// nodes, leaves (dtype, shape, sha256, leading values) and non-tensor values.
// Returns "" when they match, else what differs.
QString compareWithExpected(const QJsonObject& actual, const QJsonObject& expected,
                            bool compareFiles);
QJsonObject readJsonFile(const QString& path);
// Whether `leaf` is the tensor a generator described as {"dtype":
// "torch.float32", "shape": [...], "sha256": ...}: "" when it is, else what
// differs (or that it is missing or not a tensor).
QString leafMismatch(const tensordict::Node* leaf, const QJsonObject& expected);

// A fixture of tensordict 0.14 loaded as it was written: an archive's
// .tdz, and legacy_keys without robust keys.
tensordict::TensorDict loadFixture(const QString& name);

// "" when every tensor leaf under `node` lists (PropertyDetail::Listing)
// exactly its dtype, shape, nbytes, storage and file (and a root's reading
// note) as they appear among all its properties, in the same order; else
// what differs, at which key.
QString listingPropertiesMismatch(const tensordict::Node& node);

}  // namespace testsupport
