#include "series_command.h"

#include <QFileInfo>
#include <cmath>
#include <cstdio>

#include "load_settings.h"
#include "open_failure.h"
#include "options.h"
#include "tensordict/keys.h"
#include "tensordict/series.h"
#include "tensordict/value.h"

namespace cli {
namespace {

using tensordict::Value;

Value number(const std::optional<double>& v) {
    return v && std::isfinite(*v) ? Value(*v) : Value();
}

Value figuresValue(const std::optional<tensordict::StepFigures>& f) {
    if (!f)
        return Value();
    return Value(Value::Object{{"count", Value(f->count)},
                               {"nan", Value(f->nans)},
                               {"inf", Value(f->infs)},
                               {"norm", number(f->norm)},
                               {"mean", number(f->mean)},
                               {"std", number(f->std)},
                               {"min", number(f->min)},
                               {"max", number(f->max)},
                               {"max_abs_delta", number(f->maxAbsDelta)},
                               {"changed_fraction", number(f->changedFraction)},
                               {"cosine", number(f->cosine)}});
}

Value jsonReport(const tensordict::SeriesReport& report) {
    Value::List steps, keys;
    for (const std::string& s : report.steps)
        steps.push_back(Value(s));
    for (const tensordict::SeriesKey& k : report.keys) {
        Value::List key, figures;
        for (const std::string& part : k.key)
            key.push_back(Value(part));
        for (const auto& f : k.steps)
            figures.push_back(figuresValue(f));
        keys.push_back(Value(
            Value::Object{{"key", Value(std::move(key))}, {"steps", Value(std::move(figures))}}));
    }
    return Value(
        Value::Object{{"steps", Value(std::move(steps))}, {"keys", Value(std::move(keys))}});
}

QString cell(const std::optional<double>& v) {
    if (!v)
        return "-";
    char text[32];
    std::snprintf(text, sizeof text, "%.6g", *v);
    return text;
}

QString textReport(const tensordict::SeriesReport& report) {
    QString text = "steps:\n";
    for (std::size_t i = 0; i < report.steps.size(); ++i)
        text += QString("  %1  %2\n").arg(i).arg(QString::fromStdString(report.steps[i]));
    const QStringList header{"step", "norm",   "mean",    "std",   "min",
                             "max",  "max|d|", "changed", "cosine"};
    for (const tensordict::SeriesKey& k : report.keys) {
        text += '\n' + QString::fromStdString(tensordict::formatKeyPath(k.key)) + '\n';
        QList<QStringList> rows{header};
        for (std::size_t i = 0; i < k.steps.size(); ++i) {
            const auto& f = k.steps[i];
            if (!f) {
                rows.append({QString::number(i), "(none)", "", "", "", "", "", "", ""});
                continue;
            }
            rows.append({QString::number(i), cell(f->norm), cell(f->mean), cell(f->std),
                         cell(f->min), cell(f->max), cell(f->maxAbsDelta), cell(f->changedFraction),
                         cell(f->cosine)});
        }
        QList<int> widths(header.size(), 0);
        for (const QStringList& row : rows)
            for (int c = 0; c < row.size(); ++c)
                widths[c] = std::max(widths[c], int(row[c].size()));
        for (const QStringList& row : rows) {
            QString line;
            for (int c = 0; c < row.size(); ++c)
                line += "  " + (c == 0 ? row[c].leftJustified(widths[c])
                                       : row[c].rightJustified(widths[c]));
            while (line.endsWith(' '))
                line.chop(1);
            text += line + '\n';
        }
    }
    return text;
}

}  // namespace

int series(const SeriesRequest& request, QTextStream& out, QTextStream& err) {
    try {
        std::vector<std::string> steps;
        if (request.paths.size() == 1) {
            if (!QFileInfo(request.paths[0]).isDir())
                throw tensordict::Error::invalid(request.paths[0].toStdString(),
                                                 "--series needs two checkpoints or more, or a "
                                                 "folder of them");
            steps = tensordict::seriesInFolder(request.paths[0].toStdString());
        } else {
            for (const QString& p : request.paths)
                steps.push_back(p.toStdString());
        }
        tensordict::SeriesOptions options;
        options.keys = keyPaths(request.keys);
        options.threads = request.threads;
        options.load = loadOptionsFromSettings(/*tolerant=*/false);
        const tensordict::SeriesReport report = tensordict::compareAlongSteps(steps, options);
        if (request.json)
            out << QString::fromStdString(tensordict::toStrictJson(jsonReport(report))) << '\n';
        else
            out << textReport(report);
        return 0;
    } catch (const std::exception& e) {
        out.flush();
        err << "tdstudio: " << commandLineFailure(e) << '\n';
        return 1;
    }
}

}  // namespace cli
