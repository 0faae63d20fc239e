#pragma once

#include <QProcess>
#include <QString>

namespace testsupport {

// The tests' own HTTP server with faults (tests/support/fault_server.py,
// run by `python3`): the first path component picks the fault, the rest
// names a file under `root`. Killed when this goes.
class FaultServer {
public:
    explicit FaultServer(const QString& root);
    ~FaultServer();
    bool isRunning() const { return !url_.isEmpty(); }
    // "http://127.0.0.1:PORT".
    QString url() const { return url_; }
    // Blocks until a /stall/ request has stalled (its answer begun and then
    // nothing): a read of it is under way for sure. False after `boundMs`,
    // which only bounds a broken run.
    bool waitForStall(int boundMs = 60000);

private:
    QProcess process_;
    QString url_;
};

}  // namespace testsupport
