// The files PyTorch users have, read without Python: every fixture written
// by torch 1.13, numpy 1.24 and tensordict 0.14 (tests/fixtures/pytorch-1.13)
// matches what the real library reads back (its .expected.json), from disk
// and through a transport that cannot map; pickles never run code; a
// checkpoint converts to a .tdz whose values torch.load agrees with; and
// bad files give errors that name them.

#include <cmath>
#include <cstring>

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtEndian>
#include <QtTest>

#include "memory_transport.h"
#include "tensordict/element.h"
#include "tensordict/error.h"
#include "tensordict/keys.h"
#include "tensordict/report.h"
#include "tensordict/save.h"
#include "tensordict/store.h"
#include "tensordict/tensordict.h"
#include "testsupport.h"

using namespace tensordict;

namespace {

QByteArray readAll(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

std::vector<std::int64_t> ints(const Value& v) {
    std::vector<std::int64_t> out;
    for (const Value& e : v.asList())
        out.push_back(e.asInt());
    return out;
}

int countNodes(const Node& n) {
    int count = 1;
    for (const Node* c : n.children())
        count += countNodes(*c);
    return count;
}

std::vector<std::string> keyPathOf(const Value& key) {
    std::vector<std::string> path;
    for (const Value& k : key.asList())
        path.push_back(k.asString());
    return path;
}

// The class of the Python object `v` stands for.
std::string pythonTypeOf(const Value& v) {
    if (v.isNull())
        return "NoneType";
    if (v.isBool())
        return "bool";
    if (v.isInteger())
        return "int";
    if (v.isDouble())
        return "float";
    if (v.isString())
        return "str";
    if (v.isBytes())
        return "bytes";
    return v.isList() ? "list" : "dict";
}

}  // namespace

class CheckpointTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(scratch_.isValid());
        registerTransport(memory_);
    }

    void fixturesMatchWhatTheRealLibraryReads_data() {
        QTest::addColumn<QString>("fixture");
        QTest::addColumn<bool>("ranged");
        const QStringList names = QDir(testsupport::torchFixturesDir())
                                      .entryList({"*.expected.json"}, QDir::Files, QDir::Name);
        QVERIFY(names.size() >= 11);
        for (QString name : names) {
            name.chop(QStringLiteral(".expected.json").size());
            QTest::newRow(qPrintable(name + "/file")) << name << false;
            QTest::newRow(qPrintable(name + "/ranged")) << name << true;
        }
    }

    void fixturesMatchWhatTheRealLibraryReads() {
        QFETCH(QString, fixture);
        QFETCH(bool, ranged);
        const QDir dir(testsupport::torchFixturesDir());
        const QString file = dir.entryList({fixture + ".*"}, QDir::Files)
                                 .filter(QRegularExpression("\\.(pt|npy|npz|safetensors|td)$"))
                                 .value(0);
        QVERIFY(!file.isEmpty());
        const Value expected = parseJson(
            readAll(dir.filePath(fixture + ".expected.json")).toStdString(), fixture.toStdString());
        std::string location = dir.filePath(file).toStdString();
        if (ranged) {
            location = "mem://" + file.toStdString();
            memory_->add(QString::fromStdString(location), readAll(dir.filePath(file)));
        }
        const TensorDict td = load(location);
        const Value::List& entries = expected.find("entries")->asList();
        QCOMPARE(countNodes(td.root()), int(entries.size()));
        for (const Value& e : entries) {
            const std::vector<std::string> path = keyPathOf(*e.find("key"));
            const std::string label = formatKeyPath(path);
            const Node* n = td.root().find(path);
            QVERIFY2(n, label.c_str());
            const std::string kind = e.find("kind")->asString();
            if (kind == "tensor" || kind == "ndarray") {
                QVERIFY2(n->isTensor(), label.c_str());
                const Value* dtype = e.find(kind == "tensor" ? "dtype" : "torch_dtype");
                QCOMPARE(std::string(dtypeName(n->leaf().dtype)), dtype->asString());
                QCOMPARE(n->leaf().shape, ints(*e.find("shape")));
                if (const Value* sha = e.find("sha256"))
                    QCOMPARE(leafSha256(*n), sha->asString());
            } else if (kind == "dict" || kind == "list" || kind == "tuple") {
                QCOMPARE(n->kind(), NodeKind::Container);
                QCOMPARE(n->className(), kind == "dict" ? e.find("class")->asString() : kind);
                QCOMPARE(std::int64_t(n->children().size()), e.find("len")->asInt());
            } else if (kind == "tensordict") {
                QCOMPARE(n->kind(), NodeKind::TensorDict);
                QCOMPARE(n->className(), e.find("class")->asString());
                QCOMPARE(n->batchSize(), ints(*e.find("batch_size")));
            } else if (kind == "value") {
                QCOMPARE(n->kind(), NodeKind::NonTensorData);
                // A TensorDict's NonTensorData gives Python its data: of that type.
                QCOMPARE(
                    n->className() == "NonTensorData" ? pythonTypeOf(n->value()) : n->className(),
                    e.find("type")->asString());
                QVERIFY2(n->value() == *e.find("value"), label.c_str());
            } else if (kind == "object") {
                QCOMPARE(n->kind(), NodeKind::Object);
                QCOMPARE(n->className(), e.find("class")->asString());
            } else {
                QFAIL(("unknown kind " + kind).c_str());
            }
        }
        if (const Value* metadata = expected.find("metadata"))
            QVERIFY(Value(td.root().collection().attributes) == *metadata);
    }

    // Views of one storage read as torch shows them: offsets, a transpose,
    // a step; the contiguous ones in place, in the archive's one mapping.
    void viewsOfOneStorageShareItsBytes() {
        const TensorDict td = load(path("shared_storage.pt"));
        const LeafBytes x = td.root().child("x")->bytes();
        const LeafBytes tail = td.root().child("tail")->bytes();
        const LeafBytes row2 = td.root().child("row2")->bytes();
        QCOMPARE(tail.data.get(), x.data.get() + 6 * 4);  // in place, offset 6 elements
        QCOMPARE(row2.data.get(), x.data.get() + 12 * 4);
        const LeafBytes t = td.root().child("t")->bytes();  // a transpose: gathered
        const auto* xs = reinterpret_cast<const float*>(x.data.get());
        const auto* ts = reinterpret_cast<const float*>(t.data.get());
        for (int i = 0; i < 6; ++i)
            for (int j = 0; j < 4; ++j)
                QCOMPARE(ts[i * 4 + j], xs[j * 6 + i]);
    }

    // .npy as numpy writes it in every version, byte order and memory order:
    // read as C-ordered little-endian values, whatever the file keeps.
    void numpyFilesInEveryLayoutReadAsNumpyDoes() {
        const QString dir = scratch_.filePath("npy");
        QVERIFY(QDir().mkpath(dir));
        QString out, error;
        QVERIFY2(testsupport::runPython(
                     {"-c",
                      "import hashlib, sys, numpy as np\n"
                      "from numpy.lib import format as fmt\n"
                      "d = sys.argv[1]\n"
                      "a = np.arange(24, dtype='<f4').reshape(2, 3, 4) / 7\n"
                      "cases = {\n"
                      "  'c': a, 'fortran': np.asfortranarray(a), 'big': a.astype('>f4'),\n"
                      "  'big_fortran': np.asfortranarray(a.astype('>f8')),\n"
                      "  'complex_big': (a + 1j * a).astype('>c16'), 'int_big': np.arange(5, "
                      "dtype='>i8'),\n"
                      "  'uint16': np.arange(6, dtype='<u2').reshape(3, 2), 'bool': a > 1,\n"
                      "  'scalar': np.array(3.5), 'empty': np.zeros((0, 3), 'f4')}\n"
                      "for name, arr in cases.items():\n"
                      "    np.save(d + '/' + name + '.npy', arr)\n"
                      "for version in ((2, 0), (3, 0)):\n"
                      "    with open(d + '/v%d.npy' % version[0], 'wb') as f:\n"
                      "        fmt.write_array(f, np.asfortranarray(a), version=version)\n"
                      "    cases['v%d' % version[0]] = a\n"
                      "for name, arr in cases.items():\n"
                      "    c = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder('<'))\n"
                      "    print(name, hashlib.sha256(c.tobytes()).hexdigest(), list(arr.shape))\n",
                      dir},
                     &out, &error),
                 qPrintable(error));
        const QStringList lines = out.trimmed().split('\n');
        QCOMPARE(lines.size(), 12);
        for (const QString& line : lines) {
            const QStringList parts = line.split(' ');
            const TensorDict td = load((dir + "/" + parts[0] + ".npy").toStdString());
            QVERIFY2(td.root().isTensor(), qPrintable(parts[0]));
            QCOMPARE(QString::fromStdString(leafSha256(td.root())), parts[1]);
        }
        // A .npz of the same arrays, deflated: the same values through the inflate path.
        QVERIFY2(testsupport::runPython({"-c",
                                         "import hashlib, sys, numpy as np\n"
                                         "a = np.arange(24, dtype='>f4').reshape(2, 3, 4)\n"
                                         "large = np.arange(3 << 20, dtype='<i4') % 1000\n"
                                         "np.savez_compressed(sys.argv[1], big=a, "
                                         "fortran=np.asfortranarray(a.astype('<i2')), "
                                         "large=large)\n"
                                         "print(hashlib.sha256(large.tobytes()).hexdigest())\n",
                                         dir + "/mixed.npz"},
                                        &out, &error),
                 qPrintable(error));
        const TensorDict npz = load((dir + "/mixed.npz").toStdString());
        // 12 MiB inflated: its array starts after the member's header, not at the entry's start.
        QCOMPARE(QString::fromStdString(leafSha256(*npz.root().child("large"))), out.trimmed());
        const LeafBytes bigBytes = npz.root().child("big")->bytes();
        const LeafBytes fortranBytes = npz.root().child("fortran")->bytes();
        const auto* big = reinterpret_cast<const float*>(bigBytes.data.get());
        const auto* fortran = reinterpret_cast<const std::int16_t*>(fortranBytes.data.get());
        for (int i = 0; i < 24; ++i) {
            QCOMPARE(big[i], float(i));
            QCOMPARE(fortran[i], std::int16_t(i));
        }
    }

    // A pickle whose objects would run code if unpickled by Python: nothing
    // runs, the objects show their class, and the tensors inside still show.
    void picklesNeverRunCode() {
        const QString marker = scratch_.filePath("pwned");
        const QString pt = scratch_.filePath("module.pt");
        QString error;
        QVERIFY2(testsupport::runPython(
                     {"-c",
                      "import os, sys, torch\n"
                      "class Evil:\n"
                      "    def __reduce__(self):\n"
                      "        return (os.system, ('touch ' + sys.argv[2],))\n"
                      "torch.save({'model': torch.nn.Linear(2, 3), 'evil': Evil()}, sys.argv[1])\n",
                      pt, marker},
                     nullptr, &error),
                 qPrintable(error));
        QVERIFY(!QFile::exists(marker));
        const TensorDict td = load(pt.toStdString());
        QVERIFY(!QFile::exists(marker));
        const Node* evil = td.root().child("evil");
        QVERIFY(evil);
        QCOMPARE(evil->kind(), NodeKind::Object);
        QCOMPARE(evil->className(), std::string("posix.system"));
        const Node* model = td.root().child("model");
        QCOMPARE(model->kind(), NodeKind::Object);
        QCOMPARE(model->className(), std::string("torch.nn.modules.linear.Linear"));
        const Node* weight = model->find({"_parameters", "weight"});
        QVERIFY(weight && weight->isTensor());
        QCOMPARE(weight->leaf().shape, (std::vector<std::int64_t>{3, 2}));
        QVERIFY(!QFile::exists(marker));
        QVERIFY(!td.root().store()->readingNote().empty());

        // Saving refuses the objects, naming the key, unless told to skip them.
        try {
            save(td, scratch_.filePath("module.tdz").toStdString());
            QFAIL("saved an object");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).rfind("model: a Python object of class", 0) == 0,
                     e.what());
        }
        SaveOptions skip;
        skip.skipObjects = true;
        std::vector<std::string> skipped;
        skip.skipped = [&](const std::string& key) { skipped.push_back(key); };
        const TensorDict saved = save(td, scratch_.filePath("module.tdz").toStdString(), skip);
        QCOMPARE(skipped, (std::vector<std::string>{"model", "evil"}));
        QCOMPARE(saved.root().children().size(), std::size_t(0));
    }

    // .pt -> .tdz: Python reads the archive (zipfile, numpy, meta.json as
    // tensordict writes it) with the values torch.load gives for the .pt.
    void aCheckpointConvertsToATensordictArchive_data() {
        QTest::addColumn<QString>("fixture");
        QTest::newRow("state_dict") << "state_dict.pt";
        QTest::newRow("nested") << "nested.pt";
        QTest::newRow("tensordict") << "tensordict.pt";
        QTest::newRow("legacy") << "legacy.pt";
        QTest::newRow("views") << "shared_storage.pt";
    }

    void aCheckpointConvertsToATensordictArchive() {
        QFETCH(QString, fixture);
        const QString tdz = scratch_.filePath(fixture + ".tdz");
        save(load(path(fixture)), tdz.toStdString());
        QString out, error;
        QVERIFY2(
            testsupport::runPython(
                {"-c", kCompareScript, QString::fromStdString(path(fixture)), tdz}, &out, &error),
            qPrintable(error + out));
        QVERIFY2(out.contains("same"), qPrintable(out));
    }

    // tensordict's consolidated layout, in its own file and torch.saved:
    // each converts to a .tdz with the same values. A trailer or a leaf that
    // lies is refused naming the file and the key; nothing is read past
    // the storage.
    void consolidatedTensordictsConvertAndRefuseLies() {
        for (const char* fixture : {"consolidated.td", "consolidated_saved.pt"}) {
            const TensorDict source = load(path(fixture));
            QCOMPARE(source.root().batchSize(), (std::vector<std::int64_t>{8}));
            const QString tdz = scratch_.filePath(QString(fixture) + ".tdz");
            save(source, tdz.toStdString());
            const TensorDict copy = load(tdz.toStdString());
            for (const auto& key : std::vector<std::vector<std::string>>{
                     {"obs"}, {"action"}, {"mask"}, {"half"}, {"next", "reward"}, {"next", "step"}})
                QCOMPARE(leafSha256(*copy.root().find(key)), leafSha256(*source.root().find(key)));
            QVERIFY(copy.root().child("env")->value() == Value("CartPole-v1"));
            QCOMPARE(copy.root().child("next")->batchSize(), (std::vector<std::int64_t>{8}));
        }

        const QByteArray file = readAll(QString::fromStdString(path("consolidated.td")));
        quint64 length = 0;
        std::memcpy(&length, file.constData() + file.size() - 8, 8);
        const QByteArray storage = file.left(file.size() - 8 - qsizetype(length));
        const QByteArray metadata = file.mid(storage.size(), qsizetype(length));
        const auto write = [&](const QString& name, const QByteArray& json) {
            QByteArray out = storage + json;
            const quint64 n = quint64(json.size());
            out.append(reinterpret_cast<const char*>(&n), 8);
            const QString p = scratch_.filePath(name);
            QFile f(p);
            if (!f.open(QIODevice::WriteOnly) || f.write(out) != out.size())
                return std::string();
            return p.toStdString();
        };
        // A leaf past the storage; a leaf shorter than its shape.
        QByteArray past = metadata;
        past.replace("384, 448, 0]", "384, 99448, 0]");
        QByteArray shorter = metadata;
        shorter.replace("384, 448, 0]", "384, 440, 0]");
        for (const QByteArray& lie : {past, shorter}) {
            QVERIFY(lie != metadata);
            const TensorDict td = load(write("lie.td", lie));
            const Node* action = td.root().child("action");
            QVERIFY(action && action->isError());
            QCOMPARE(action->failure()->kind, ErrorKind::Corrupt);
            QVERIFY2(action->failure()->where.find("lie.td") != std::string::npos &&
                         action->failure()->where.find("action") != std::string::npos,
                     action->failure()->where.c_str());
            QVERIFY(td.root().child("obs")->isTensor());  // the rest opens
        }
        // A trailer whose length does not fit is no consolidated file at all.
        QByteArray cut = file;
        cut[cut.size() - 1] = '\x7f';
        QFile f(scratch_.filePath("cut.td"));
        QVERIFY(f.open(QIODevice::WriteOnly) && f.write(cut) == cut.size());
        f.close();
        try {
            load(scratch_.filePath("cut.td").toStdString());
            QFAIL("opened a file with a lying trailer");
        } catch (const Error& e) {
            QCOMPARE(e.failure().kind, ErrorKind::Unsupported);
        }
    }

    // safetensors' float8 names (spec: huggingface/safetensors Dtype), each
    // decoded: F8_E8M0 scales, the FNUZ formats' one NaN at 0x80; a packed
    // F4 tensor unpacked.
    void safetensorsFloat8DtypesDecode() {
        const auto write = [&](const QString& name, const QByteArray& header,
                               const QByteArray& data) {
            QByteArray h = header;
            while (h.size() % 8)
                h += ' ';
            QByteArray out(8, '\0');
            const quint64 n = quint64(h.size());
            std::memcpy(out.data(), &n, 8);
            out += h + data;
            QFile f(scratch_.filePath(name));
            if (!f.open(QIODevice::WriteOnly) || f.write(out) != out.size())
                return std::string();
            return scratch_.filePath(name).toStdString();
        };
        const std::string path =
            write("f8.safetensors",
                  R"({"s":{"dtype":"F8_E8M0","shape":[4],"data_offsets":[0,4]},)"
                  R"("a":{"dtype":"F8_E4M3FNUZ","shape":[2],"data_offsets":[4,6]},)"
                  R"("b":{"dtype":"F8_E5M2FNUZ","shape":[2],"data_offsets":[6,8]}})",
                  QByteArray("\x7f\x80\x00\xff\x80\x08\x80\x04", 8));
        const TensorDict td = load(path);
        const auto at = [&](const char* key, int i) {
            const Node* n = td.root().child(key);
            return elementAsDouble(n->bytes().data.get() + i, n->leaf().dtype);
        };
        QCOMPARE(td.root().child("s")->leaf().dtype, DType::Float8_e8m0fnu);
        QCOMPARE(at("s", 0), 1.0);
        QCOMPARE(at("s", 1), 2.0);
        QCOMPARE(at("s", 2), std::ldexp(1.0, -127));
        QVERIFY(std::isnan(at("s", 3)));
        QCOMPARE(td.root().child("a")->leaf().dtype, DType::Float8_e4m3fnuz);
        QVERIFY(std::isnan(at("a", 0)));
        QCOMPARE(at("a", 1), std::ldexp(1.0, -7));  // exponent 1, bias 8
        QCOMPARE(td.root().child("b")->leaf().dtype, DType::Float8_e5m2fnuz);
        QVERIFY(std::isnan(at("b", 0)));
        QCOMPARE(at("b", 1), std::ldexp(1.0, -15));  // exponent 1, bias 16

        // Packed F4: two codes a byte, element 0 in the low nibble (0x21:
        // codes 1 and 2, 0.5 and 1.0), unpacked one a byte.
        const std::string f4 =
            write("f4.safetensors", R"({"p":{"dtype":"F4","shape":[2],"data_offsets":[0,1]}})",
                  QByteArray("\x21", 1));
        const TensorDict packed = load(f4);
        const Node* p = packed.root().child("p");
        QCOMPARE(p->leaf().dtype, DType::Float4_e2m1fn);
        QCOMPARE(p->leaf().nbytes, std::uint64_t(2));
        QCOMPARE(elementAsDouble(p->bytes().data.get(), p->leaf().dtype), 0.5);
        QCOMPARE(elementAsDouble(p->bytes().data.get() + 1, p->leaf().dtype), 1.0);
    }

    // Pickles built to exhaust a reader: 100,000 nested lists, a list that
    // holds itself, a global that names os.system. Each opens, with the
    // part it cannot show as an error node that says why, and the loop as
    // a reference to the list (Python's [[...]]); nothing runs.
    void hostilePicklesOpenWithTheirProblemsShown() {
        const QString pt = scratch_.filePath("hostile.pt");
        QString error;
        QVERIFY2(
            testsupport::runPython(
                {"-c",
                 "import sys, zipfile\n"
                 "n = 100000\n"
                 "deep = b']' * n + b'a' * (n - 1)\n"  // each list appended into the one before
                 "loop = b']q\\x00h\\x00a'\n"          // l = []; l.append(l)
                 "call = b'cposix\\nsystem\\nX\\x05\\x00\\x00\\x00touch\\x85R'\n"
                 "body = b'\\x80\\x02}(X\\x04\\x00\\x00\\x00deepq\\x01' + deep + "
                 "b'X\\x04\\x00\\x00\\x00loop' + loop + b'X\\x04\\x00\\x00\\x00call' + call + "
                 "b'u.'\n"
                 "with zipfile.ZipFile(sys.argv[1], 'w') as z:\n"
                 "    z.writestr('hostile/data.pkl', body)\n"
                 "    z.writestr('hostile/version', '3')\n",
                 pt},
                nullptr, &error),
            qPrintable(error));
        const TensorDict td = load(pt.toStdString());
        const Node* deep = td.root().child("deep");
        QVERIFY(deep && deep->kind() == NodeKind::Container);
        const Node* n = deep;
        int depth = 0;
        while (n->kind() == NodeKind::Container && n->children().size() == 1)
            n = n->children()[0], ++depth;
        QCOMPARE(depth, 256);
        QVERIFY2(
            n->isError() && n->error().find("nested more than 256 levels") != std::string::npos,
            n->error().c_str());
        const Node* loop = td.root().child("loop");
        QVERIFY(loop && loop->children().size() == 1);
        QCOMPARE(loop->children()[0]->className(), std::string("reference"));
        QCOMPARE(loop->children()[0]->value(), Value("<the object at loop>"));
        const Node* call = td.root().child("call");
        QCOMPARE(call->kind(), NodeKind::Object);
        QCOMPARE(call->className(), std::string("posix.system"));
        QCOMPARE(call->find({"args", "0"})->value(), Value("touch"));
    }

    // Pickles written opcode by opcode to break a reader's arithmetic and
    // memory (each a checkpoint {"t": ...} with one 8-byte storage "0"):
    // every one opens, its part shown as an error that says why.
    void craftedPicklesAreRefusedWithAReason_data() {
        QTest::addColumn<QString>("pickle");  // a Python expression of the value of "t"
        QTest::addColumn<QString>("expected");
        QTest::newRow("strides that wrap")
            << "R(G('torch._utils', '_rebuild_tensor_v2'), T(ST('FloatStorage', 2), I(0), "
               "T(*[I(2)] * 8), T(*[I(2 ** 61)] * 8), F, OD()))"
            << "overflow";
        QTest::newRow("size that wraps bytes")
            << "R(G('torch._utils', '_rebuild_tensor_v2'), T(ST('DoubleStorage', 1), I(0), "
               "T(I(2 ** 61 + 1)), T(I(0)), F, OD()))"
            << "overflow";
        QTest::newRow("a view past its storage")
            << "R(G('torch._utils', '_rebuild_tensor_v2'), T(ST('FloatStorage', 2), I(1), "
               "T(I(2)), T(I(1)), F, OD()))"
            << "reaches past its storage";
        QTest::newRow("a storage bigger than its entry")
            << "R(G('torch._utils', '_rebuild_tensor_v2'), T(ST('FloatStorage', 100), I(0), "
               "T(I(100)), T(I(1)), F, OD()))"
            << "truncated file";
        QTest::newRow("a tuple shared 2^60 ways")
            << "b']\\x940' + b''.join(b'h' + bytes([i]) + b'h' + bytes([i]) + b'\\x86\\x940' "
               "for i in range(60)) + b'h<'"
            << "repeats shared objects";
        QTest::newRow("one big tuple called a million times")
            << "b'(' + b'N' * 100000 + b't\\x94' + b'cposix\\nsystem\\n\\x94' + "
               "b'h\\x01h\\x00R0' * 1000 + b'N'"
            << "copies more than";
    }

    void craftedPicklesAreRefusedWithAReason() {
        QFETCH(QString, pickle);
        QFETCH(QString, expected);
        const QString pt = scratch_.filePath("crafted.pt");
        QString error;
        QVERIFY2(
            testsupport::runPython(
                {"-c", QString(kOpcodes) + "t = " + pickle + "\n" + "write(sys.argv[1], t)\n", pt},
                nullptr, &error),
            qPrintable(error));
        std::string message;
        try {
            const TensorDict td = load(pt.toStdString());
            const Node* t = td.root().child("t");
            QVERIFY(t);
            // The first error node under "t", depth first.
            std::vector<const Node*> stack{t};
            while (!stack.empty() && message.empty()) {
                const Node* n = stack.back();
                stack.pop_back();
                if (n->isError())
                    message = n->error();
                for (const Node* c : n->children())
                    stack.push_back(c);
            }
        } catch (const Error& e) {
            message = e.what();  // the whole pickle refused
        }
        QVERIFY2(QString::fromStdString(message).contains(expected), message.c_str());
    }

    // torch 2.1's _rebuild_tensor_v3 (dtypes without a typed storage: an
    // untyped byte storage, the dtype as an argument), and dict keys that
    // print alike, all kept.
    void newerTensorsAndAlikeKeysAreRead() {
        const QString pt = scratch_.filePath("v3.pt");
        QString error;
        QVERIFY2(testsupport::runPython(
                     {"-c",
                      QString(kOpcodes) +
                          "t = R(G('torch._utils', '_rebuild_tensor_v3'), T(ST('UntypedStorage', "
                          "8), I(1), T(I(3)), T(I(1)), F, OD(), G('torch', 'float16')))\n"
                          "write(sys.argv[1], t, extra=[(I(1), S('int one')), (S('1'), "
                          "S('str one'))])\n",
                      pt},
                     nullptr, &error),
                 qPrintable(error));
        const TensorDict td = load(pt.toStdString());
        const Node* t = td.root().child("t");
        QVERIFY2(t && t->isTensor(), t && t->isError() ? t->error().c_str() : "");
        QCOMPARE(t->leaf().dtype, DType::Float16);
        QCOMPARE(t->leaf().shape, std::vector<std::int64_t>{3});
        const LeafBytes bytes = t->bytes();
        const auto* halves = reinterpret_cast<const std::uint16_t*>(bytes.data.get());
        QCOMPARE(halves[0], std::uint16_t(0x0302));  // the storage is bytes 0, 1, 2, ...: from 2
        int ones = 0;
        for (const Node* c : td.root().children())
            ones += c->key() == "1";
        QCOMPARE(ones, 2);
    }

    // Empty tensors start where the next tensor starts (safetensors' writer
    // lays tensors out in order, an empty one taking no bytes): no overlap.
    // The check sorted the ranges by their start alone, so a tie could come
    // out with the empty one last, and such a file was refused as
    // overlapping. safetensors' own validate() sorts by (start, end).
    void emptySafetensorsTensorsSharingAStartDoNotOverlap() {
        constexpr int kTensors = 40;
        QByteArray header = "{";
        for (int i = 0; i < kTensors; ++i) {
            const int start = 16 * (i / 2), end = i % 2 ? start + 16 : start;
            header += QString(R"(%1"w%2":{"dtype":"F32","shape":[%3],"data_offsets":[%4,%5]})")
                          .arg(i ? "," : "")
                          .arg(i, 2, 10, QChar('0'))
                          .arg((end - start) / 4)
                          .arg(start)
                          .arg(end)
                          .toUtf8();
        }
        header += "}";
        QByteArray bytes(8, '\0');
        qToLittleEndian<quint64>(quint64(header.size()), bytes.data());
        QByteArray data(16 * kTensors / 2, '\0');
        for (int i = 0; i < data.size(); ++i)
            data[i] = char(i);
        const QString file = scratch_.filePath("empty_ties.safetensors");
        testsupport::writeFile(file, bytes + header + data);
        const TensorDict td = load(file.toStdString());
        QCOMPARE(int(td.root().children().size()), kTensors);
        const LeafBytes last = td.root().child("w39")->bytes();
        QCOMPARE(last.size, std::uint64_t(16));
        QCOMPARE(std::to_integer<int>(last.data.get()[0]), (16 * 19) & 0xFF);  // its first byte
        QCOMPARE(td.root().child("w38")->bytes().size, std::uint64_t(0));
    }

    // Tensors whose data overlap are named, as the header lists them:
    // after __metadata__ and a key given twice (the last entry counts, as
    // the library reads it: the first "b" is no tensor's), in another order
    // than their data.
    void overlappingSafetensorsTensorsAreNamed() {
        const QByteArray header =
            R"({"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2],)"
            R"("data_offsets":[0,8]},"c":{"dtype":"U8","shape":[4],"data_offsets":[12,16]},)"
            R"("b":{"dtype":"U8","shape":[1],"data_offsets":[1,2]},)"
            R"("b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})";
        QByteArray bytes(8, '\0');
        qToLittleEndian<quint64>(quint64(header.size()), bytes.data());
        bytes += header + QByteArray(16, '\1');
        const QString file = scratch_.filePath("overlap.safetensors");
        testsupport::writeFile(file, bytes);
        try {
            load(file.toStdString());
            QFAIL("loaded");
        } catch (const Error& e) {
            // The second "b", [8,16), overlaps "c", [12,16).
            QCOMPARE(QString::fromStdString(e.reason()),
                     QString(R"(tensors "b" and "c" overlap in the data)"));
        }
    }

    // The library's validate(): the tensors, sorted by their data, cover
    // the data exactly (a byte of no tensor's could hide anything), the last
    // of a name given twice counts, and __metadata__ maps str to str. Each
    // file below is refused by it, and by tdstudio with the reason.
    void safetensorsDataIsCoveredExactly_data() {
        QTest::addColumn<QByteArray>("header");
        QTest::addColumn<int>("dataSize");
        QTest::addColumn<QString>("reason");  // empty: loads
        const QByteArray a = R"("a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]})";
        const QByteArray b = R"("b":{"dtype":"F32","shape":[2],"data_offsets":[16,24]})";
        QTest::newRow("exact") << "{" + a + "," + b + "}" << 24 << QString();
        QTest::newRow("a name twice, alike")
            << "{" + a + "," + a + "," + b + "}" << 24 << QString();
        QTest::newRow("a gap") << "{" + a +
                                      R"(,"b":{"dtype":"F32","shape":[2],)"
                                      R"("data_offsets":[24,32]}})"
                               << 32 << "bytes [16, 24) of the data belong to no tensor";
        QTest::newRow("bytes first")
            << QByteArray(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[8,24]}})") << 24
            << "bytes [0, 8) of the data belong to no tensor";
        QTest::newRow("bytes past the last")
            << "{" + a + "," + b + "}" << 40
            << "the file holds 16 bytes past its last tensor's data";
        QTest::newRow("a name twice, apart")
            << "{" + a + "," + b + R"(,"a":{"dtype":"F32","shape":[4],"data_offsets":[24,40]}})"
            << 40
            << R"(bytes [0, 16) of the data belong to no tensor (the header names "a" twice; )"
               "the last is read)";
        QTest::newRow("metadata not str")
            << R"({"__metadata__":{"format":"pt","step":3},)" + a + "," + b + "}" << 24
            << R"(__metadata__'s "step" is not a string)";
        // The library refuses it (serde's duplicate field), where merging
        // the two would show metadata no reader gives.
        QTest::newRow("metadata twice") << R"({"__metadata__":{"format":"pt"},)" + a + "," + b +
                                               R"(,"__metadata__":{"step":"3"}})"
                                        << 24 << "__metadata__ is given twice";
        QTest::newRow("metadata null")
            << R"({"__metadata__":null,)" + a + "," + b + "}" << 24 << QString();
    }

    void safetensorsDataIsCoveredExactly() {
        QFETCH(QByteArray, header);
        QFETCH(int, dataSize);
        QFETCH(QString, reason);
        QByteArray bytes(8, '\0');
        qToLittleEndian<quint64>(quint64(header.size()), bytes.data());
        const QString file = scratch_.filePath("cover.safetensors");
        testsupport::writeFile(file, bytes + header + QByteArray(dataSize, '\1'));
        try {
            const TensorDict td = load(file.toStdString());
            QVERIFY2(reason.isEmpty(), "loaded");
            QCOMPARE(td.root().child("a")->leaf().numel, std::int64_t(4));
        } catch (const Error& e) {
            QCOMPARE(QString::fromStdString(e.reason()), reason);
        }
    }

    // A header entry reads alike whichever JSON reader reads it: as plain
    // JSON, straight into the leaf (the tensor named "a"), and by the general
    // reader (the same entry, the name spelled "\u0061" to take it there).
    // Each entry gives the same leaf, or the same refusal.
    void safetensorsEntriesReadAlikeByEitherReader_data() {
        QTest::addColumn<QByteArray>("entry");
        QTest::addColumn<bool>("loads");
        QTest::addColumn<QByteArray>("pad");  // the bytes of the data before 12 that "a" leaves
        const auto row = [](const char* name, const char* entry, bool loads,
                            const char* pad = "[8,12]") {
            QTest::newRow(name) << QByteArray(entry) << loads << QByteArray(pad);
        };
        row("as written", R"({"dtype":"F32","shape":[2],"data_offsets":[0,8]})", true);
        row("reordered", R"({"data_offsets":[0,8],"shape":[2],"dtype":"F32"})", true);
        row("spaced",
            " { \"dtype\" :\t\"F32\" ,\n\"shape\" : [ 2 ] , \"data_offsets\" : [ 0 , 8 ] } ", true);
        row("scalar", R"({"dtype":"F32","shape":[],"data_offsets":[0,4]})", true, "[4,12]");
        row("empty", R"({"dtype":"U8","shape":[0,3],"data_offsets":[16,16]})", true, "[0,12]");
        row("extra field", R"({"dtype":"F32","shape":[2],"data_offsets":[0,8],"x":[1,{"y":2}]})",
            true);
        row("dtype twice", R"({"dtype":"F32","dtype":"U8","shape":[2],"data_offsets":[0,8]})",
            false);
        // The library refuses a field given twice (serde's "duplicate field").
        row("shape twice", R"({"dtype":"U8","shape":[1],"shape":[2],"data_offsets":[0,2]})", false);
        row("offsets twice",
            R"({"dtype":"U8","shape":[2],"data_offsets":[0,1],"data_offsets":[0,2]})", false);
        row("minus zero", R"({"dtype":"U8","shape":[-0,4],"data_offsets":[0,0]})", true, "[0,12]");
        row("18 digits", R"({"dtype":"U8","shape":[100000000000000000],"data_offsets":[0,8]})",
            false);
        row("negative dim", R"({"dtype":"U8","shape":[-1],"data_offsets":[0,1]})", false);
        row("string dim", R"({"dtype":"U8","shape":["2"],"data_offsets":[0,2]})", false);
        row("list dim", R"({"dtype":"U8","shape":[[2]],"data_offsets":[0,2]})", false);
        // Not plain JSON: both read by the general reader, which must refuse them alike.
        row("fraction dim", R"({"dtype":"U8","shape":[2.0],"data_offsets":[0,2]})", false);
        row("no offsets", R"({"dtype":"F32","shape":[2]})", false);
        row("three offsets", R"({"dtype":"F32","shape":[2],"data_offsets":[0,8,9]})", false);
        row("one offset", R"({"dtype":"F32","shape":[2],"data_offsets":[8]})", false);
        row("19-digit offset",
            R"({"dtype":"U8","shape":[1],"data_offsets":[0,1000000000000000000]})", false);
        row("list entry", R"([1])", false);
        row("null entry", R"(null)", false);
        row("unknown dtype", R"({"dtype":"Q9","shape":[2],"data_offsets":[0,8]})", false);
        row("number dtype", R"({"dtype":5,"shape":[2],"data_offsets":[0,8]})", false);
        row("overflow", R"({"dtype":"U8","shape":[1048576,1048576,1048576],"data_offsets":[0,8]})",
            false);
        row("past the data", R"({"dtype":"F32","shape":[2],"data_offsets":[12,20]})", false);
        row("wrong span", R"({"dtype":"F32","shape":[2],"data_offsets":[0,4]})", false);
        row("odd F4", R"({"dtype":"F4","shape":[3],"data_offsets":[0,2]})", false);
    }

    void safetensorsEntriesReadAlikeByEitherReader() {
        QFETCH(QByteArray, entry);
        QFETCH(bool, loads);
        QFETCH(QByteArray, pad);
        // The leaf, or the refusal, of the header {"b": ..., NAME: entry,
        // "pad": ...}: b and pad cover the 16 bytes of data that a does not.
        const QByteArray padSize = QByteArray::number(
            pad.mid(pad.indexOf(',') + 1).chopped(1).toInt() - pad.mid(1).split(',')[0].toInt());
        const auto read = [&](const QByteArray& name, const QString& dir) {
            const QByteArray header = R"({"b":{"dtype":"U8","shape":[4],"data_offsets":[12,16]},)" +
                                      name + ":" + entry + R"(,"pad":{"dtype":"U8","shape":[)" +
                                      padSize + R"(],"data_offsets":)" + pad + "}}";
            QByteArray bytes(8, '\0');
            qToLittleEndian<quint64>(quint64(header.size()), bytes.data());
            bytes += header + QByteArray(16, '\1');
            QDir(scratch_.path()).mkpath(dir);
            const QString file = scratch_.filePath(dir + "/alike.safetensors");
            testsupport::writeFile(file, bytes);
            try {
                const TensorDict td = load(file.toStdString());
                const Node* a = td.root().child("a");
                if (!a || !a->isTensor())
                    return QString("no leaf a");
                QString shape;
                for (const std::int64_t d : a->leaf().shape)
                    shape += QString::number(d) + ",";
                return QString("%1 [%2] at %3 of the data, %4 children")
                    .arg(QString::fromStdString(std::string(dtypeName(a->leaf().dtype))), shape)
                    .arg(a->leaf().numel ? a->leaf().storage.offset - quint64(8 + header.size())
                                         : 0)
                    .arg(td.root().children().size());
            } catch (const Error& e) {
                return QString("refused: %1: %2")
                    .arg(QString::fromStdString(e.where()).section('/', -2),
                         QString::fromStdString(e.reason()));
            }
        };
        const QString plain = read(R"("a")", "plain");
        const QString general = read(R"("\u0061")", "plain");
        QCOMPARE(plain, general);
        QVERIFY2(plain.startsWith("refused") != loads, qPrintable(plain));
    }

    void aCorruptCheckpointEntryIsNamedWhenItsLeafIsRead() {
        // A stored entry of a torch.save zip whose bytes no longer match its
        // CRC-32: reading the leaf in full says so, as for a .tdz entry.
        const QString copy = scratch_.path() + "/corrupt_entry.pt";
        QVERIFY(QFile::copy(QString::fromStdString(path("bare_tensor.pt")), copy));
        QVERIFY(QFile::setPermissions(copy, QFile::ReadOwner | QFile::WriteOwner));
        QByteArray broken = readAll(copy);
        // The local header of ".../data/0", then its first payload byte.
        const QByteArray name = "bare_tensor/data/0";
        const int header = broken.indexOf(name) - 30;
        QVERIFY(header >= 0 && broken.mid(header, 4) == QByteArray("PK\x03\x04", 4));
        const int nameLength = qFromLittleEndian<quint16>(broken.constData() + header + 26);
        const int extraLength = qFromLittleEndian<quint16>(broken.constData() + header + 28);
        QCOMPARE(broken.mid(header + 30, nameLength), name);
        const int payload = header + 30 + nameLength + extraLength;
        broken[payload] = static_cast<char>(~broken[payload]);
        {
            QFile f(copy);
            QVERIFY(f.open(QIODevice::WriteOnly));
            QCOMPARE(f.write(broken), qint64(broken.size()));
        }
        const TensorDict td = load(copy.toStdString());
        const Node& leaf = td.root();
        QVERIFY(leaf.isTensor());
        QVERIFY(leaf.integrityWarning().empty());  // nothing read yet
        leafSha256(leaf);
        QVERIFY2(!leaf.integrityWarning().empty(), "a corrupt entry hashed without a word");

        // The intact file's leaf reads without one.
        const TensorDict good = load(path("bare_tensor.pt"));
        leafSha256(good.root());
        QVERIFY2(good.root().integrityWarning().empty(), good.root().integrityWarning().c_str());
    }

    void badFilesNameThemselvesAndTheProblem_data() {
        QTest::addColumn<QString>("base");
        QTest::addColumn<int>("cut");  // bytes kept; -1: the bytes are patched instead
        QTest::addColumn<QByteArray>("patchFrom");
        QTest::addColumn<QByteArray>("patchTo");
        QTest::addColumn<QString>("reason");
        QTest::newRow("npy truncated")
            << "array.npy" << 200 << QByteArray() << QByteArray() << "truncated";
        QTest::newRow("npy object dtype")
            << "array.npy" << -1 << QByteArray("'<f4'") << QByteArray("'|O8'") << "objects";
        QTest::newRow("legacy truncated")
            << "legacy.pt" << 300 << QByteArray() << QByteArray() << "truncated";
        QTest::newRow("safetensors header size lies")
            << "model.safetensors" << 100 << QByteArray() << QByteArray() << "past the end";
        QTest::newRow("safetensors overlap")
            << "model.safetensors" << -1 << QByteArray("\"data_offsets\":[160,168]")
            << QByteArray("\"data_offsets\":[152,160]") << "overlap";
    }

    void badFilesNameThemselvesAndTheProblem() {
        QFETCH(QString, base);
        QFETCH(int, cut);
        QFETCH(QByteArray, patchFrom);
        QFETCH(QByteArray, patchTo);
        QFETCH(QString, reason);
        QByteArray bytes = readAll(QString::fromStdString(path(base)));
        if (cut >= 0) {
            bytes.truncate(cut);
        } else {
            QVERIFY2(bytes.contains(patchFrom), patchFrom.constData());
            bytes.replace(patchFrom, patchTo);
        }
        const QString bad = scratch_.filePath("bad-" + base);
        testsupport::writeFile(bad, bytes);
        try {
            const TensorDict td = load(bad.toStdString());
            for (const Node* c : td.root().children())  // an error may sit in one node
                if (c->isError())
                    throw Error(*c->failure());
            QFAIL("loaded");
        } catch (const Error& e) {
            const QString message = QString::fromUtf8(e.what());
            QVERIFY2(message.contains("bad-" + base) || message.contains(".npy"),
                     qPrintable(message));
            QVERIFY2(message.contains(reason), qPrintable(message));
        }
    }

private:
    static std::string path(const QString& name) {
        return QDir(testsupport::torchFixturesDir()).filePath(name).toStdString();
    }

    // A tiny pickle writer for crafted checkpoints: opcodes as bytes.
    static constexpr const char* kOpcodes = R"(import struct, sys, zipfile
def G(module, name): return b'c' + module.encode() + b'\n' + name.encode() + b'\n'
def I(n):
    if -2 ** 31 <= n < 2 ** 31: return b'J' + struct.pack('<i', n)
    raw = n.to_bytes((n.bit_length() + 8) // 8, 'little', signed=True)
    return b'\x8a' + bytes([len(raw)]) + raw
def S(s): b = s.encode(); return b'X' + struct.pack('<I', len(b)) + b
def T(*items): return b'(' + b''.join(items) + b't'
def R(callee, args): return callee + args + b'R'
F = b'\x89'
def OD(): return R(G('collections', 'OrderedDict'), b')')
def ST(kind, numel): return T(S('storage'), G('torch', kind), S('0'), S('cpu'), I(numel)) + b'Q'
def write(path, t, extra=()):
    body = b'\x80\x02}(' + S('t') + t + b''.join(k + v for k, v in extra) + b'u.'
    with zipfile.ZipFile(path, 'w') as z:
        z.writestr('crafted/data.pkl', body)
        z.writestr('crafted/data/0', bytes(range(8)))
        z.writestr('crafted/version', '3')
)";

    static constexpr const char* kCompareScript = R"(
import json, sys, zipfile
import numpy, torch
pt, tdz = sys.argv[1], sys.argv[2]
z = zipfile.ZipFile(tdz)
assert z.testzip() is None
def flat(obj, prefix=()):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from flat(v, prefix + (str(k),))
    elif isinstance(obj, (list, tuple)) and not isinstance(obj, torch.Size):
        for i, v in enumerate(obj):
            yield from flat(v, prefix + (str(i),))
    elif hasattr(obj, '_tensordict'):
        yield from flat(dict(obj.items()), prefix)
    else:
        yield prefix, obj
def entry(path):
    folder = '/'.join(path[:-1])
    return (folder + '/' if folder else '') + path[-1]
import types
# tensordict is not installed here: a torch.save(TensorDict) reads as its dict of entries.
fake = {name: types.ModuleType(name) for name in ('tensordict', 'tensordict._reductions', 'tensordict._td')}
fake['tensordict._reductions']._make_td = lambda cls, state: state['_tensordict']
fake['tensordict._td'].TensorDict = object
sys.modules.update(fake)
obj = torch.load(pt)
for path, value in flat(obj):
    meta = json.loads(z.read(entry(path[:-1] + ('meta.json',)) if len(path) > 1 else 'meta.json'))
    if isinstance(value, torch.Tensor):
        info = meta[path[-1]]
        assert info['shape'] == list(value.shape), (path, info)
        data = z.read(entry(path) + '.memmap') if value.numel() else b''
        dtype = str(value.dtype).replace('torch.', '')
        arr = numpy.frombuffer(data, dtype=numpy.dtype(dtype)).reshape(value.shape)
        assert numpy.array_equal(arr, value.contiguous().numpy()), path
    else:
        leaf = json.loads(z.read(entry(path) + '/meta.json'))
        assert leaf['data'] == value or (value != value and leaf['data'] != leaf['data']), (path, leaf)
print('same')
)";

    QTemporaryDir scratch_;
    std::shared_ptr<testsupport::MemoryTransport> memory_ =
        std::make_shared<testsupport::MemoryTransport>();
};

QTEST_GUILESS_MAIN(CheckpointTest)
#include "tst_checkpoints.moc"
