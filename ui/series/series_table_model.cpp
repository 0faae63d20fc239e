#include "series_table_model.h"

#include <QBrush>
#include <QColor>
#include <QCoreApplication>
#include <QFileInfo>
#include <QLocale>
#include <algorithm>
#include <cmath>
#include <iterator>

#include "node_text.h"

namespace {

// Each figure a step can show: its name and where StepFigures keeps it, in Metric's order.
struct MetricColumn {
    const char* name;
    std::optional<double> tensordict::StepFigures::*member;
};
using F = tensordict::StepFigures;
constexpr MetricColumn kMetrics[] = {
    {QT_TRANSLATE_NOOP("SeriesTableModel", "norm (L2)"), &F::norm},
    {QT_TRANSLATE_NOOP("SeriesTableModel", "mean"), &F::mean},
    {QT_TRANSLATE_NOOP("SeriesTableModel", "std"), &F::std},
    {QT_TRANSLATE_NOOP("SeriesTableModel", "min"), &F::min},
    {QT_TRANSLATE_NOOP("SeriesTableModel", "max"), &F::max},
    {QT_TRANSLATE_NOOP("SeriesTableModel", "max |Δ|"), &F::maxAbsDelta},
    {QT_TRANSLATE_NOOP("SeriesTableModel", "changed fraction"), &F::changedFraction},
    {QT_TRANSLATE_NOOP("SeriesTableModel", "cosine"), &F::cosine},
};
static_assert(std::size(kMetrics) == std::size_t(SeriesTableModel::Metric::Cosine) + 1,
              "a name and a member for every Metric");

// The fraction of elements changed and the cosine read on 0 to 1, whatever the row.
bool absoluteScale(SeriesTableModel::Metric m) {
    return m == SeriesTableModel::Metric::ChangedFraction || m == SeriesTableModel::Metric::Cosine;
}

}  // namespace

QStringList SeriesTableModel::metricNames() {
    QStringList names;
    for (const MetricColumn& m : kMetrics)
        names << QCoreApplication::translate("SeriesTableModel", m.name);
    return names;
}

std::optional<double> SeriesTableModel::figure(const tensordict::StepFigures& f, Metric metric) {
    return f.*kMetrics[std::size_t(metric)].member;
}

SeriesTableModel::Mark SeriesTableModel::markOf(const tensordict::SeriesKey& key) {
    std::size_t first = 0;
    while (first < key.steps.size() && !key.steps[first])
        ++first;
    if (first == key.steps.size())
        return Mark::None;
    for (std::size_t s = first; s < key.steps.size(); ++s)
        if (!key.steps[s])
            return Mark::Goes;
    if (first > 0)
        return Mark::Appears;
    // Present all along: frozen when no element changed at any step.
    bool compared = false;
    for (std::size_t s = first + 1; s < key.steps.size(); ++s) {
        const auto& changed = key.steps[s]->changedFraction;
        if (!changed || *changed != 0)
            return Mark::None;
        compared = true;
    }
    return compared ? Mark::Frozen : Mark::None;
}

SeriesTableModel::SeriesTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void SeriesTableModel::setReport(tensordict::SeriesReport report) {
    beginResetModel();
    report_ = std::move(report);
    marks_.clear();
    for (const auto& key : report_.keys)
        marks_.push_back(markOf(key));
    updateRanges();
    endResetModel();
}

void SeriesTableModel::clear() {
    setReport({});
}

void SeriesTableModel::setMetric(Metric metric) {
    metric_ = metric;
    updateRanges();
    if (rowCount() > 0)
        Q_EMIT dataChanged(index(0, kFirstStepColumn), index(rowCount() - 1, columnCount() - 1));
    Q_EMIT headerDataChanged(Qt::Horizontal, 0, columnCount() - 1);
}

void SeriesTableModel::updateRanges() {
    ranges_.assign(report_.keys.size(), {0.0, 0.0});
    for (std::size_t k = 0; k < report_.keys.size(); ++k) {
        double lo = INFINITY, hi = -INFINITY;
        for (const auto& step : report_.keys[k].steps)
            if (step)
                if (const auto v = figure(*step, metric_); v && std::isfinite(*v))
                    lo = std::min(lo, *v), hi = std::max(hi, *v);
        ranges_[k] = {lo, hi};
    }
}

int SeriesTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(report_.keys.size());
}

int SeriesTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : kFirstStepColumn + int(report_.steps.size());
}

QVariant SeriesTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid())
        return {};
    const auto& key = report_.keys[std::size_t(index.row())];
    if (index.column() == 0) {
        if (role == Qt::DisplayRole)
            return nodetext::keyPathText(key.key);
        return {};
    }
    if (index.column() == 1) {
        const Mark mark = marks_[std::size_t(index.row())];
        if (role == Qt::DisplayRole || role == Qt::ToolTipRole) {
            std::size_t first = 0;
            while (first < key.steps.size() && !key.steps[first])
                ++first;
            switch (mark) {
                case Mark::Frozen:
                    return role == Qt::DisplayRole ? tr("frozen")
                                                   : tr("No element changed after the first step");
                case Mark::Appears:
                    return role == Qt::DisplayRole
                               ? tr("appears at %1").arg(first)
                               : tr("Not in the steps before step %1").arg(first);
                case Mark::Goes:
                    return role == Qt::DisplayRole ? tr("missing at times")
                                                   : tr("Missing from a step after its first");
                case Mark::None:
                    return {};
            }
        }
        if (role == Qt::ForegroundRole && mark != Mark::None)
            return QBrush(mark == Mark::Frozen ? QColor(0x1c, 0x71, 0xd8)
                                               : QColor(0xc0, 0x1c, 0x28));
        return {};
    }
    const std::size_t step = std::size_t(index.column() - kFirstStepColumn);
    const auto& figures = key.steps[step];
    const std::optional<double> v = figures ? figure(*figures, metric_) : std::nullopt;
    switch (role) {
        case Qt::DisplayRole:
            return v ? QLocale().toString(*v, 'g', 6) : QStringLiteral("–");
        case Qt::ToolTipRole:
            if (!figures)
                return tr("The step has no such tensor");
            return v ? QLocale().toString(*v, 'g', 17)
                     : tr("None: the first step, or no step before of as many elements");
        case Qt::TextAlignmentRole:
            return int(Qt::AlignRight | Qt::AlignVCenter);
        case Qt::BackgroundRole: {
            if (!figures)
                return QBrush(QColor(0xec, 0xec, 0xec));
            if (!v || !std::isfinite(*v))
                return {};
            auto [lo, hi] = ranges_[std::size_t(index.row())];
            if (absoluteScale(metric_))
                lo = 0, hi = 1;
            const double t = hi > lo ? std::clamp((*v - lo) / (hi - lo), 0.0, 1.0) : 0.0;
            // White to a clear blue: light enough for black text all along.
            return QBrush(QColor(int(255 - 120 * t), int(255 - 70 * t), 255));
        }
    }
    return {};
}

QVariant SeriesTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal)
        return {};
    if (role == Qt::ToolTipRole && section >= kFirstStepColumn)
        return QString::fromStdString(report_.steps[std::size_t(section - kFirstStepColumn)]);
    if (role != Qt::DisplayRole)
        return {};
    if (section == 0)
        return tr("Key");
    if (section == 1)
        return tr("Along the steps");
    return QFileInfo(QString::fromStdString(report_.steps[std::size_t(section - kFirstStepColumn)]))
        .fileName();
}
