#include "fault_server.h"

#include <QDeadlineTimer>

namespace testsupport {

FaultServer::FaultServer(const QString& root) {
    process_.start("python3", {TDSTUDIO_TEST_SUPPORT_DIR "/fault_server.py", root});
    if (process_.waitForReadyRead(30000))
        url_ = "http://127.0.0.1:" + QString::fromUtf8(process_.readLine()).trimmed();
}

FaultServer::~FaultServer() {
    process_.kill();
    process_.waitForFinished();
}

bool FaultServer::waitForStall(int boundMs) {
    const QDeadlineTimer deadline(boundMs);
    while (!deadline.hasExpired()) {
        while (process_.canReadLine())
            if (process_.readLine().startsWith("stalled "))
                return true;
        process_.waitForReadyRead(static_cast<int>(std::max<qint64>(1, deadline.remainingTime())));
    }
    return false;
}

}  // namespace testsupport
