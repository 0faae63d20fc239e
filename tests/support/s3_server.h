#pragma once

#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>

namespace testsupport {

// s3rver, an S3-compatible server from the npm registry (installed by
// packaging/install-s3rver.sh under $TDSTUDIO_TOOLS_DIR, default
// ~/.cache/tdstudio), on a free loopback port with `bucket` made at start
// and its data in a folder of its own; killed when this goes. Objects are
// put by botocore (tests/support/s3_upload.py), a real S3 client.
class S3Server {
public:
    explicit S3Server(const QString& bucket);
    ~S3Server();
    bool isRunning() const { return running_; }
    QString error() const { return error_; }
    QString endpoint() const { return endpoint_; }  // "http://127.0.0.1:PORT"
    // s3rver's own keys: every request is made as this account.
    static QString accessKey() { return "S3RVER"; }
    static QString secretKey() { return "S3RVER"; }
    // Puts `path` (a file, or a folder's files, recursively) at `key`
    // (a folder's files under `key`/...). False with `error` set if botocore fails.
    bool put(const QString& path, const QString& key, QString* error = nullptr) const;

private:
    QTemporaryDir dir_;
    QProcess process_;
    QString bucket_, endpoint_, error_;
    bool running_ = false;
};

}  // namespace testsupport
