// Values kept exactly, and data never lost or invented, with checkpoints
// written by the real torch 1.13 (tests/support/make_exact_values.py, which
// computes what they hold with numpy) and everything we write read back by
// Python's own json, pickle and zipfile:
// - Python ints of any size stay ints, from a checkpoint and from a
//   tensordict, through .tdz and directory saves and pickle sidecars;
// - legacy (pre-1.6) checkpoints in every pickle protocol, 0 to 5;
// - two source keys that would become one file are refused, and nothing is
//   written;
// - a storage type no reader knows spoils only its own tensor;
// - floats are written as Python's repr writes them.

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "tensordict/report.h"
#include "tensordict/save.h"
#include "tensordict/tensordict.h"
#include "testsupport.h"

using namespace tensordict;

namespace {

// What /usr/bin/python3 prints for `code`, the test failing on an error.
QString python(const QString& code) {
    QString out, error;
    if (!testsupport::runPython({"-c", code}, &out, &error))
        qWarning("python3 failed: %s", qPrintable(error));
    return out.trimmed();
}

void writeFile(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(bytes);
}

}  // namespace

class ExactValuesTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        QString out, error;
        QVERIFY2(
            testsupport::runPython({TDSTUDIO_TEST_SUPPORT_DIR "/make_exact_values.py", dir_.path()},
                                   &out, &error),
            qPrintable(error));
        expected_ = QJsonDocument::fromJson(out.toUtf8()).object();
        QVERIFY(!expected_.isEmpty());
    }

    void legacyCheckpointsInEveryProtocol_data() {
        QTest::addColumn<int>("protocol");
        for (int p = 0; p <= 5; ++p)
            QTest::addRow("protocol %d", p) << p;
    }
    void legacyCheckpointsInEveryProtocol() {
        QFETCH(int, protocol);
        const TensorDict td =
            load(QString("%1/legacy_p%2.pt").arg(dir_.path()).arg(protocol).toStdString());
        QCOMPARE(QString::fromStdString(td.format()), QString("torch legacy"));
        const Node* w = td.root().child("w");
        QVERIFY(w && w->isTensor());
        const QJsonObject facts = expected_["w"].toObject();
        QCOMPARE(w->leaf().dtype, DType::Float32);
        QCOMPARE(w->leaf().shape, (std::vector<std::int64_t>{2, 3}));
        QCOMPARE(QString::fromStdString(leafSha256(*w)), facts["sha256"].toString());
        QCOMPARE(td.root().child("f")->value(), Value(0.1));
        QCOMPARE(td.root().child("s")->value(), Value("text"));
        const QJsonObject ints = expected_["ints"].toObject();
        for (const QString& key : ints.keys())
            QCOMPARE(
                QString::fromStdString(td.root().child(key.toStdString())->value().integerText()),
                ints[key].toString());
    }

    void bigIntsStayIntsFromACheckpoint_data() {
        QTest::addColumn<bool>("archive");
        QTest::newRow("directory") << false;
        QTest::newRow("archive") << true;
    }
    void bigIntsStayIntsFromACheckpoint() {
        QFETCH(bool, archive);
        const TensorDict td = load((dir_.path() + "/bigints.pt").toStdString());
        const QJsonObject ints = expected_["ints"].toObject();
        for (const QString& key : ints.keys()) {
            const Value v = td.root().child(key.toStdString())->value();
            QVERIFY(v.isInteger());
            QCOMPARE(QString::fromStdString(v.integerText()), ints[key].toString());
        }
        const QString saved = dir_.path() + (archive ? "/bigints.tdz" : "/bigints_dir");
        SaveOptions options;
        options.archive = archive;
        save(td, saved.toStdString(), options);
        // Python's json reads every value back as an int, equal to the source.
        const QString read = archive ? "zipfile.ZipFile(p).read(k + '/meta.json')"
                                     : "open(os.path.join(p, k, 'meta.json'), 'rb').read()";
        const QString code = QString(
                                 "import json, os, zipfile\n"
                                 "p = %1\n"
                                 "out = {}\n"
                                 "for k in %2:\n"
                                 "    d = json.loads(%3)['data']\n"
                                 "    assert type(d) is int, (k, type(d))\n"
                                 "    out[k] = str(d)\n"
                                 "print(json.dumps(out))\n")
                                 .arg(QString("'%1'").arg(saved), pythonList(ints.keys()), read);
        QCOMPARE(QJsonDocument::fromJson(python(code).toUtf8()).object(), ints);
        // And read back by us, exactly.
        const TensorDict back = load(saved.toStdString());
        for (const QString& key : ints.keys())
            QCOMPARE(back.root().child(key.toStdString())->value(),
                     td.root().child(key.toStdString())->value());
    }

    void bigIntsStayIntsInAPickleSidecar() {
        // A value JSON cannot hold (bytes beside a big int) goes to
        // other.pickle, where the int is pickle's own long; Python reads it.
        TensorDict td = TensorDict::create();
        const Value mixed(Value::Object{{"b", Value(Value::Bytes{std::string("\x00\x01", 2)})},
                                        {"i", Value::integer("1267650600228229401496703205376")},
                                        {"n", Value::integer("-18446744073709551616")}});
        td.mutableRoot().addNonTensor("mixed", mixed);
        const QString saved = dir_.path() + "/sidecar_dir";
        save(td, saved.toStdString());
        QVERIFY(QFile::exists(saved + "/mixed/other.pickle"));
        const QString code = QString(
                                 "import pickle\n"
                                 "d = pickle.load(open('%1/mixed/other.pickle', 'rb'))['data']\n"
                                 "assert type(d['i']) is int and d['i'] == 2**100, d\n"
                                 "assert d['n'] == -(2**64) and d['b'] == b'\\x00\\x01', d\n"
                                 "print('ok')\n")
                                 .arg(saved);
        QCOMPARE(python(code), QString("ok"));
        QCOMPARE(load(saved.toStdString()).root().child("mixed")->value(), mixed);
    }

    void bigIntsStayIntsFromATensordict() {
        // NonTensorData as Python's tensordict writes it (FORMAT.md 2.4): the
        // int inline in meta.json, as json.dumps writes any int.
        const QString src = dir_.path() + "/td_ints";
        const QStringList values = {"18446744073709551615", "1267650600228229401496703205376",
                                    "-18446744073709551616", "4611686018427387904"};
        QVERIFY(QDir().mkpath(src));
        QStringList entries;
        for (int i = 0; i < values.size(); ++i) {
            const QString key = QString("v%1").arg(i);
            QVERIFY(QDir().mkpath(src + "/" + key));
            writeFile(
                src + "/" + key + "/meta.json",
                ("{\"_type\": \"<class 'tensordict.tensorclass.NonTensorData'>\", \"data\": " +
                 values[i] + ", \"_is_non_tensor\": true, \"_metadata\": null}")
                    .toUtf8());
            entries << QString("\"%1\": {\"type\": \"NonTensorData\"}").arg(key);
        }
        writeFile(src + "/meta.json", ("{" + entries.join(", ") +
                                       ", \"shape\": [], \"device\": \"cpu\", \"_type\": \"<class "
                                       "'tensordict._td.TensorDict'>\"}")
                                          .toUtf8());
        const TensorDict td = load(src.toStdString());
        for (int i = 0; i < values.size(); ++i)
            QCOMPARE(
                QString::fromStdString(
                    td.root().child(QString("v%1").arg(i).toStdString())->value().integerText()),
                values[i]);
        const QString copy = dir_.path() + "/td_ints.tdz";
        save(td, copy.toStdString());
        const QString code =
            QString(
                "import json, zipfile\n"
                "z = zipfile.ZipFile('%1')\n"
                "print(' '.join(str(json.loads(z.read('v%d/meta.json' % i))['data'])"
                " for i in range(%2)))\n")
                .arg(copy)
                .arg(values.size());
        QCOMPARE(python(code), values.join(' '));
    }

    void keysThatWouldMergeAreRefused_data() {
        QTest::addColumn<bool>("archive");
        QTest::newRow("directory") << false;
        QTest::newRow("archive") << true;
    }
    void keysThatWouldMergeAreRefused() {
        QFETCH(bool, archive);
        const TensorDict td = load((dir_.path() + "/int_str_keys.pt").toStdString());
        QCOMPARE(td.root().children().size(), std::size_t(2));
        QCOMPARE(td.root().children()[0]->keyRepr(), std::string("0"));
        QCOMPARE(td.root().children()[1]->keyRepr(), std::string("'0'"));
        const QString target = dir_.path() + (archive ? "/merged.tdz" : "/merged");
        SaveOptions options;
        options.archive = archive;
        const auto failure =
            testsupport::failureOf([&] { save(td, target.toStdString(), options); });
        QVERIFY2(failure, "two keys that print alike were saved as one");
        QCOMPARE(failure->kind, ErrorKind::Invalid);
        const QString reason = QString::fromStdString(failure->reason);
        QVERIFY2(reason.contains("the keys 0 and '0'") && reason.contains("0.memmap"),
                 qPrintable(reason));
        QVERIFY2(!QFileInfo::exists(target), "something was written");
        // The refusal is known before a save: the dialog says it ahead.
        QVERIFY(saveRefusal(td, options));
        // Either key alone saves.
        QVERIFY(!saveRefusal(select(td, {{"0"}}), options));
    }

    void aQuantizedTensorIsNotReadAndSpoilsNothingElse() {
        const TensorDict td = load((dir_.path() + "/quantized.pt").toStdString());
        const Node* plain = td.root().child("plain");
        QVERIFY(plain && plain->isTensor());
        QCOMPARE(QString::fromStdString(leafSha256(*plain)),
                 expected_["plain"].toObject()["sha256"].toString());
        // The quantized tensor is one node under its own key, said to be
        // not read here (not damaged), with its dtype, shape and quantizer.
        const Node* q = td.root().child("q");
        const std::vector<const Node*> errors = td.errors();
        QCOMPARE(errors.size(), std::size_t(1));
        QCOMPARE(errors.front(), q);
        QCOMPARE(q->failure()->kind, ErrorKind::NotReadHere);
        const QString reason = QString::fromStdString(q->failure()->reason);
        QVERIFY2(reason.contains("torch.quint8, shape [3], per-tensor affine: scale 0.1, zero "
                                 "point 0"),
                 qPrintable(reason));
        // --skip-objects leaves it out by name; the rest saves.
        SaveOptions options;
        QVERIFY(saveRefusal(td, options));
        options.skipObjects = true;
        std::vector<std::string> skipped;
        options.skipped = [&](const std::string& key) { skipped.push_back(key); };
        const TensorDict saved = save(td, (dir_.path() + "/quantized.tdz").toStdString(), options);
        QCOMPARE(skipped, std::vector<std::string>{"q"});
        QVERIFY(saved.root().child("plain") && !saved.root().child("q"));
        // To safetensors, which holds tensors only, it is left out by name
        // as values are.
        SaveOptions safetensors;
        safetensors.format = SaveFormat::Safetensors;
        QVERIFY(!saveRefusal(td, safetensors));
        skipped.clear();
        safetensors.skipped = options.skipped;
        const TensorDict exported =
            save(td, (dir_.path() + "/quantized.safetensors").toStdString(), safetensors);
        QCOMPARE(skipped, std::vector<std::string>{"q"});
        QVERIFY(exported.root().child("plain") && !exported.root().child("q"));
    }

    void floatsAreWrittenAsPythonsRepr() {
        const std::vector<double> values = {0.1,  1e300, 5e-324,      1.0 / 3,
                                            -0.0, 1e16,  123456789.0, 2.5e-5};
        Value::List list;
        for (double v : values)
            list.emplace_back(v);
        const QString ours = QString::fromStdString(toJson(Value(list)));
        const QString theirs = python(
            "import json; print(json.dumps([0.1, 1e300, 5e-324, 1/3, -0.0, 1e16, "
            "123456789.0, 2.5e-5]))");
        QCOMPARE(ours, theirs);
        QCOMPARE(parseJson(ours.toStdString(), "test"), Value(list));
        // Strict JSON for machine-readable output: no bare NaN or Infinity.
        const Value special(Value::List{Value(std::nan("")), Value(HUGE_VAL), Value(-HUGE_VAL)});
        QCOMPARE(QString::fromStdString(toStrictJson(special, JsonStyle::Compact)),
                 QString("[\"nan\",\"inf\",\"-inf\"]"));
    }

private:
    static QString pythonList(const QStringList& keys) {
        QStringList quoted;
        for (const QString& k : keys)
            quoted << "'" + k + "'";
        return "[" + quoted.join(", ") + "]";
    }

    QTemporaryDir dir_;
    QJsonObject expected_;
};

QTEST_GUILESS_MAIN(ExactValuesTest)
#include "tst_exact_values.moc"
