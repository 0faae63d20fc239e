// load(): zero-copy mapping, laziness, inputs left untouched, format corners.

#include "tensordict/torch.h"

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>

#include "libzip_reader.h"
#include "tensordict/report.h"
#include "tensordict/tensordict.h"
#include "tensordict/version.h"
#include "testsupport.h"

using namespace tensordict;
using testsupport::mappedFrom;
using testsupport::MappedFrom;
using testsupport::writeFile;

class LoadTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void cleanup() { testsupport::verifyArchivesWithLibzip(scratch_.path()); }

    void initTestCase() { QVERIFY(scratch_.isValid()); }

    void directoryLeafIsMappedFromItsFile() {
        LoadOptions options;
        options.store.mapLeavesFrom = 1;  // the fixture's leaves are small: map them all
        TensorDict td = load(testsupport::fixturePath("simple").toStdString(), options);
        const Node* c = td.root().find({"b", "c"});
        QVERIFY(c);
        QVERIFY(!c->isMaterialized());  // lazy: nothing mapped by opening
        const at::Tensor t = tensordict::torch::tensor(*c);
        QVERIFY(c->isMaterialized());
        const MappedFrom from = mappedFrom(t.data_ptr());
        QCOMPARE(from.file,
                 QFileInfo(testsupport::fixturePath("simple/b/c.memmap")).canonicalFilePath());
        QCOMPARE(from.offset, quint64(0));
        QCOMPARE(t.data_ptr(), static_cast<void*>(c->bytes().data.get()));
        QCOMPARE(t.sizes().vec(), (std::vector<int64_t>{3, 2}));
        QCOMPARE(t.sum().item<float>(), 6.0f);
    }

    void smallDirectoryLeavesAreReadNotMapped() {
        // Under StoreOptions::mapLeavesFrom a leaf is read into memory: no
        // mapping per small file. A tensor over it is still the node's bytes,
        // and a change made through it is seen by the next reader, as with a
        // mapped leaf; the file never changes.
        const QStringList before =
            testsupport::fileFingerprints(testsupport::fixturePath("simple"));
        TensorDict td = load(testsupport::fixturePath("simple").toStdString());
        const Node* c = td.root().find({"b", "c"});
        QVERIFY(c && c->leaf().nbytes < LoadOptions{}.store.mapLeavesFrom);
        at::Tensor t = tensordict::torch::tensor(*c);
        QVERIFY(mappedFrom(t.data_ptr()).file !=
                QFileInfo(testsupport::fixturePath("simple/b/c.memmap")).canonicalFilePath());
        QCOMPARE(t.sum().item<float>(), 6.0f);
        t.add_(1);
        t = at::Tensor();
        QCOMPARE(tensordict::torch::tensor(*c).sum().item<float>(), 12.0f);
        QCOMPARE(testsupport::fileFingerprints(testsupport::fixturePath("simple")), before);
    }

    void storedArchiveLeafIsMappedInPlace() {
        const QString archive = testsupport::fixturePath("archive_simple.tdz");
        TensorDict td = load(archive.toStdString());
        const Node* a = td.root().child("a");
        QVERIFY(a);
        QCOMPARE(a->leaf().storage.kind, StorageKind::StoredEntry);
        QCOMPARE(a->payloadOffset().value(), std::uint64_t(320));  // from the fixture's zip_entries
        const at::Tensor t = tensordict::torch::tensor(*a);
        const MappedFrom from = mappedFrom(t.data_ptr());
        QCOMPARE(from.file, QFileInfo(archive).canonicalFilePath());
        QCOMPARE(from.offset, quint64(320));
    }

    void compressedEntryInflatesOnFirstAccess() {
        const QString zip = scratch_.path() + "/deflate.tdz";
        QVERIFY(testsupport::packWithPython(testsupport::fixturePath("dtypes"), zip, "deflate"));
        TensorDict td = load(zip.toStdString());
        const Node* f = td.root().child("float64");
        QCOMPARE(f->leaf().storage.kind, StorageKind::CompressedEntry);
        QCOMPARE(f->leaf().storage.zipMethod, 8);
        QVERIFY(!f->isMaterialized());
        QCOMPARE(tensordict::torch::tensor(*f)[0][1].item<double>(), 10000000000.001);
        QVERIFY(f->isMaterialized());
    }

    void loadingNeverChangesInputs_data() {
        QTest::addColumn<QString>("backend");
        QTest::newRow("directory") << "directory";
        QTest::newRow("archive") << "archive";
    }
    void loadingNeverChangesInputs() {
        QFETCH(QString, backend);
        // A writable copy: Python would map writable files shared; we must not.
        const QString dir = scratch_.path() + "/unchanged-" + backend;
        testsupport::copyTree(testsupport::fixturePath("dtypes"), dir);
        QString path = dir;
        if (backend == "archive") {
            path = dir + ".tdz";
            QVERIFY(testsupport::packWithPython(dir, path, "stored"));
        }
        QVERIFY(testsupport::ageFiles(path));  // any write would now change the mtimes
        const QStringList before = testsupport::fileFingerprints(path);
        {
            TensorDict td = load(path.toStdString());
            for (const auto& leaf : td.root().children()) {
                at::Tensor t = tensordict::torch::tensor(*leaf);
                if (t.scalar_type() == at::kBool)
                    t.fill_(true);
                else
                    t.fill_(42);  // in-place write into the mapping
                QVERIFY(tensordict::torch::tensor(*leaf).equal(t));  // the same memory
            }
            describe(td, {true, 8});
        }
        QCOMPARE(testsupport::fileFingerprints(path), before);
    }

    void subpathLoadsPartOfTheTree() {
        LoadOptions options;
        options.subpath = {"b"};
        TensorDict td = load(testsupport::fixturePath("simple").toStdString(), options);
        QCOMPARE(td.root().key(), std::string("b"));
        QVERIFY(td.root().child("c"));
        QCOMPARE(td.root().children().size(), size_t(1));

        options.subpath = {"tc", "label"};  // through a tensorclass's _tensordict/
        TensorDict label =
            load(testsupport::fixturePath("tensorclass_nested").toStdString(), options);
        QCOMPARE(label.root().kind(), NodeKind::NonTensorData);
        QCOMPARE(label.root().value(), Value("nested"));

        options.subpath = {"nope"};
        try {
            load(testsupport::fixturePath("simple").toStdString(), options);
            QFAIL("expected an error");
        } catch (const Error& e) {
            QVERIFY2(QString(e.what()).contains("\"nope\""), e.what());
        }
    }

    void compactJsonNanTokensAndEntriesAfterNodeKeys() {
        const QString dir = scratch_.path() + "/orjson";
        testsupport::copyTree(testsupport::fixturePath("simple"), dir);
        // orjson style (compact, raw UTF-8), an entry after the node keys (make_memmap).
        writeFile(
            dir + "/meta.json",
            R"({"shape":[3],"device":"cpu","_type":"<class 'tensordict._td.TensorDict'>","b":{"type":"TensorDict"},"a":{"device":"cpu","shape":[3],"dtype":"torch.float32","is_nested":false},"s":{"type":"NonTensorData"}})");
        writeFile(
            dir + "/s/meta.json",
            "{\"_type\": \"<class 'tensordict.tensorclass.NonTensorData'>\", \"data\": "
            "[NaN, Infinity, -Infinity, 1.5, \"\xc3\xa9t\xc3\xa9\"], \"_is_non_tensor\": true}");
        TensorDict td = load(dir.toStdString());
        QCOMPARE(td.root().batchSize(), (std::vector<std::int64_t>{3}));
        QCOMPARE(td.root().children()[0]->key(), std::string("a"));  // leaves first, as Python
        const Node* s = td.root().child("s");
        QVERIFY(s);
        const Value value = s->value();
        const auto& list = value.asList();
        QVERIFY(std::isnan(list[0].asDouble()));
        QCOMPARE(list[1].asDouble(), INFINITY);
        QCOMPARE(list[2].asDouble(), -INFINITY);
        QCOMPARE(list[4].asString(), std::string("\xc3\xa9t\xc3\xa9"));
        QCOMPARE(s->batchSize(), (std::vector<std::int64_t>{3}));  // the parent's
        QCOMPARE(toJson(s->value()),
                 std::string(R"([NaN, Infinity, -Infinity, 1.5, "\u00e9t\u00e9"])"));
    }

    void repeatedKeysKeepTheFirstPositionAndTheLastValue() {
        const QString dir = scratch_.path() + "/repeated";
        testsupport::copyTree(testsupport::fixturePath("simple"), dir);
        // As Python's dict reads JSON: "a" stays first, described by its last entry.
        writeFile(
            dir + "/meta.json",
            R"({"a": {"device": "cpu", "shape": [99], "dtype": "torch.int8", "is_nested": false},
                "b": {"type": "TensorDict"},
                "a": {"device": "cpu", "shape": [3], "dtype": "torch.float32", "is_nested": false},
                "shape": [3], "device": "cpu", "_type": "<class 'tensordict._td.TensorDict'>"})");
        TensorDict td = load(dir.toStdString());
        QCOMPARE(td.root().children().size(), std::size_t(2));
        QCOMPARE(td.root().children()[0]->key(), std::string("a"));
        const Node* a = td.root().child("a");
        QCOMPARE(a, td.root().children()[0]);
        QCOMPARE(a->leaf().dtype, DType::Float32);
        QCOMPARE(a->leaf().shape, (std::vector<std::int64_t>{3}));
        QVERIFY(td.root().child("b"));
    }

    // A listing's properties of a tensor are the ones it shows among all of
    // them: every fixture, and leaves in memory (no file) and of no bytes.
    void listingPropertiesAreTheListedOnesOfAll() {
        for (const QString& name : testsupport::fixtureNames())
            QCOMPARE(testsupport::listingPropertiesMismatch(testsupport::loadFixture(name).root()),
                     QString());
        // Checkpoints, numpy and safetensors files: leaves at offsets, strided, big-endian.
        const QDir torch(testsupport::torchFixturesDir());
        const QStringList files =
            torch.entryList({"*.pt", "*.npy", "*.npz", "*.safetensors", "*.td"});
        QVERIFY(files.size() >= 12);
        for (const QString& file : files) {
            const TensorDict td = load(torch.filePath(file).toStdString());
            QCOMPARE(testsupport::listingPropertiesMismatch(td.root()), QString());
        }
        TensorDict memory = TensorDict::create();
        memory.mutableRoot().addBytes("m", DType::Int32, {2},
                                      ownedBytes(std::vector<std::int32_t>{1, 2}));
        memory.mutableRoot().addBytes("empty", DType::Int32, {0}, {});
        QCOMPARE(testsupport::listingPropertiesMismatch(memory.root()), QString());
        std::vector<std::string> names;
        for (const NodeProperty& p :
             nodeProperties(*memory.root().child("m"), PropertyDetail::Listing))
            names.emplace_back(p.name);
        QCOMPARE(names, (std::vector<std::string>{"dtype", "shape", "nbytes", "storage", "file"}));
    }

    // One list of properties per node, in reading order, as describe() writes them.
    void propertiesNameEveryFactInOrder() {
        TensorDict td = load(testsupport::fixturePath("archive_simple.tdz").toStdString());
        const Node& a = *td.root().child("a");
        std::vector<std::string> names;
        for (const NodeProperty& p : nodeProperties(a))
            names.emplace_back(p.name);
        QCOMPARE(names, (std::vector<std::string>{"dtype", "shape", "numel", "nbytes", "device",
                                                  "storage", "file", "file_size", "location",
                                                  "zip_method", "stored_size", "payload_offset"}));
        const auto value = [&](const Node& n, std::string_view name, bool readOffset = true) {
            for (const NodeProperty& p :
                 nodeProperties(n, readOffset ? PropertyDetail::All : PropertyDetail::WithoutReads))
                if (p.name == name)
                    return p.value;
            return Value(std::string("<absent>"));
        };
        QCOMPARE(value(a, "dtype").asString(), std::string("torch.float32"));
        QCOMPARE(value(a, "payload_offset").asInt(), std::int64_t(320));
        QCOMPARE(value(a, "location").asString(), td.path());
        QCOMPARE(value(a, "payload_offset", false).asString(), std::string("<absent>"));
        QCOMPARE(value(td.root(), "keys").asInt(), std::int64_t(td.root().children().size()));
        QCOMPARE(value(td.root(), "class").asString(), td.root().className());
        // describe() is the same list, keyed.
        const Value report = describe(td);
        const Value& leaf = report.find("leaves")->asList()[0];
        QCOMPARE(leaf.find("stored_size")->asInt(), value(a, "stored_size").asInt());
        QCOMPARE(leaf.find("location")->asString(), td.path());
    }

    void longerFilesUseTheirPrefix() {
        const QString dir = scratch_.path() + "/longer";
        testsupport::copyTree(testsupport::fixturePath("simple"), dir);
        QFile f(dir + "/a.memmap");
        QVERIFY(f.open(QIODevice::Append));
        f.write(QByteArray(100, '\x7f'));  // stale tail from an earlier, larger save
        f.close();
        TensorDict td = load(dir.toStdString());
        const Node* a = td.root().child("a");
        QCOMPARE(a->leaf().storage.size, std::uint64_t(112));
        QCOMPARE(leafSha256(*a),
                 std::string("15ec7bf0b50732b49f8228e07d24365338f9e3ab994b00af08e5a3bffe55fd8b"));
    }

    void dtypesWithoutTorchTypeLoadAsBytes() {
        const QString dir = scratch_.path() + "/uint16";
        writeFile(
            dir + "/meta.json",
            R"({"u": {"device": "cpu", "shape": [2], "dtype": "torch.uint16", "is_nested": false}, "f8": {"device": "cpu", "shape": [2], "dtype": "torch.float8_e4m3fn", "is_nested": false}, "shape": [], "device": "cpu", "_type": "<class 'tensordict._td.TensorDict'>"})");
        writeFile(dir + "/u.memmap", QByteArray::fromHex("ffff0100"));
        writeFile(dir + "/f8.memmap", QByteArray::fromHex("38c0"));  // 1.0, -2.0
        TensorDict td = load(dir.toStdString());
        const Node* u = td.root().child("u");
        QCOMPARE(u->leaf().dtype, DType::UInt16);
        QCOMPARE(firstValues(*u, 2), Value(Value::List{Value(65535), Value(1)}));
        QCOMPARE(firstValues(*td.root().child("f8"), 2),
                 Value(Value::List{Value(1.0), Value(-2.0)}));
        try {
            tensordict::torch::tensor(*u);
            QFAIL("expected an error");
        } catch (const Error& e) {
            QVERIFY2(QString(e.what()).contains("torch.uint16"), e.what());
            QVERIFY2(QString(e.what()).contains("u"), e.what());
        }
    }

    void opaquePickleIsNeverExecuted() {
        const QString dir = scratch_.path() + "/pickle";
        writeFile(
            dir + "/meta.json",
            R"({"x": {"type": "NonTensorData"}, "shape": [], "device": "cpu", "_type": "<class 'tensordict._td.TensorDict'>"})");
        writeFile(
            dir + "/x/meta.json",
            R"({"_type": "<class 'tensordict.tensorclass.NonTensorData'>", "_is_non_tensor": true})");
        // pickle.dumps({"data": os.system}, protocol=4): unpickling would import
        // posix.system (STACK_GLOBAL); we must not.
        writeFile(dir + "/x/other.pickle",
                  QByteArray::fromHex(
                      "8004951e000000000000007d948c0464617461948c05706f736978948c0673797374656d94"
                      "9394732e"));
        TensorDict td = load(dir.toStdString());
        const Node* x = td.root().child("x");
        QVERIFY(x->nonTensor().pickleOpaque);
        QCOMPARE(x->nonTensor().pickleFile, std::string("x/other.pickle"));
        QVERIFY(x->value().isNull());
    }

    void tolerantLoadMarksBrokenParts() {
        const QString dir = scratch_.path() + "/partly-broken";
        testsupport::copyTree(testsupport::fixturePath("nested3"), dir);
        QFile::remove(dir + "/l1/y.memmap");
        writeFile(dir + "/l1/l2/meta.json", "{not json");
        LoadOptions options;
        options.throwOnError = false;
        TensorDict td = load(dir.toStdString(), options);
        QVERIFY(td.root().child("x"));
        const auto errors = td.errors();
        QCOMPARE(errors.size(), size_t(2));
        QCOMPARE(errors[0]->keyPath(), (std::vector<std::string>{"l1", "y"}));
        QVERIFY(QString::fromStdString(errors[0]->error()).contains("y.memmap"));
        QCOMPARE(errors[1]->keyPath(), (std::vector<std::string>{"l1", "l2"}));
        QVERIFY(QString::fromStdString(errors[1]->error()).contains("l1/l2/meta.json"));
        QVERIFY_THROWS_EXCEPTION(Error, load(dir.toStdString()));
    }

    void replacedFilesAreRefusedNotMixed() {
        const QString dir = scratch_.path() + "/replaced";
        testsupport::copyTree(testsupport::fixturePath("simple"), dir);
        TensorDict td = load(dir.toStdString());
        // A save elsewhere replaces the file under the same name before the leaf is first read.
        writeFile(dir + "/a.memmap.new", QByteArray(12, '\x01'));
        QVERIFY(QFile::remove(dir + "/a.memmap"));
        QVERIFY(QFile::rename(dir + "/a.memmap.new", dir + "/a.memmap"));
        try {
            td.root().child("a")->bytes();
            QFAIL("read a replaced file");
        } catch (const Error& e) {
            QVERIFY2(QString(e.what()).contains("replaced"), e.what());
        }

        const QString archive = scratch_.path() + "/replaced.tdz";
        QVERIFY(QFile::copy(testsupport::fixturePath("archive_simple.tdz"), archive));
        TensorDict fromArchive = load(archive.toStdString());
        QVERIFY(QFile::remove(archive));
        QVERIFY(
            testsupport::packWithPython(testsupport::fixturePath("nested3"), archive, "stored"));
        // The archive stays open: its leaves still come from the file that was opened.
        QCOMPARE(leafSha256(*fromArchive.root().find({"b", "c"})),
                 std::string("f46913286d895f62d646314f400fc3d7a543cf34eb4ae56df87f43dc4582a36b"));
    }

    void metaJsonPathOpensItsDirectory() {
        TensorDict td = load((testsupport::fixturePath("simple") + "/meta.json").toStdString());
        QVERIFY(td.root().child("a"));
    }

    void versionsNameTheirLibraries() {
        // The core lists the libraries it runs on, never libtorch, which it
        // does not load; the torch part reports the libtorch it was built on.
        QStringList names;
        for (const auto& [name, version] : tensordict::libraryVersions()) {
            names << QString::fromStdString(name);
            QVERIFY2(!version.empty(), name.c_str());
        }
        QCOMPARE(names, QStringList({"Qt", "liblzma", "zlib", "ISA-L", "bzip2"}));
        const QString torch = QString::fromStdString(tensordict::torch::libtorchVersion());
        QVERIFY2(QRegularExpression("^\\d+\\.\\d+\\.\\d+").match(torch).hasMatch(),
                 qPrintable(torch));
    }

private:
    QTemporaryDir scratch_;

    // A checkpoint's views of one storage, as libtorch tensors: each the
    // values torch shows, the contiguous ones and the strided ones over the
    // one mapping of the file (no copy), as torch.load gives them.
    void checkpointViewsShareTheirStorageAsTensors() {
        const QString path = testsupport::torchFixturesDir() + "/shared_storage.pt";
        const tensordict::TensorDict td = tensordict::load(path.toStdString());
        const at::Tensor x = tensordict::torch::tensor(*td.root().child("x"));
        const at::Tensor t = tensordict::torch::tensor(*td.root().child("t"));
        const at::Tensor step = tensordict::torch::tensor(*td.root().child("every_other"));
        const at::Tensor row2 = tensordict::torch::tensor(*td.root().child("row2"));
        QVERIFY(at::equal(t, x.t()));
        QVERIFY(at::equal(step, x.slice(/*dim=*/1, 0, 6, 2)));
        QVERIFY(at::equal(row2, x[2]));
        QCOMPARE(t.strides().vec(), (std::vector<std::int64_t>{1, 6}));
        QCOMPARE(t.data_ptr(), x.data_ptr());  // one storage, in place
        QCOMPARE(step.data_ptr(), x.data_ptr());
        QCOMPARE(static_cast<const char*>(row2.data_ptr()),
                 static_cast<const char*>(x.data_ptr()) + 12 * 4);
    }
};

QTEST_GUILESS_MAIN(LoadTest)
#include "tst_load.moc"
