// Tensordicts on a web server (core/src/sources/http_transport.h), read from a real
// nginx started by the test: every fixture reads remotely as it does
// locally, --info of a 1 GiB archive fetches little, and every fault gives
// a clear error naming the URL (a file changed on the server, no range
// support, 404, 503, redirects, an untrusted certificate; from the tests'
// own fault server: 429 then the file, a body cut short, no validator).

#include <fcntl.h>
#include <unistd.h>

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <thread>

#include "fault_server.h"
#include "nginx_server.h"
#include "tensordict/cancel.h"
#include "tensordict/compare.h"
#include "tensordict/error.h"
#include "tensordict/http.h"
#include "tensordict/keys.h"
#include "tensordict/report.h"
#include "tensordict/save.h"
#include "tensordict/tensordict.h"
#include "testsupport.h"

using namespace tensordict;
using testsupport::errorOf;
using testsupport::NginxServer;

class TestRemote : public QObject {
    Q_OBJECT

private:
    QTemporaryDir served_;
    std::unique_ptr<NginxServer> server_;
    std::unique_ptr<testsupport::FaultServer> faults_;

    QString url(const QString& path) const { return server_->url() + "/" + path; }
    QString faultUrl(const QString& path) const { return faults_->url() + "/" + path; }

    // Loads `location` reached as `transport` says.
    static TensorDict loadWith(const std::string& location, const TransportOptions& transport) {
        LoadOptions options;
        options.store.transport = transport;
        return load(location, options);
    }
    // The kind of the tensordict::Error `f` throws, -1 for none.
    static int errorKindOf(const std::function<void()>& f) {
        const auto failure = testsupport::failureOf(f);
        return failure ? int(failure->kind) : -1;
    }

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(served_.isValid());
        QVERIFY(QFile::link(testsupport::fixturesDir(), served_.path() + "/tensordict-0.14"));
        QVERIFY(QFile::link(testsupport::torchFixturesDir(), served_.path() + "/pytorch-1.13"));
        const QString root = served_.path();
        server_ = std::make_unique<NginxServer>(root, QString(R"(
        location /norange/ { alias %1/; max_ranges 0; }
        location /down/ { return 503; }
        location /hop1/ { rewrite ^/hop1/(.*)$ /hop2/$1 redirect; }
        location /hop2/ { rewrite ^/hop2/(.*)$ /$1 redirect; }
        location /loop/ { rewrite ^/loop/(.*)$ /loop/$1 redirect; }
        location /private/ {
            alias %1/;
            if ($http_authorization != "Bearer t0ken") { return 401; }
            if ($http_x_team != "vision") { return 401; }
            if ($http_x_empty != "") { return 400; }
        }
)")
                                                          .arg(root));
        QVERIFY2(server_->isRunning(), qPrintable(server_->error()));
        testsupport::writeRampArchive(root + "/ranged.tdz", 1 << 20,
                                      3);  // over one block of reading
        faults_ = std::make_unique<testsupport::FaultServer>(root);
        QVERIFY(faults_->isRunning());
    }

    void everyFixtureReadsAsLocally_data() {
        QTest::addColumn<QString>("path");
        for (const QString& name : testsupport::fixtureNames()) {
            const bool archive = QFileInfo::exists(testsupport::fixturePath(name + ".tdz"));
            QTest::newRow(qPrintable(name)) << "tensordict-0.14/" + name + (archive ? ".tdz" : "");
        }
        for (const QString& name :
             QDir(testsupport::torchFixturesDir())
                 .entryList({"*.pt", "*.pth", "*.npy", "*.npz", "*.safetensors"}, QDir::Files))
            QTest::newRow(qPrintable(name)) << "pytorch-1.13/" + name;
    }
    void everyFixtureReadsAsLocally() {
        // Directories through their meta.json files (no listing), archives
        // from their tail, checkpoints and numpy files by their readers:
        // every key, value and byte as the local read has them.
        QFETCH(QString, path);
        const QString local = served_.path() + "/" + path;
        const TensorDict expected = load(local.toStdString());
        const TensorDict remote = load(url(path).toStdString());
        const CompareResult result = compare(expected, remote);
        QStringList differences;
        for (const KeyComparison& k : result.keys)
            if (k.status != KeyStatus::Same)
                differences << QString::fromStdString(formatKeyPath(k.key) + ": " + k.error);
        QVERIFY2(result.equal(), qPrintable(differences.join("; ")));
        QCOMPARE(testsupport::countNodes(remote.root()), testsupport::countNodes(expected.root()));
    }

    void infoOfALargeArchiveFetchesLittle() {
        // 1 GiB stored: the tree comes from the tail (end records and
        // central directory) and the head the format is told by.
        const QString dir = served_.path() + "/big-dir";
        QVERIFY(QDir().mkpath(dir));
        {
            QFile meta(dir + "/meta.json");
            QVERIFY(meta.open(QIODevice::WriteOnly));
            meta.write(R"({"x": {"device": "cpu", "shape": [1073741824], "dtype": "torch.uint8", )"
                       R"("is_nested": false}, "shape": [], "device": "cpu", )"
                       R"("_type": "<class 'tensordict._td.TensorDict'>"})");
            QFile leaf(dir + "/x.memmap");
            QVERIFY(leaf.open(QIODevice::WriteOnly));
            QVERIFY(leaf.resize(qint64(1) << 30));  // sparse
        }
        SaveOptions options;
        options.archive = true;
        save(load(dir.toStdString()), (served_.path() + "/big.tdz").toStdString(), options);
        QDir(dir).removeRecursively();
        const int before = int(server_->requests().size());
        const HttpCounters counted = httpCounters();
        const TensorDict td = load(url("big.tdz").toStdString());
        QCOMPARE(testsupport::countNodes(td.root()), std::size_t(2));
        QCOMPARE(td.root().child("x")->leaf().nbytes, std::uint64_t(1) << 30);
        // nginx logs a request once it has answered it: wait for the log to
        // hold every request made (the deadline only bounds a broken run).
        const std::uint64_t made = httpCounters().requests - counted.requests;
        QTRY_VERIFY_WITH_TIMEOUT(std::uint64_t(server_->requests().size() - before) >= made, 60000);
        const QStringList requests = server_->requests().mid(before);
        qint64 bytes = 0;
        for (const QString& line : requests)
            bytes += line.section(' ', 1, 1).toLongLong();
        qInfo("--info of a 1 GiB archive: %d requests, %lld bytes", int(requests.size()), bytes);
        QVERIFY2(requests.size() <= 3, qPrintable(requests.join('\n')));
        QVERIFY(bytes < (1 << 20));
        QCOMPARE(httpCounters().requests - counted.requests, std::uint64_t(requests.size()));
        // Its sha256 streams the leaf range by range (a source that cannot
        // map): the local digest, in memory far below the leaf's size.
        const long before_kib = testsupport::residentKiB();
        const std::string digest = leafSha256(*td.root().child("x"));
        const long grown_mib = (testsupport::residentKiB() - before_kib) / 1024;
        qInfo("sha256 of the 1 GiB leaf over HTTP: resident memory +%ld MiB", grown_mib);
        QCOMPARE(digest,
                 leafSha256(*load((served_.path() + "/big.tdz").toStdString()).root().child("x")));
        QVERIFY2(grown_mib < 400, qPrintable(QString::number(grown_mib)));
        QFile::remove(served_.path() + "/big.tdz");
    }

    void aFileChangedOnTheServerIsAnError() {
        // A training job rewrites the archive while it is open remotely: the
        // next read carries If-Range, gets the new file's 200, and says so;
        // no bytes of two versions.
        const QString path = served_.path() + "/changing.tdz";
        testsupport::writeRampArchive(path, 1 << 20, 1);
        const TensorDict td = load(url("changing.tdz").toStdString());
        QVERIFY(QFile::remove(path));
        testsupport::writeRampArchive(path, 1 << 20, 2);
        QFile touched(path);  // a new modification time: nginx's ETag changes
        QVERIFY(touched.open(QIODevice::ReadWrite));
        QVERIFY(touched.setFileTime(QDateTime::currentDateTime().addSecs(60),
                                    QFileDevice::FileModificationTime));
        touched.close();
        const auto failure = testsupport::failureOf([&] { td.root().child("x")->bytes(); });
        QVERIFY(failure);
        QCOMPARE(failure->kind, ErrorKind::Changed);
        QVERIFY2(failure->where == url("changing.tdz").toStdString() &&
                     QString::fromStdString(failure->reason).contains("new version on the server"),
                 failure->text().c_str());
        // Opened again, it reads the new version.
        const TensorDict again = load(url("changing.tdz").toStdString());
        QCOMPARE(static_cast<char>(again.root().child("x")->bytes().data.get()[0]), char(2));
    }

    void faultsAreClearErrors_data() {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("expected");
        QTest::newRow("404") << "missing.tdz"
                             << "HTTP 404 Not Found (nor a folder with a meta.json)";
        QTest::newRow("no range support") << "norange/ranged.tdz"
                                          << "does not support range requests";
        QTest::newRow("503 for ever") << "down/x.tdz"
                                      << "HTTP 503 (after 4 tries)";
        QTest::newRow("a redirect loop") << "loop/x.tdz"
                                         << "more than 8 redirects";
    }
    void faultsAreClearErrors() {
        QFETCH(QString, path);
        QFETCH(QString, expected);
        const QString error = errorOf([&] { load(url(path).toStdString()); });
        QVERIFY2(error.contains(expected) && error.contains(url(path)), qPrintable(error));
    }

    void tooManyRequestsIsRetried() {
        // 429 to the first two requests, then the file: read as if nothing happened.
        const TensorDict td = load(faultUrl("flaky/2/ranged.tdz").toStdString());
        QVERIFY(compare(td, load((served_.path() + "/ranged.tdz").toStdString())).equal());
    }

    void aBodyCutShortIsAnError() {
        // Every range after the first ends halfway: tried again, then an
        // error naming the URL; never a short read taken for data.
        const QString where = faultUrl("cut/ranged.tdz");
        const QString error =
            errorOf([&] { load(where.toStdString()).root().child("x")->bytes(); });
        QVERIFY2(
            error.contains(where) && error.contains("partial") && error.contains("after 4 tries"),
            qPrintable(error));
    }

    void aServerWithoutValidatorsStillReads() {
        const TensorDict td = load(faultUrl("noetag/ranged.tdz").toStdString());
        QVERIFY(compare(td, load((served_.path() + "/ranged.tdz").toStdString())).equal());
    }

    void aCancelledReadStopsMidTransfer() {
        // The server answers a few bytes, then nothing: the read is under way
        // when it is cancelled, and ends with Cancelled, not a 30 s stall.
        CancelToken token;
        std::exception_ptr thrown;
        std::thread reader([&] {
            const CancelScope scope(&token);
            try {
                load(faultUrl("stall/ranged.tdz").toStdString());
            } catch (...) {
                thrown = std::current_exception();
            }
        });
        const bool stalled = faults_->waitForStall();
        token.cancel();
        reader.join();
        QVERIFY(stalled);
        QVERIFY(thrown);
        try {
            std::rethrow_exception(thrown);
        } catch (const Cancelled& e) {
            QVERIFY2(QString(e.what()).contains("stall/ranged.tdz"), e.what());
        } catch (const std::exception& e) {
            QFAIL(qPrintable(QString("not cancelled: ") + e.what()));
        }
    }

    void aStalledServerIsATimeout() {
        // No byte for the stall time (1 s here): dropped, tried again, then
        // an error naming the URL.
        const QString where = faultUrl("stall/ranged.tdz");
        TransportOptions quick;
        quick.stallSeconds = 1;
        const QString error = errorOf([&] { loadWith(where.toStdString(), quick); });
        QVERIFY2(error.contains(where) && error.contains("no answer for 1 s (after 4 tries)"),
                 qPrintable(error));
    }

    void smallFilesNeedNoRanges() {
        // A file within the first block comes whole in the first answer:
        // a server without range support serves it all the same.
        const TensorDict td = load(url("norange/tensordict-0.14/archive_simple.tdz").toStdString());
        QVERIFY(compare(td, load(testsupport::fixturePath("archive_simple.tdz").toStdString()))
                    .equal());
    }

    void redirectsAreFollowed() {
        const TensorDict td = load(url("hop1/tensordict-0.14/archive_simple.tdz").toStdString());
        QVERIFY(compare(td, load(testsupport::fixturePath("archive_simple.tdz").toStdString()))
                    .equal());
    }

    void credentialsComeFromTheOptions() {
        // A server that wants a bearer token and a header of its own: each
        // refusal is a denial, and with both given the file reads.
        const std::string archive = url("private/tensordict-0.14/archive_simple.tdz").toStdString();
        const auto kindOf = [&](const TransportOptions& transport) {
            return errorKindOf([&] { loadWith(archive, transport); });
        };
        TransportOptions token;
        token.bearerToken = "t0ken";
        TransportOptions both = token;
        both.headers = parseHeaderLines("\n  X-Team:   vision \r\nX-Empty:\n", "the test");
        QCOMPARE(kindOf({}), int(ErrorKind::Denied));     // 401: no token
        QCOMPARE(kindOf(token), int(ErrorKind::Denied));  // 401: no X-Team
        QCOMPARE(kindOf(both), -1);
        QVERIFY(compare(loadWith(archive, both),
                        load(testsupport::fixturePath("archive_simple.tdz").toStdString()))
                    .equal());
        // Two loads of one program, each with its own credentials, the
        // second while the first is still open.
        const TensorDict first = loadWith(archive, both);
        QCOMPARE(kindOf(token), int(ErrorKind::Denied));
        QCOMPARE(kindOf(both), -1);
        QVERIFY(first.root().isCollection());
    }

    void headersThatCannotBeSentAreRefusedBeforeAnyRequest() {
        // A line that is not a header names its origin and line.
        const QString lines =
            errorOf([] { parseHeaderLines("X-Team: vision\nX-Team vision", "TEAM_HEADERS"); });
        QVERIFY2(lines.contains("TEAM_HEADERS") && lines.contains("line 2"), qPrintable(lines));
        QCOMPARE(errorKindOf([] { parseHeaderLines("X-Team: vision\rX-Injected: 1", "h"); }),
                 int(ErrorKind::Invalid));  // no header smuggled in
        // Headers given in code are held to the same rule by the transport.
        const std::string archive = url("private/tensordict-0.14/archive_simple.tdz").toStdString();
        const int before = server_->requests().size();
        for (const auto& header : {std::pair<std::string, std::string>{"X-Team", "a\r\nX-In: 1"},
                                   {"X Team", "vision"},
                                   {"", "vision"}}) {
            TransportOptions bad;
            bad.headers = {header};
            QCOMPARE(errorKindOf([&] { loadWith(archive, bad); }), int(ErrorKind::Invalid));
            const QString error = errorOf([&] { loadWith(archive, bad); });
            QVERIFY2(error.contains(QString::fromStdString(archive)), qPrintable(error));
        }
        TransportOptions badToken;
        badToken.bearerToken = "t0ken\r\nX-Injected: 1";
        QCOMPARE(errorKindOf([&] { loadWith(archive, badToken); }), int(ErrorKind::Invalid));
        QCOMPARE(server_->requests().size(), before);
    }

    void httpsTrustsOnlyWhatItShould() {
        // A self-signed certificate: refused with the system's CAs, read
        // with the test's CA given, and with certificates not checked.
        NginxServer tls(served_.path(), {}, true);
        QVERIFY2(tls.isRunning(), qPrintable(tls.error()));
        const std::string archive =
            (tls.url() + "/tensordict-0.14/archive_simple.tdz").toStdString();
        const QString refused = errorOf([&] { load(archive); });
        QVERIFY2(refused.contains("not trusted"), qPrintable(refused));
        TransportOptions withCa;
        withCa.caFile = QFile::encodeName(tls.caFile()).toStdString();
        const QString trusted = errorOf([&] { loadWith(archive, withCa); });
        QVERIFY2(trusted.isEmpty(), qPrintable(trusted));
        NginxServer other(served_.path(), {}, true);  // a certificate of its own
        QVERIFY2(other.isRunning(), qPrintable(other.error()));
        TransportOptions otherCas;  // a CA file, but not the one that signed the server's
        otherCas.caFile = QFile::encodeName(other.caFile()).toStdString();
        QCOMPARE(errorKindOf([&] { loadWith(archive, otherCas); }), int(ErrorKind::Untrusted));
        TransportOptions unchecked;
        unchecked.verifyCertificates = false;
        const QString insecure = errorOf([&] { loadWith(archive, unchecked); });
        QVERIFY2(insecure.isEmpty(), qPrintable(insecure));
        // The options were the loads' own: a load without them is refused again.
        QCOMPARE(errorKindOf([&] { load(archive); }), int(ErrorKind::Untrusted));
    }
};

QTEST_GUILESS_MAIN(TestRemote)
#include "tst_remote.moc"
