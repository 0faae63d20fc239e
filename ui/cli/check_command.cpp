#include "check_command.h"

#include <QStringList>
#include <algorithm>

#include "load_settings.h"
#include "node_text.h"
#include "open_failure.h"
#include "tensordict/check.h"
#include "tensordict/keys.h"
#include "tensordict/report.h"
#include "tensordict/value.h"

namespace cli {
namespace {

using tensordict::CheckReport;
using tensordict::Problem;
using tensordict::Severity;

QString severityText(Severity s) {
    return s == Severity::Error ? "error" : "warning";
}

// One line: severity, kind, file, key, and what is wrong and what to do.
QString problemLine(const Problem& p) {
    QString line = QString("%1  %2  %3")
                       .arg(severityText(p.severity), QString::fromStdString(p.kind),
                            nodetext::displayText(p.file));
    if (!p.key.empty())
        line += "  " + nodetext::keyPathText(p.key);
    return line + ": " + nodetext::displayText(p.message);
}

QString countText(std::size_t n, const char* one, const char* many) {
    return QString("%1 %2").arg(n).arg(n == 1 ? one : many);
}

// "12 entries, 1 file, 1.20 GiB read"
QString checkedText(const CheckReport& r) {
    QStringList parts;
    if (r.entries > 0 || r.zipArchive)
        parts << countText(r.entries, "entry", "entries");
    parts << countText(r.files, "file", "files");
    parts << nodetext::byteSizeText(r.bytes) + " read";
    return parts.join(", ");
}

tensordict::Value problemValue(const Problem& p) {
    tensordict::Value::List key;
    for (const std::string& k : p.key)
        key.emplace_back(k);
    tensordict::Value::Object o;
    o.emplace_back("severity", tensordict::Value(severityText(p.severity).toStdString()));
    o.emplace_back("key", tensordict::Value(std::move(key)));
    o.emplace_back("file", tensordict::Value(p.file));
    o.emplace_back("kind", tensordict::Value(p.kind));
    o.emplace_back("message", tensordict::Value(p.message));
    o.emplace_back("repairable", tensordict::Value(p.repairable));
    return tensordict::Value(std::move(o));
}

void printJson(const CheckReport& r, const std::vector<std::string>& repaired, QTextStream& out) {
    tensordict::Value::Object checked;
    checked.emplace_back("files", tensordict::Value(static_cast<std::int64_t>(r.files)));
    checked.emplace_back("entries", tensordict::Value(static_cast<std::int64_t>(r.entries)));
    checked.emplace_back("bytes", tensordict::Value(static_cast<std::int64_t>(r.bytes)));
    tensordict::Value::List problems;
    for (const Problem& p : r.problems)
        problems.push_back(problemValue(p));
    tensordict::Value::Object doc;
    doc.emplace_back("path", tensordict::Value(r.path));
    doc.emplace_back("format", tensordict::Value(r.format));
    doc.emplace_back("sound", tensordict::Value(r.sound()));
    doc.emplace_back("checked", tensordict::Value(std::move(checked)));
    doc.emplace_back("problems", tensordict::Value(std::move(problems)));
    if (!repaired.empty()) {
        tensordict::Value::List done;
        for (const std::string& d : repaired)
            done.emplace_back(d);
        doc.emplace_back("repaired", tensordict::Value(std::move(done)));
    }
    out << QString::fromStdString(tensordict::toStrictJson(tensordict::Value(std::move(doc))))
        << '\n';
}

void printReport(const CheckReport& r, QTextStream& out) {
    for (const Problem& p : r.problems)
        out << problemLine(p) << '\n';
    const QString what =
        QString("%1 (%2): %3")
            .arg(QString::fromStdString(r.path), QString::fromStdString(r.format), checkedText(r));
    if (r.sound()) {
        out << what << ": ok\n";
        return;
    }
    QString summary = what + ": " + countText(r.errorCount(), "error", "errors") + ", " +
                      countText(r.warningCount(), "warning", "warnings");
    const auto repairable = std::count_if(r.problems.begin(), r.problems.end(),
                                          [](const Problem& p) { return p.repairable; });
    if (repairable > 0)
        summary += QString(" (%1 repairable: tdstudio --check %2 --repair)")
                       .arg(repairable)
                       .arg(QString::fromStdString(r.path));
    out << summary << '\n';
}

}  // namespace

int check(const CheckRequest& request, QTextStream& out, QTextStream& err) {
    tensordict::CheckOptions options;
    options.transport = currentTransportOptions();
    options.threads = request.threads;
    CheckReport report;
    try {
        report = tensordict::check(request.path.toStdString(), options);
    } catch (const std::exception& e) {
        err << "tdstudio: " << commandLineFailure(e) << '\n';
        return 2;
    }
    std::vector<std::string> repaired;
    if (request.repair && !report.sound()) {
        tensordict::RepairOptions repair;
        repair.dryRun = request.dryRun;
        tensordict::RepairReport done;
        try {
            done = tensordict::repair(report, repair);
        } catch (const std::exception& e) {
            err << "tdstudio: repair stopped: " << commandLineFailure(e) << '\n';
            return 2;
        }
        repaired = done.done;
        if (!request.json)
            for (const std::string& line : done.done)
                out << QString::fromStdString(line) << '\n';
        if (!request.dryRun && !done.done.empty()) {
            // What is left, as the file is now.
            try {
                report = tensordict::check(request.path.toStdString(), options);
            } catch (const std::exception& e) {
                err << "tdstudio: " << commandLineFailure(e) << '\n';
                return 2;
            }
        }
    }
    if (request.json)
        printJson(report, repaired, out);
    else
        printReport(report, out);
    if (report.cancelled || report.errorCount() > 0)
        return 1;
    return request.strict && report.warningCount() > 0 ? 1 : 0;
}

}  // namespace cli
