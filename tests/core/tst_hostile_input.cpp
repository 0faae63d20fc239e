// Hostile input, and input that changes while it is read: each case once
// crashed the program, lost data silently or leaked a file. Each now gives
// an error (or a marked node) that names the file and the reason.

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include "tensordict/report.h"
#include "tensordict/save.h"
#include "tensordict/tensordict.h"
#include "testsupport.h"

using namespace tensordict;
using testsupport::writeFile;

namespace {

const char* const kTensorDictType = "<class 'tensordict._td.TensorDict'>";

QString errorOf(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return QString::fromStdString(e.what());
    }
    return {};
}

}  // namespace

class HostileInputTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QVERIFY(scratch_.isValid()); }

    void deeplyNestedPickleIsNotDecoded() {
        // A million TUPLE1 opcodes in 1 MB: a value a million levels deep,
        // whose destruction alone used to overflow the stack.
        const QString dir = scratch_.path() + "/deep-pickle";
        testsupport::copyTree(testsupport::fixturePath("nontensor_pickle"), dir);
        QByteArray pickle("\x80\x04]", 3);
        pickle += QByteArray(1000000, '\x85');
        pickle += '.';
        writeFile(dir + "/blob/other.pickle", pickle);
        const TensorDict td = load(dir.toStdString());
        const Node* blob = td.root().child("blob");
        QVERIFY(blob);
        QCOMPARE(blob->kind, NodeKind::NonTensorData);
        QVERIFY(blob->pickleOpaque);  // shown as an opaque pickle, never unpickled
    }

    void tensorclassChainCountsTowardsTheDepthLimit() {
        // 270 tensorclasses, each the only field of the one above it (deeper
        // paths would pass PATH_MAX).
        const QString root = scratch_.path() + "/tc-chain";
        writeFile(root + "/meta.json",
                  QByteArray(R"({"c": {"type": "TC"}, "shape": [], "device": "cpu", "_type": ")") +
                      kTensorDictType + "\"}");
        QString dir = root + "/c";
        for (int i = 0; i < 270; ++i) {
            writeFile(dir + "/meta.json", R"({"_type": "<class '__main__.TC'>"})");
            writeFile(
                dir + "/_tensordict/meta.json",
                QByteArray(R"({"c": {"type": "TC"}, "shape": [], "device": "cpu", "_type": ")") +
                    kTensorDictType + "\"}");
            dir += "/_tensordict/c";
        }
        writeFile(dir + "/meta.json", QByteArray(R"({"shape": [], "device": "cpu", "_type": ")") +
                                          kTensorDictType + "\"}");
        const QString message = errorOf([&] { load(root.toStdString()); });
        QVERIFY2(message.contains("nested deeper than 256 levels"), qPrintable(message));
        QVERIFY2(message.contains("tc-chain/c/_tensordict/c"), qPrintable(message));
    }

    void lazyStackMemberWithoutMetadataIsAnError() {
        const QString dir = scratch_.path() + "/stack-hole";
        testsupport::copyTree(testsupport::fixturePath("lazy_stack"), dir);
        testsupport::copyTree(dir + "/ls/1", dir + "/ls/2");  // three members: 0, 1, 2
        QVERIFY(QFile::remove(dir + "/ls/1/meta.json"));

        const QString message = errorOf([&] { load(dir.toStdString()); });
        QVERIFY2(message.contains("stack-hole/ls/1/meta.json") && message.contains("missing"),
                 qPrintable(message));

        LoadOptions tolerant;
        tolerant.throwOnError = false;
        const TensorDict td = load(dir.toStdString(), tolerant);
        const Node* stack = td.root().child("ls");
        QVERIFY(stack);
        QCOMPARE(stack->children.size(), std::size_t(3));  // member 2 is not dropped
        QCOMPARE(stack->children[1]->kind, NodeKind::Error);
        QCOMPARE(stack->children[2]->kind, NodeKind::TensorDict);
        QCOMPARE(td.errors().size(), std::size_t(1));
    }

    void symlinkOutOfTheDatasetIsMarkedAndNotExported() {
        const QString dir = scratch_.path() + "/linked/data";
        testsupport::copyTree(testsupport::fixturePath("simple"), dir);
        const QString secret = scratch_.path() + "/linked/secret.bin";
        writeFile(secret, QByteArray("my private bytes", 12));  // as long as a: 3 float32
        QVERIFY(QFile::remove(dir + "/a.memmap"));
        QVERIFY(QFile::link("../secret.bin", dir + "/a.memmap"));
        // A link that stays inside the dataset is fine.
        QVERIFY(QFile::rename(dir + "/b/c.memmap", dir + "/c-data"));
        QVERIFY(QFile::link("../c-data", dir + "/b/c.memmap"));

        const TensorDict td = load(dir.toStdString());
        const Node* a = td.root().child("a");
        QCOMPARE(QString::fromStdString(a->storage.outsideTarget),
                 QFileInfo(secret).canonicalFilePath());
        QVERIFY(td.root().find({"b", "c"})->storage.outsideTarget.empty());

        SaveOptions options;
        options.copyExisting = true;
        for (const QString& target : {scratch_.path() + "/out.tdz", scratch_.path() + "/out-dir"}) {
            const QString message = errorOf([&] { save(td, target.toStdString(), options); });
            QVERIFY2(message.startsWith("a: ") &&
                         message.contains(QFileInfo(secret).canonicalFilePath()) &&
                         message.contains("outside the dataset"),
                     qPrintable(message));
            QVERIFY(!QFileInfo::exists(target));
        }
        options.allowOutsideLinks = true;
        const TensorDict saved =
            save(td, (scratch_.path() + "/allowed.tdz").toStdString(), options);
        QCOMPARE(
            QByteArray(reinterpret_cast<const char*>(saved.root().child("a")->bytes().data.get()),
                       12),
            QByteArray("my private b"));
    }

private:
    QTemporaryDir scratch_;
};

QTEST_GUILESS_MAIN(HostileInputTest)
#include "tst_hostile_input.moc"
