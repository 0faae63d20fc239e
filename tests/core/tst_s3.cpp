// s3:// locations. Signing: every request tdstudio would send is built
// and signed by our code and by botocore (Debian's python3-botocore, a real
// S3 client, tests/support/botocore_sign.py) from the same inputs; URLs and
// headers must be byte-identical, including AWS's published GetObject
// example (botocore's package ships no SigV4 test suite). Configuration:
// credentials, region, endpoint and addressing as the AWS tools find them.
// Protocol: s3rver (an S3 server from npm) started here, objects put by
// botocore; every fixture and multi-file format reads through s3:// as it
// does locally; faults (a missing key or bucket, an unknown key id, a
// replaced object) are named errors. s3rver does not check V4 signatures,
// so a wrong secret and S3's other refusals (SignatureDoesNotMatch,
// ExpiredToken) and SlowDown come from the tests' fault server, which
// answers as S3 does.

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>
#include <cstdlib>
#include <ctime>
#include <memory>

#include "fault_server.h"
#include "s3_server.h"
#include "sources/s3_config.h"
#include "sources/s3_signing.h"
#include "tensordict/compare.h"
#include "tensordict/error.h"
#include "tensordict/http.h"
#include "tensordict/keys.h"
#include "tensordict/report.h"
#include "tensordict/s3.h"
#include "tensordict/save.h"
#include "tensordict/tensordict.h"
#include "testsupport.h"

using namespace tensordict;

namespace {

struct Case {
    QString operation = "get_object";
    QString bucket, key, range, prefix, delimiter, token;
    QString accessKey = "AKIDEXAMPLE", secretKey = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
    QString sessionToken, region = "us-east-1", endpoint, addressing = "auto";
    QString time = "20261204T213000Z";

    QJsonObject json() const {
        return {{"operation", operation},
                {"bucket", bucket},
                {"key", key},
                {"range", range},
                {"prefix", prefix},
                {"delimiter", delimiter},
                {"token", token},
                {"access_key", accessKey},
                {"secret_key", secretKey},
                {"session_token", sessionToken},
                {"region", region},
                {"endpoint", endpoint},
                {"addressing", addressing},
                {"time", time}};
    }
    s3::Config config() const {
        s3::Config c;
        c.credentials = {accessKey.toStdString(), secretKey.toStdString(),
                         sessionToken.toStdString()};
        c.region = region.toStdString();
        c.endpoint = endpoint.toStdString();
        c.pathStyle = addressing == "path" || (addressing == "auto" && !endpoint.isEmpty());
        return c;
    }
    std::time_t when() const {
        std::tm t{};
        strptime(time.toLatin1().constData(), "%Y%m%dT%H%M%SZ", &t);
        return timegm(&t);
    }
};

QList<Case> cases() {
    QList<Case> all;
    // AWS's own example (Signature Calculations for the Authorization
    // Header, "GET Object"): its published signature is checked below too.
    Case example;
    example.bucket = "examplebucket";
    example.key = "test.txt";
    example.range = "bytes=0-9";
    example.accessKey = "AKIAIOSFODNN7EXAMPLE";
    example.secretKey = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
    example.time = "20130524T000000Z";
    example.addressing = "virtual";
    all << example;

    Case spaces;  // spaces, '+', unicode and '/' in the key; a session token; path style
    spaces.bucket = "ckpt";
    spaces.key = QString::fromUtf8("runs/step 100/model+opt/\xc3\xa9t\xc3\xa9 \xe2\x9c\x93.tdz");
    spaces.range = "bytes=65536-131071";
    spaces.sessionToken = "FwoGZXIvYXdzEJr//////////wEaDN+token/with+plus=";
    spaces.region = "eu-west-1";
    spaces.endpoint = "http://127.0.0.1:4568";
    spaces.addressing = "path";
    all << spaces;

    Case reserved;  // every reserved character, and '%' itself
    reserved.bucket = "data-bucket";
    reserved.key = "a/~*'()!%25&$@=;:,?#[] x/meta.json";
    reserved.region = "us-west-2";
    reserved.addressing = "virtual";
    all << reserved;

    Case dotted;  // a bucket that cannot be a host name label: path style on AWS
    dotted.bucket = "my.dotted.bucket";
    dotted.key = "model-00001-of-00048.safetensors";
    dotted.range = "bytes=0-8";
    dotted.region = "ap-southeast-2";
    all << dotted;

    Case virtualAws;  // virtual-hosted, picked for a plain bucket on AWS
    virtualAws.bucket = "plain-bucket-1";
    virtualAws.key = "dcp/__0_0.distcp";
    virtualAws.range = "bytes=1048576-2097151";
    virtualAws.region = "eu-central-1";
    virtualAws.sessionToken = "IQoJb3JpZ2luX2VjEPz//////////token";
    all << virtualAws;

    Case endpointPath;  // an endpoint with a path of its own and a port
    endpointPath.bucket = "b";
    endpointPath.key = "x.npy";
    endpointPath.endpoint = "https://objects.example.org:9000/s3";
    endpointPath.addressing = "path";
    all << endpointPath;

    Case listing;  // a query string: ListObjectsV2 of a prefix, paged
    listing.operation = "list_objects_v2";
    listing.bucket = "ckpt";
    listing.prefix = QString::fromUtf8("runs/step 100/\xc3\xa9");
    listing.delimiter = "/";
    listing.token = "1a2b+3c/4d==";
    listing.region = "eu-west-1";
    listing.addressing = "virtual";
    all << listing;

    Case listingPath = listing;
    listingPath.endpoint = "http://127.0.0.1:4568";
    listingPath.addressing = "path";
    listingPath.token.clear();
    all << listingPath;
    return all;
}

s3::Headers ours(const Case& c, std::string* url) {
    const s3::Config config = c.config();
    s3::Request request;
    if (c.operation == "get_object") {
        const s3::Address a = s3::addressOf(config, {c.bucket.toStdString(), c.key.toStdString()});
        *url = a.url;
        request.host = a.host;
        request.path = a.path;
        if (!c.range.isEmpty())
            request.headers.emplace_back("Range", c.range.toStdString());
    } else {
        s3::Headers query{{"list-type", "2"}, {"encoding-type", "url"}};
        for (const auto& [name, value] : {std::pair<const char*, QString>{"prefix", c.prefix},
                                          {"delimiter", c.delimiter},
                                          {"continuation-token", c.token}})
            if (!value.isEmpty())
                query.emplace_back(name, value.toStdString());
        const s3::Address a = s3::listingAddressOf(config, c.bucket.toStdString(), query);
        *url = a.url;
        request.host = a.host;
        request.path = a.path;
        request.query = query;
    }
    s3::Headers headers = request.headers;
    for (auto& h : s3::signV4(request, config.credentials, config.region, c.when()))
        headers.push_back(std::move(h));
    return headers;
}

// A URL's query pairs in order, for comparing URLs whose pairs come in another order.
QString sortedUrl(const QString& url) {
    const int q = url.indexOf('?');
    if (q < 0)
        return url;
    QStringList pairs = url.mid(q + 1).split('&');
    pairs.sort();
    return url.left(q + 1) + pairs.join('&');
}

// An environment variable set (or, with a null value, unset) for a scope.
struct EnvVar {
    EnvVar(const char* name, const QByteArray& value) : name_(name) {
        if (const char* old = std::getenv(name))
            old_ = old;
        if (value.isNull())
            unsetenv(name);
        else
            setenv(name, value.constData(), 1);
    }
    ~EnvVar() {
        if (old_.isNull())
            unsetenv(name_);
        else
            setenv(name_, old_.constData(), 1);
    }
    const char* name_;
    QByteArray old_;
};

QString differences(const TensorDict& expected, const TensorDict& actual) {
    QStringList out;
    for (const KeyComparison& k : compare(expected, actual).keys)
        if (k.status != KeyStatus::Same)
            out << QString::fromStdString(formatKeyPath(k.key) + ": " + k.error);
    return out.join("; ");
}

constexpr const char* kBucket = "tdstudio-tests";

}  // namespace

class S3Test : public QObject {
    Q_OBJECT

private:
    QTemporaryDir scratch_;
    std::unique_ptr<testsupport::S3Server> server_;
    std::unique_ptr<testsupport::FaultServer> faults_;
    std::vector<std::unique_ptr<EnvVar>> env_;

    static QString s3(const QString& key) { return QString("s3://%1/%2").arg(kBucket, key); }

private Q_SLOTS:
    // s3rver with the fixtures and the generators' folders in it, and the
    // environment pointing at it as a user's would (credentials, endpoint, region).
    void initTestCase() {
        QVERIFY(scratch_.isValid());
        server_ = std::make_unique<testsupport::S3Server>(kBucket);
        QVERIFY2(server_->isRunning(), qPrintable(server_->error()));
        for (const auto& [name, value] :
             {std::pair<const char*, QByteArray>{"AWS_ACCESS_KEY_ID",
                                                 testsupport::S3Server::accessKey().toUtf8()},
              {"AWS_SECRET_ACCESS_KEY", testsupport::S3Server::secretKey().toUtf8()},
              {"AWS_SESSION_TOKEN", QByteArray()},
              {"AWS_PROFILE", QByteArray()},
              {"AWS_REGION", "us-east-1"},
              {"AWS_ENDPOINT_URL", server_->endpoint().toUtf8()},
              {"AWS_ENDPOINT_URL_S3", QByteArray()},
              {"AWS_SHARED_CREDENTIALS_FILE", scratch_.filePath("none").toUtf8()},
              {"AWS_CONFIG_FILE", scratch_.filePath("none").toUtf8()}})
            env_.push_back(std::make_unique<EnvVar>(name, value));

        QString error;
        QVERIFY2(server_->put(testsupport::fixturesDir(), "tensordict-0.14", &error),
                 qPrintable(error));
        QVERIFY2(server_->put(testsupport::torchFixturesDir(), "pytorch-1.13", &error),
                 qPrintable(error));
        QVERIFY2(testsupport::runPython(
                     {TDSTUDIO_TEST_SUPPORT_DIR "/make_sharded.py", scratch_.filePath("sharded")},
                     nullptr, &error),
                 qPrintable(error));
        QVERIFY2(testsupport::runPython(
                     {TDSTUDIO_TEST_SUPPORT_DIR "/make_dcp.py", scratch_.filePath("dcp"),
                      "--marker", scratch_.filePath("marker")},
                     nullptr, &error),
                 qPrintable(error));
        for (const QString folder : {"sharded", "dcp"})
            QVERIFY2(server_->put(scratch_.filePath(folder), folder, &error), qPrintable(error));
        testsupport::writeRampArchive(scratch_.filePath("big.tdz"), 4 << 20, 5);
        QVERIFY2(server_->put(scratch_.filePath("big.tdz"), "runs/step 100/big é.tdz", &error),
                 qPrintable(error));
        faults_ = std::make_unique<testsupport::FaultServer>(scratch_.path());
        QVERIFY(faults_->isRunning());
    }

    void everyFormatReadsAsLocally_data() {
        QTest::addColumn<QString>("local");
        QTest::addColumn<QString>("key");
        for (const QString& name : testsupport::fixtureNames()) {
            const bool archive = QFileInfo::exists(testsupport::fixturePath(name + ".tdz"));
            const QString file = name + (archive ? ".tdz" : "");
            QTest::newRow(qPrintable(name))
                << testsupport::fixturePath(file) << "tensordict-0.14/" + file;
        }
        for (const QString& name :
             QDir(testsupport::torchFixturesDir())
                 .entryList({"*.pt", "*.pth", "*.npy", "*.npz", "*.safetensors", "*.td"},
                            QDir::Files))
            QTest::newRow(qPrintable(name))
                << testsupport::torchFixturesDir() + "/" + name << "pytorch-1.13/" + name;
        // The multi-file formats, by the file that names the others.
        for (const QString index :
             {"st/model.safetensors.index.json", "bin/pytorch_model.bin.index.json"})
            QTest::newRow(qPrintable("sharded " + index))
                << scratch_.filePath("sharded/" + index) << "sharded/" + index;
        for (const QString name : {"one_rank", "torch21", "torch27", "four_ranks", "legacy_v23"})
            QTest::newRow(qPrintable("dcp " + name))
                << scratch_.filePath("dcp/" + name) << "dcp/" + name + "/.metadata";
        QTest::newRow("a key with spaces and unicode")
            << scratch_.filePath("big.tdz") << "runs/step 100/big é.tdz";
    }
    // Every key, value and byte as the local read has them; directories
    // through their meta.json files, never a listing.
    void everyFormatReadsAsLocally() {
        QFETCH(QString, local);
        QFETCH(QString, key);
        const TensorDict expected = load(local.toStdString());
        const HttpCounters before = httpCounters();
        const TensorDict remote = load(s3(key).toStdString());
        const QString different = differences(expected, remote);
        QVERIFY2(different.isEmpty(), qPrintable(different));
        QCOMPARE(testsupport::countNodes(remote.root()), testsupport::countNodes(expected.root()));
        const HttpCounters after = httpCounters();
        qInfo("%s: %llu requests, %llu bytes (tree and every leaf)", qPrintable(key),
              static_cast<unsigned long long>(after.requests - before.requests),
              static_cast<unsigned long long>(after.bytes - before.bytes));
    }

    // The 1 GiB archive of the HTTP tests: its tree from a few signed
    // requests of its tail and head; its sha256 streamed range by range,
    // equal to the local one, in memory far below the leaf's size.
    void aLargeArchiveFetchesLittle() {
        const QString dir = scratch_.filePath("big-dir");
        QVERIFY(QDir().mkpath(dir));
        testsupport::writeFile(
            dir + "/meta.json",
            R"({"x": {"device": "cpu", "shape": [1073741824], "dtype": "torch.uint8", )"
            R"("is_nested": false}, "shape": [], "device": "cpu", )"
            R"("_type": "<class 'tensordict._td.TensorDict'>"})");
        QFile leaf(dir + "/x.memmap");
        QVERIFY(leaf.open(QIODevice::WriteOnly));
        QVERIFY(leaf.resize(qint64(1) << 30));  // sparse
        leaf.close();
        const QString archive = scratch_.filePath("huge.tdz");
        SaveOptions options;
        options.archive = true;
        save(load(dir.toStdString()), archive.toStdString(), options);
        QDir(dir).removeRecursively();
        QString error;
        QVERIFY2(server_->put(archive, "huge.tdz", &error), qPrintable(error));

        const HttpCounters before = httpCounters();
        const TensorDict td = load(s3("huge.tdz").toStdString());
        const HttpCounters tree = httpCounters();
        qInfo("the tree of a 1 GiB archive over s3://: %llu requests, %llu bytes",
              static_cast<unsigned long long>(tree.requests - before.requests),
              static_cast<unsigned long long>(tree.bytes - before.bytes));
        QVERIFY(tree.requests - before.requests <= 3);
        QVERIFY(tree.bytes - before.bytes < (1u << 20));
        const long residentBefore = testsupport::residentKiB();
        const std::string digest = leafSha256(*td.root().child("x"));
        const long grownMiB = (testsupport::residentKiB() - residentBefore) / 1024;
        qInfo("its sha256 over s3://: %llu requests, resident memory +%ld MiB",
              static_cast<unsigned long long>(httpCounters().requests - tree.requests), grownMiB);
        QCOMPARE(digest, leafSha256(*load(archive.toStdString()).root().child("x")));
        QVERIFY2(grownMiB < 400, qPrintable(QString::number(grownMiB)));
        QFile::remove(archive);
    }

    // An empty object (a leaf of no elements): S3 answers a range of it with
    // 416 ("bytes */0"); it reads as the empty file it is. (From the fault
    // server, which answers as S3 does: s3rver sends a broken 206 instead.)
    void emptyObjectsOpen() {
        const QString dir = scratch_.filePath("with-empty");
        testsupport::writeFile(
            dir + "/meta.json",
            R"({"empty": {"device": "cpu", "shape": [0], "dtype": "torch.float32", )"
            R"("is_nested": false}, "one": {"device": "cpu", "shape": [2], "dtype": )"
            R"("torch.float32", "is_nested": false}, "shape": [], "device": "cpu", )"
            R"("_type": "<class 'tensordict._td.TensorDict'>"})");
        testsupport::writeFile(dir + "/empty.memmap", QByteArray());
        testsupport::writeFile(dir + "/one.memmap", QByteArray("\0\0\x80\x3f\0\0\0\x40", 8));
        const EnvVar endpoint("AWS_ENDPOINT_URL", faults_->url().toUtf8());
        const TensorDict local = load(dir.toStdString());
        const TensorDict remote = load("s3://ok/with-empty/");
        const QString different = differences(local, remote);
        QVERIFY2(different.isEmpty(), qPrintable(different));
        QCOMPARE(remote.root().child("empty")->leaf().nbytes, std::uint64_t(0));
    }

    // A key or bucket that is not there: not found, the location and S3's code named.
    void missingObjectsAreNamed() {
        for (const QString& location :
             {s3("tensordict-0.14/absent.tdz"), QString("s3://no-such-bucket-here/x.tdz")}) {
            const std::optional<Failure> f =
                testsupport::failureOf([&] { (void)load(location.toStdString()); });
            QVERIFY(f);
            QCOMPARE(f->kind, ErrorKind::NotFound);
            QVERIFY2(f->where == location.toStdString(), f->text().c_str());
            QVERIFY2(QString::fromStdString(f->reason).contains("NoSuch"), f->text().c_str());
        }
    }

    // An access key id the server does not know: denied, its code named,
    // the secret nowhere in the message.
    void anUnknownAccessKeyIsDenied() {
        const EnvVar key("AWS_ACCESS_KEY_ID", "NOSUCHKEYID");
        const EnvVar secret("AWS_SECRET_ACCESS_KEY", "a-secret-never-shown");
        const std::optional<Failure> f = testsupport::failureOf([&] {
            (void)load(s3("tensordict-0.14/" + testsupport::fixtureNames().front()).toStdString());
        });
        QVERIFY(f);
        QCOMPARE(f->kind, ErrorKind::Denied);
        QVERIFY2(QString::fromStdString(f->reason).contains("InvalidAccessKeyId"),
                 f->text().c_str());
        QVERIFY(!QString::fromStdString(f->text()).contains("a-secret-never-shown"));
    }

    // S3's refusals as S3 words them (from the fault server: s3rver checks no
    // V4 signature): each denied, its code named, no secret shown.
    void refusalsAreNamed_data() {
        QTest::addColumn<QString>("code");
        QTest::addColumn<int>("status");
        QTest::newRow("wrong secret") << "SignatureDoesNotMatch" << 403;
        QTest::newRow("expired token") << "ExpiredToken" << 400;
        QTest::newRow("access denied") << "AccessDenied" << 403;
    }
    void refusalsAreNamed() {
        QFETCH(QString, code);
        QFETCH(int, status);
        const EnvVar endpoint("AWS_ENDPOINT_URL", faults_->url().toUtf8());
        const EnvVar secret("AWS_SECRET_ACCESS_KEY", "wrong-secret-never-shown");
        const QString location = QString("s3://s3error/%1/%2/big.tdz").arg(code).arg(status);
        const std::optional<Failure> f =
            testsupport::failureOf([&] { (void)load(location.toStdString()); });
        QVERIFY(f);
        QCOMPARE(f->kind, ErrorKind::Denied);
        QVERIFY2(f->where == location.toStdString(), f->text().c_str());
        QVERIFY2(QString::fromStdString(f->reason).contains(code), f->text().c_str());
        QVERIFY(!QString::fromStdString(f->text()).contains("wrong-secret-never-shown"));
    }

    // SlowDown (503) is retried with backoff; past the retries it is named.
    void slowDownIsRetried() {
        const EnvVar endpoint("AWS_ENDPOINT_URL", faults_->url().toUtf8());
        const TensorDict td = load("s3://slowdown/2/big.tdz");
        QCOMPARE(leafSha256(*td.root().child("x")),
                 leafSha256(*load(scratch_.filePath("big.tdz").toStdString()).root().child("x")));
        const std::optional<Failure> f =
            testsupport::failureOf([&] { (void)load("s3://slowdown/50/big.tdz"); });
        QVERIFY(f);
        QVERIFY2(QString::fromStdString(f->reason).contains("SlowDown"), f->text().c_str());
    }

    // An object replaced while it is open: the next read is "changed",
    // never bytes of two versions; opened again, it reads the new one.
    void aReplacedObjectIsChanged() {
        const QString first = scratch_.filePath("v1.tdz"), second = scratch_.filePath("v2.tdz");
        testsupport::writeRampArchive(first, 1 << 20, 1);
        testsupport::writeRampArchive(second, 1 << 20, 2);
        QVERIFY(server_->put(first, "changing.tdz"));
        const TensorDict td = load(s3("changing.tdz").toStdString());
        QVERIFY(server_->put(second, "changing.tdz"));
        const std::optional<Failure> f =
            testsupport::failureOf([&] { (void)td.root().child("x")->bytes(); });
        QVERIFY(f);
        QCOMPARE(f->kind, ErrorKind::Changed);
        QVERIFY2(f->where == s3("changing.tdz").toStdString(), f->text().c_str());
        const TensorDict again = load(s3("changing.tdz").toStdString());
        QCOMPARE(static_cast<char>(again.root().child("x")->bytes().data.get()[0]), char(2));
    }

    // A prefix lists as a person browses it: folders first, then objects
    // with their sizes, names decoded (spaces, unicode). (s3rver shows a
    // folder only when an object lies directly in it, where S3 shows every
    // folder: runs/ gets one.)
    void prefixesList() {
        testsupport::writeFile(scratch_.filePath("notes.txt"), "step 100: loss 1.23\n");
        QVERIFY(server_->put(scratch_.filePath("notes.txt"), "runs/notes.txt"));
        const std::vector<S3Entry> top = listS3(s3("").toStdString());
        QStringList names;
        for (const S3Entry& e : top)
            names << QString::fromStdString(e.name);
        QVERIFY2(names.startsWith("pytorch-1.13/") && names.contains("runs/") &&
                     names.contains("changing.tdz") &&
                     names.indexOf("runs/") < names.indexOf("changing.tdz"),
                 qPrintable(names.join(", ")));
        QVERIFY(top.front().isFolder);

        const std::vector<S3Entry> runs = listS3(s3("runs/").toStdString());
        QCOMPARE(runs.size(), std::size_t(2));
        QCOMPARE(QString::fromStdString(runs[0].name), QString("step 100/"));
        QCOMPARE(QString::fromStdString(runs[0].location), s3("runs/step 100/"));
        QCOMPARE(QString::fromStdString(runs[1].name), QString("notes.txt"));

        const std::vector<S3Entry> step =
            listS3(s3("runs/step 100").toStdString());  // no '/': the folder
        QCOMPARE(step.size(), std::size_t(1));
        QCOMPARE(QString::fromStdString(step[0].name), QString("big é.tdz"));
        QCOMPARE(QString::fromStdString(step[0].location), s3("runs/step 100/big é.tdz"));
        QCOMPARE(step[0].size, std::uint64_t(QFileInfo(scratch_.filePath("big.tdz")).size()));
        QVERIFY(!step[0].isFolder);

        const std::optional<Failure> f =
            testsupport::failureOf([] { (void)listS3("s3://no-such-bucket-here/"); });
        QVERIFY(f);
        QCOMPARE(f->kind, ErrorKind::NotFound);
    }

    // Every request's URL, X-Amz-* headers and Authorization as botocore
    // makes them, byte for byte.
    void signaturesEqualBotocore() {
        const QList<Case> all = cases();
        QJsonArray input;
        for (const Case& c : all)
            input.append(c.json());
        QTemporaryDir dir;
        const QString in = dir.filePath("cases.json");
        testsupport::writeFile(in, QJsonDocument(input).toJson());
        QString out, error;
        QVERIFY2(testsupport::runPython({TDSTUDIO_TEST_SUPPORT_DIR "/botocore_sign.py", in}, &out,
                                        &error),
                 qPrintable(error));
        const QJsonArray reference = QJsonDocument::fromJson(out.toUtf8()).array();
        QCOMPARE(reference.size(), all.size());
        for (int i = 0; i < all.size(); ++i) {
            const QJsonObject botocore = reference[i].toObject();
            const QJsonObject headers = botocore["headers"].toObject();
            std::string url;
            const s3::Headers signed_ = ours(all[i], &url);
            const QString what = all[i].operation + " " + all[i].bucket + "/" + all[i].key;
            QVERIFY2(
                sortedUrl(QString::fromStdString(url)) == sortedUrl(botocore["url"].toString()),
                qPrintable(what + ": " + QString::fromStdString(url) + " against " +
                           botocore["url"].toString()));
            int compared = 0;
            for (const auto& [name, value] : signed_) {
                QVERIFY2(headers.contains(QString::fromStdString(name)),
                         qPrintable(what + ": botocore sends no " + QString::fromStdString(name)));
                QCOMPARE(QString::fromStdString(value),
                         headers[QString::fromStdString(name)].toString());
                ++compared;
            }
            // Everything botocore signs, we sign: its SignedHeaders equal ours.
            QVERIFY(compared >= 3);
            QCOMPARE(headers.contains("X-Amz-Security-Token"), !all[i].sessionToken.isEmpty());
        }
        // AWS's published signature of its example.
        QVERIFY(reference[0].toObject()["headers"].toObject()["Authorization"].toString().endsWith(
            "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"));
    }

    // A location is s3://BUCKET/KEY; one without a bucket is refused, named.
    void locationsAreParsed() {
        const s3::Object o = s3::parseLocation("s3://bucket/a/b c.tdz");
        QCOMPARE(QString::fromStdString(o.bucket), QString("bucket"));
        QCOMPARE(QString::fromStdString(o.key), QString("a/b c.tdz"));
        QCOMPARE(QString::fromStdString(s3::parseLocation("s3://bucket").key), QString());
        const std::optional<Failure> f =
            testsupport::failureOf([] { (void)s3::parseLocation("s3:///key"); });
        QVERIFY(f);
        QCOMPARE(f->kind, ErrorKind::Invalid);
        QCOMPARE(QString::fromStdString(f->where), QString("s3:///key"));
    }

    // Credentials, region and endpoint come from where the AWS tools look:
    // the environment first, then the profile in the credentials and config files.
    void configurationIsFoundWhereAwsToolsLook() {
        QTemporaryDir dir;
        testsupport::writeFile(dir.filePath("credentials"),
                               "[default]\naws_access_key_id = DEFAULTKEY\n"
                               "aws_secret_access_key = defaultsecret\n\n"
                               "[training]\naws_access_key_id = TRAININGKEY\n"
                               "aws_secret_access_key = training/secret+\n"
                               "aws_session_token = tok\n");
        testsupport::writeFile(dir.filePath("config"),
                               "[default]\nregion = us-west-2\n\n"
                               "[profile training]\nregion = eu-north-1\n"
                               "s3 =\n  addressing_style = virtual\n"
                               "  endpoint_url = https://minio.example.org:9000\n");
        const EnvVar credentials("AWS_SHARED_CREDENTIALS_FILE",
                                 dir.filePath("credentials").toUtf8());
        const EnvVar config("AWS_CONFIG_FILE", dir.filePath("config").toUtf8());
        std::vector<std::unique_ptr<EnvVar>> unset;
        for (const char* name :
             {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
              "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"})
            unset.push_back(std::make_unique<EnvVar>(name, QByteArray()));

        s3::Config c = s3::loadConfig();
        QCOMPARE(QString::fromStdString(c.credentials.accessKey), QString("DEFAULTKEY"));
        QCOMPARE(QString::fromStdString(c.region), QString("us-west-2"));
        QVERIFY(c.endpoint.empty());
        QVERIFY(!c.pathStyle);

        {
            const EnvVar profile("AWS_PROFILE", "training");
            c = s3::loadConfig();
            QCOMPARE(QString::fromStdString(c.credentials.accessKey), QString("TRAININGKEY"));
            QCOMPARE(QString::fromStdString(c.credentials.secretKey), QString("training/secret+"));
            QCOMPARE(QString::fromStdString(c.credentials.sessionToken), QString("tok"));
            QCOMPARE(QString::fromStdString(c.region), QString("eu-north-1"));
            QCOMPARE(QString::fromStdString(c.endpoint), QString("https://minio.example.org:9000"));
            QVERIFY(!c.pathStyle);  // the profile asks for virtual-hosted

            // The environment wins over the files.
            const EnvVar key("AWS_ACCESS_KEY_ID", "ENVKEY");
            const EnvVar secret("AWS_SECRET_ACCESS_KEY", "envsecret");
            const EnvVar region("AWS_REGION", "sa-east-1");
            const EnvVar endpoint("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:9/");
            c = s3::loadConfig();
            QCOMPARE(QString::fromStdString(c.credentials.accessKey), QString("ENVKEY"));
            QCOMPARE(QString::fromStdString(c.credentials.secretKey), QString("envsecret"));
            QVERIFY(c.credentials.sessionToken.empty());
            QCOMPARE(QString::fromStdString(c.region), QString("sa-east-1"));
            QCOMPARE(QString::fromStdString(c.endpoint), QString("http://127.0.0.1:9"));
        }
        {
            // An endpoint of one's own is addressed path-style unless told otherwise.
            const EnvVar endpoint("AWS_ENDPOINT_URL", "http://127.0.0.1:4568");
            c = s3::loadConfig();
            QVERIFY(c.pathStyle);
            QCOMPARE(QString::fromStdString(s3::addressOf(c, {"b", "k/x.tdz"}).url),
                     QString("http://127.0.0.1:4568/b/k/x.tdz"));
        }
        {
            // No credentials anywhere: requests go unsigned (public buckets).
            const EnvVar none("AWS_SHARED_CREDENTIALS_FILE", dir.filePath("absent").toUtf8());
            const EnvVar noConfig("AWS_CONFIG_FILE", dir.filePath("absent").toUtf8());
            c = s3::loadConfig();
            QVERIFY(c.credentials.empty());
            QCOMPARE(QString::fromStdString(c.region), QString("us-east-1"));
        }
    }
};

QTEST_GUILESS_MAIN(S3Test)
#include "tst_s3.moc"
