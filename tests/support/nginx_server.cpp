#include "nginx_server.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <QDeadlineTimer>
#include <QFile>

namespace testsupport {
namespace {

// A port nothing listens on now (the kernel's pick for a socket bound to 0).
int freePort() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    int port = 0;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
        port = ntohs(addr.sin_port);
    ::close(fd);
    return port;
}

bool makeCertificate(const QString& dir, QString* error) {
    QProcess openssl;
    openssl.start("openssl", {"req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                              "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                              "-keyout", dir + "/key.pem", "-out", dir + "/cert.pem"});
    if (!openssl.waitForFinished(60000) || openssl.exitCode() != 0) {
        *error = "openssl req: " + QString::fromLocal8Bit(openssl.readAllStandardError());
        return false;
    }
    return true;
}

bool accepts(int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    return ok;
}

}  // namespace

NginxServer::NginxServer(const QString& root, const QString& extra, bool tls) {
    const QString prefix = dir_.path();
    if (tls && !makeCertificate(prefix, &error_))
        return;
    const int port = freePort();
    url_ = QString("%1://127.0.0.1:%2").arg(tls ? "https" : "http").arg(port);
    const QString listen = tls ? QString(
                                     "listen 127.0.0.1:%1 ssl;\n"
                                     "        ssl_certificate %2/cert.pem;\n"
                                     "        ssl_certificate_key %2/key.pem;")
                                     .arg(port)
                                     .arg(prefix)
                               : QString("listen 127.0.0.1:%1;").arg(port);
    QFile conf(prefix + "/nginx.conf");
    conf.open(QIODevice::WriteOnly);
    conf.write(QString(R"(daemon off;
master_process off;  # one process, as the test's user: it reads what the test can
worker_processes 1;
pid %1/nginx.pid;
error_log %1/error.log;
events { worker_connections 256; }
http {
    default_type application/octet-stream;
    log_format ranges '$status $body_bytes_sent "$http_range" $request_uri';
    access_log %1/access.log ranges;
    client_body_temp_path %1/body;
    proxy_temp_path %1/proxy;
    fastcgi_temp_path %1/fastcgi;
    uwsgi_temp_path %1/uwsgi;
    scgi_temp_path %1/scgi;
    server {
        %2
        root %3;
        %4
    }
}
)")
                   .arg(prefix, listen, root, extra)
                   .toUtf8());
    conf.close();
    process_.setProcessChannelMode(QProcess::MergedChannels);
    process_.start("/usr/sbin/nginx", {"-p", prefix, "-c", prefix + "/nginx.conf"});
    if (!process_.waitForStarted(10000)) {
        error_ = "cannot start /usr/sbin/nginx (install nginx-light)";
        return;
    }
    // Until it accepts connections or exits: nginx signals readiness no
    // other way. The deadline bounds a broken run; the test's outcome never
    // depends on how soon nginx is up.
    const QDeadlineTimer deadline(60000);
    while (!deadline.hasExpired()) {
        if (accepts(port)) {
            running_ = true;
            return;
        }
        if (process_.waitForFinished(20))  // exited: its output says why
            break;
    }
    error_ = "nginx did not start: " + QString::fromLocal8Bit(process_.readAll());
}

NginxServer::~NginxServer() {
    process_.kill();
    process_.waitForFinished(10000);
}

QStringList NginxServer::requests() const {
    QFile log(dir_.path() + "/access.log");
    if (!log.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(log.readAll()).split('\n', Qt::SkipEmptyParts);
}

}  // namespace testsupport
