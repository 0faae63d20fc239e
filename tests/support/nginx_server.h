#pragma once

#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>

namespace testsupport {

// A real nginx (nginx-light) on a free loopback port, started by a test:
// its own prefix and config, `daemon off`, killed when this goes. `root`
// is served at "/"; `extra` is more of the server block (locations that
// redirect, refuse ranges, fail...). With `tls`, it serves HTTPS with a
// certificate for 127.0.0.1 made here by `openssl req` (caFile()).
class NginxServer {
public:
    NginxServer(const QString& root, const QString& extra = {}, bool tls = false);
    ~NginxServer();
    bool isRunning() const { return running_; }
    QString error() const { return error_; }
    // "http://127.0.0.1:PORT" (or https).
    QString url() const { return url_; }
    QString caFile() const { return dir_.path() + "/cert.pem"; }
    // The access log's lines so far: "STATUS BYTES RANGE URI" each.
    QStringList requests() const;

private:
    QTemporaryDir dir_;
    QProcess process_;
    QString url_, error_;
    bool running_ = false;
};

}  // namespace testsupport
