#include "s3_server.h"

#include <QDeadlineTimer>
#include <QFile>
#include <QProcessEnvironment>

#include "testsupport.h"

namespace testsupport {

S3Server::S3Server(const QString& bucket) : bucket_(bucket) {
    const QString tools = qEnvironmentVariable("TDSTUDIO_TOOLS_DIR",
                                               qEnvironmentVariable("HOME") + "/.cache/tdstudio");
    const QString script = tools + "/s3rver/node_modules/s3rver/bin/s3rver.js";
    if (!QFile::exists(script)) {
        error_ = script + " is missing: run packaging/install-s3rver.sh";
        return;
    }
    process_.setProcessChannelMode(QProcess::MergedChannels);
    // Port 0: s3rver says which port it got once it listens, its readiness signal.
    process_.start("node", {script, "-d", dir_.path(), "-a", "127.0.0.1", "-p", "0", "--silent",
                            "--no-vhost-buckets", "--configure-bucket", bucket});
    if (!process_.waitForStarted(10000)) {
        error_ = "cannot start node (packaging/install-s3rver.sh installs it)";
        return;
    }
    QByteArray output;
    const QDeadlineTimer deadline(60000);  // bounds a broken run only
    while (!deadline.hasExpired() && process_.state() == QProcess::Running) {
        process_.waitForReadyRead(100);
        output += process_.readAll();
        const int at = output.indexOf("S3rver listening on ");
        const int end = at < 0 ? -1 : output.indexOf('\n', at);
        if (end > at) {
            const QByteArray address = output.mid(at + 20, end - at - 20).trimmed();
            endpoint_ = "http://" + QString::fromLatin1(address);
            running_ = true;
            return;
        }
    }
    error_ = "s3rver did not start: " + QString::fromLocal8Bit(output + process_.readAll());
}

S3Server::~S3Server() {
    process_.kill();
    process_.waitForFinished(10000);
}

bool S3Server::put(const QString& path, const QString& key, QString* error) const {
    return runPython({TDSTUDIO_TEST_SUPPORT_DIR "/s3_upload.py", endpoint_, bucket_, key, path},
                     nullptr, error);
}

}  // namespace testsupport
