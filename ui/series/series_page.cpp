#include "series_page.h"

#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLegendMarker>
#include <QLineEdit>
#include <QLineSeries>
#include <QProgressBar>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTreeView>
#include <QVBoxLayout>
#include <QValueAxis>
#include <cmath>
#include <mutex>

#include "load_settings.h"
#include "node_text.h"
#include "statistics.h"
#include "tensordict/error.h"

namespace {

constexpr int kHistogramBins = 64;

QValueAxis* valueAxis(const QString& title) {
    auto* axis = new QValueAxis;
    axis->setTitleText(title);
    axis->setLabelFormat("%.4g");
    return axis;
}

void resetChart(QChart* chart) {
    chart->removeAllSeries();
    for (QAbstractAxis* axis : chart->axes()) {
        chart->removeAxis(axis);
        delete axis;
    }
}

}  // namespace

SeriesPage::SeriesPage(QWidget* parent)
    : QWidget(parent),
      model_(new SeriesTableModel(this)),
      proxy_(new QSortFilterProxyModel(this)),
      title_(new QLabel),
      metric_(new QComboBox),
      layout_(new QComboBox),
      progress_(new QProgressBar),
      cancel_(new QPushButton(tr("Cancel"))),
      status_(new QLabel),
      filter_(new QLineEdit),
      table_(new QTreeView),
      plot_(new QChart),
      plotView_(new QChartView(plot_)),
      histograms_(new QChart),
      histogramView_(new QChartView(histograms_)),
      histogramStatus_(new QLabel) {
    setAccessibleName(tr("Compare along steps"));
    QFont big = title_->font();
    big.setBold(true);
    title_->setFont(big);
    title_->setWordWrap(true);
    metric_->addItems(SeriesTableModel::metricNames());
    metric_->setToolTip(tr("The figure the table colours and the plot draws along the steps"));
    layout_->addItems({tr("Overlaid"), tr("Stacked")});
    layout_->setToolTip(tr("The histograms of the current key at every step, on one axis"));
    cancel_->setToolTip(tr("Stop comparing; nothing is shown"));
    progress_->setRange(0, 1000);
    progress_->setTextVisible(false);
    progress_->setMaximumWidth(200);
    filter_->setPlaceholderText(tr("Filter keys…"));
    filter_->setClearButtonEnabled(true);
    proxy_->setSourceModel(model_);
    proxy_->setFilterKeyColumn(0);
    proxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);
    table_->setModel(proxy_);
    table_->setRootIsDecorated(false);
    table_->setUniformRowHeights(true);
    table_->setSelectionMode(QAbstractItemView::ExtendedSelection);
    table_->setAlternatingRowColors(false);
    table_->header()->setStretchLastSection(false);
    for (QChart* chart : {plot_, histograms_}) {
        chart->legend()->setAlignment(Qt::AlignBottom);
        chart->setMargins(QMargins(4, 4, 4, 4));
    }
    plot_->setTitle(tr("Along the steps (the selected keys)"));
    for (QChartView* view : {plotView_, histogramView_})
        view->setRenderHint(QPainter::Antialiasing);

    auto* top = new QHBoxLayout;
    top->addWidget(title_, 1);
    top->addWidget(new QLabel(tr("Figure:")));
    top->addWidget(metric_);
    top->addWidget(progress_);
    top->addWidget(cancel_);
    auto* left = new QWidget;
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    leftLayout->addWidget(filter_);
    leftLayout->addWidget(table_);
    auto* histogramBox = new QWidget;
    auto* histogramLayout = new QVBoxLayout(histogramBox);
    histogramLayout->setContentsMargins(0, 0, 0, 0);
    auto* histogramBar = new QHBoxLayout;
    histogramBar->addWidget(histogramStatus_, 1);
    histogramBar->addWidget(layout_);
    histogramLayout->addLayout(histogramBar);
    histogramLayout->addWidget(histogramView_);
    auto* charts = new QSplitter(Qt::Vertical);
    charts->addWidget(plotView_);
    charts->addWidget(histogramBox);
    charts->setSizes({300, 400});
    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(left);
    split->addWidget(charts);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 3);
    split->setSizes({400, 600});  // the charts need the room; the table scrolls
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(status_);
    layout->addWidget(split, 1);

    connect(filter_, &QLineEdit::textChanged, proxy_, &QSortFilterProxyModel::setFilterFixedString);
    connect(metric_, &QComboBox::currentIndexChanged, this, [this](int i) {
        model_->setMetric(static_cast<SeriesTableModel::Metric>(i));
        updatePlot();
    });
    connect(layout_, &QComboBox::currentIndexChanged, this, &SeriesPage::drawHistograms);
    connect(cancel_, &QPushButton::clicked, this, &SeriesPage::cancel);
    connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &SeriesPage::updatePlot);
    connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            &SeriesPage::requestHistograms);
    progress_->hide();
    cancel_->hide();
}

// The steps' trees, opened once by the first histograms that need them and
// kept for the next key (a tree holds what was read of the files' headers,
// never their bytes). Histogram jobs may overlap as keys change: one lock.
class SeriesPage::StepTrees {
public:
    StepTrees(std::vector<std::string> steps, tensordict::LoadOptions load)
        : steps_(std::move(steps)), load_(std::move(load)), trees_(steps_.size()) {}
    std::size_t size() const { return steps_.size(); }
    // Throws Error naming the step that cannot be opened (tried again next time).
    tensordict::TensorDict tree(std::size_t step) {
        const std::lock_guard<std::mutex> lock(mutex_);
        if (!trees_[step])
            trees_[step] = tensordict::load(steps_[step], load_);
        return *trees_[step];
    }

private:
    const std::vector<std::string> steps_;
    const tensordict::LoadOptions load_;
    std::mutex mutex_;
    std::vector<std::optional<tensordict::TensorDict>> trees_;
};

SeriesPage::~SeriesPage() = default;

void SeriesPage::start(const QStringList& locations) {
    close();
    active_ = true;
    locations_ = locations;
    title_->setText(tr("%1 steps: %2 … %3")
                        .arg(locations.size())
                        .arg(locations.value(0).section('/', -1),
                             locations.value(locations.size() - 1).section('/', -1)));
    status_->setText(tr("Reading every step once…"));
    progress_->setValue(0);
    progress_->show();
    cancel_->show();
    std::vector<std::string> steps;
    for (const QString& l : locations)
        steps.push_back(l.toStdString());
    trees_ = std::make_shared<StepTrees>(steps, loadOptionsFromSettings(/*tolerant=*/true));
    const tensordict::LoadOptions load = loadOptionsFromSettings(/*tolerant=*/false);
    run_.start(
        [steps, load](const tensordict::CancelToken& token, const JobProgress& progress) {
            Outcome out;
            tensordict::SeriesOptions options;
            options.cancel = &token;
            options.load = load;
            options.progress = [&progress](std::uint64_t done, std::uint64_t total) {
                progress(total ? double(done) / double(total) : 1.0);
            };
            try {
                out.report = tensordict::compareAlongSteps(steps, options);
            } catch (const tensordict::Cancelled&) {
                out.cancelled = true;
            } catch (const std::exception& e) {
                out.error = QString::fromUtf8(e.what());
            }
            return out;
        },
        [this](Outcome outcome) { showOutcome(std::move(outcome)); },
        [this](double fraction) { progress_->setValue(int(fraction * 1000)); });
}

void SeriesPage::cancel() {
    if (!run_.isBusy())
        return;
    run_.cancel();
    progress_->hide();
    cancel_->hide();
    status_->setText(tr("Cancelled: nothing was compared."));
}

void SeriesPage::close() {
    run_.cancel();
    histogramJob_.cancel();
    active_ = false;
    locations_.clear();
    trees_.reset();
    model_->clear();
    shown_ = {};
    resetChart(plot_);
    resetChart(histograms_);
    histogramStatus_->clear();
    status_->clear();
    progress_->hide();
    cancel_->hide();
}

void SeriesPage::showOutcome(Outcome outcome) {
    progress_->hide();
    cancel_->hide();
    if (!outcome.report) {
        status_->setText(outcome.cancelled ? tr("Cancelled: nothing was compared.")
                                           : tr("Cannot compare: %1").arg(outcome.error));
        return;
    }
    int frozen = 0, changing = 0;
    model_->setReport(std::move(*outcome.report));
    for (const auto& key : model_->report().keys) {
        const auto mark = SeriesTableModel::markOf(key);
        frozen += mark == SeriesTableModel::Mark::Frozen;
        changing += mark == SeriesTableModel::Mark::Appears || mark == SeriesTableModel::Mark::Goes;
    }
    status_->setText(tr("%1 keys: %2 frozen, %3 not in every step. Select keys to plot them; the "
                        "current one's histograms are drawn below.")
                         .arg(model_->rowCount())
                         .arg(frozen)
                         .arg(changing));
    table_->header()->resizeSections(QHeaderView::ResizeToContents);
    if (proxy_->rowCount() > 0)
        table_->setCurrentIndex(proxy_->index(0, 0));
    Q_EMIT finished();
}

const tensordict::SeriesKey* SeriesPage::currentKey() const {
    const QModelIndex current = table_->currentIndex();
    if (!current.isValid())
        return nullptr;
    return &model_->report().keys[std::size_t(proxy_->mapToSource(current).row())];
}

std::vector<const tensordict::SeriesKey*> SeriesPage::selectedKeys() const {
    std::vector<const tensordict::SeriesKey*> keys;
    for (const QModelIndex& row : table_->selectionModel()->selectedRows())
        keys.push_back(&model_->report().keys[std::size_t(proxy_->mapToSource(row).row())]);
    if (keys.empty())
        if (const auto* key = currentKey())
            keys.push_back(key);
    return keys;
}

void SeriesPage::updatePlot() {
    resetChart(plot_);
    const auto metric = model_->metric();
    const int steps = int(model_->report().steps.size());
    auto* x = valueAxis(tr("step"));
    x->setRange(0, std::max(1, steps - 1));
    x->setTickCount(std::min(std::max(2, steps), 11));
    x->setLabelFormat("%d");
    auto* y = valueAxis(SeriesTableModel::metricNames().value(int(metric)));
    plot_->addAxis(x, Qt::AlignBottom);
    plot_->addAxis(y, Qt::AlignLeft);
    double lo = INFINITY, hi = -INFINITY;
    constexpr int kMaxLines = 12;  // more would be a blur: the first dozen selected
    int lines = 0;
    for (const tensordict::SeriesKey* key : selectedKeys()) {
        if (++lines > kMaxLines)
            break;
        auto* line = new QLineSeries;
        line->setName(nodetext::keyPathText(key->key));
        line->setPointsVisible(true);
        for (int s = 0; s < steps; ++s) {
            const auto& f = key->steps[std::size_t(s)];
            const auto v = f ? SeriesTableModel::figure(*f, metric) : std::nullopt;
            if (v && std::isfinite(*v)) {
                line->append(s, *v);
                lo = std::min(lo, *v), hi = std::max(hi, *v);
            }
        }
        plot_->addSeries(line);
        line->attachAxis(x);
        line->attachAxis(y);
    }
    if (lo <= hi) {
        const double pad = hi > lo ? (hi - lo) * 0.05 : std::max(1e-12, std::fabs(hi) * 0.05);
        y->setRange(lo - pad, hi + pad);
    }
    plot_->legend()->setVisible(lines > 0);
}

void SeriesPage::requestHistograms() {
    const tensordict::SeriesKey* key = currentKey();
    if (!key)
        return;
    // One axis for every step: the range of all the key's finite values.
    double low = INFINITY, high = -INFINITY;
    for (const auto& f : key->steps)
        if (f && f->min && f->max)
            low = std::min(low, *f->min), high = std::max(high, *f->max);
    const std::vector<std::string> path = key->key;
    histogramStatus_->setText(
        tr("Histograms of %1 at every step…").arg(nodetext::keyPathText(path)));
    if (!(low <= high)) {
        shown_ = {path, 0, 0, {}, tr("no finite value at any step")};
        drawHistograms();
        return;
    }
    histogramJob_.start(
        [trees = trees_, path, low, high](const tensordict::CancelToken& token) {
            KeyHistograms out{path, low, high, {}, {}};
            try {
                for (std::size_t step = 0; step < trees->size(); ++step) {
                    if (token.isCancelled())
                        return out;
                    const tensordict::TensorDict td = trees->tree(step);
                    const tensordict::Node* leaf = td.root().find(path);
                    if (!leaf || !leaf->isTensor()) {
                        out.steps.emplace_back();
                        continue;
                    }
                    StatisticsRequest request;
                    request.dtype = leaf->leaf().dtype;
                    request.bytes = leaf->bytes();
                    request.numel = leaf->leaf().numel;
                    request.threads = 2;
                    request.bins = kHistogramBins;
                    request.range = std::make_pair(low, high);
                    const Statistics s = computeStatistics(
                        request, [&token](double) { return !token.isCancelled(); });
                    out.steps.emplace_back(s.histogram);
                }
            } catch (const std::exception& e) {
                out.error = QString::fromUtf8(e.what());
            }
            return out;
        },
        [this](KeyHistograms histograms) {
            shown_ = std::move(histograms);
            drawHistograms();
            Q_EMIT histogramsReady();
        });
}

void SeriesPage::drawHistograms() {
    resetChart(histograms_);
    const QString name = nodetext::keyPathText(shown_.key);
    if (!shown_.error.isEmpty()) {
        histogramStatus_->setText(tr("Histograms of %1: %2").arg(name, shown_.error));
        return;
    }
    const bool stacked = layout_->currentIndex() == 1;
    std::int64_t tallest = 1;
    for (const auto& h : shown_.steps)
        if (h)
            for (const std::int64_t c : *h)
                tallest = std::max(tallest, c);
    auto* x = valueAxis(name);
    x->setRange(shown_.low, shown_.high);
    auto* y = valueAxis(stacked ? tr("steps, each one's counts") : tr("count"));
    histograms_->addAxis(x, Qt::AlignBottom);
    histograms_->addAxis(y, Qt::AlignLeft);
    const double lift = double(tallest) * 1.1;  // a stacked step above the one before
    int drawn = 0;
    for (std::size_t s = 0; s < shown_.steps.size(); ++s) {
        const auto& h = shown_.steps[s];
        if (!h || h->empty())
            continue;
        auto* line = new QLineSeries;
        line->setName(QString::fromStdString(model_->report().steps[s]).section('/', -1));
        const double width = (shown_.high - shown_.low) / double(h->size());
        const double base = stacked ? lift * double(s) : 0.0;
        for (std::size_t b = 0; b < h->size(); ++b) {  // a step line: flat over each bin
            line->append(shown_.low + width * double(b), base + double((*h)[b]));
            line->append(shown_.low + width * double(b + 1), base + double((*h)[b]));
        }
        histograms_->addSeries(line);
        line->attachAxis(x);
        line->attachAxis(y);
        ++drawn;
    }
    y->setRange(0, stacked ? lift * double(shown_.steps.size()) : double(tallest) * 1.05);
    if (stacked) {
        y->setLabelsVisible(false);
    } else {
        y->setLabelFormat("%d");
        y->applyNiceNumbers();  // whole counts on the ticks
    }
    histogramStatus_->setText(
        tr("Histograms of %1 at %2 steps, %3 bins over [%4, %5]")
            .arg(name)
            .arg(drawn)
            .arg(kHistogramBins)
            .arg(QLocale().toString(shown_.low, 'g', 6), QLocale().toString(shown_.high, 'g', 6)));
}

bool SeriesPage::hasCurrentKey() const {
    return currentKey() != nullptr;
}

QStringList SeriesPage::currentKeyPath() const {
    QStringList path;
    if (const auto* key = currentKey())
        for (const std::string& k : key->key)
            path << QString::fromStdString(k);
    return path;
}

bool SeriesPage::selectKeyPath(const QStringList& path) {
    std::vector<std::string> wanted;
    for (const QString& k : path)
        wanted.push_back(k.toStdString());
    const auto& keys = model_->report().keys;
    for (std::size_t i = 0; i < keys.size(); ++i)
        if (keys[i].key == wanted) {
            const QModelIndex row = proxy_->mapFromSource(model_->index(int(i), 0));
            if (!row.isValid())
                return false;  // filtered out
            selectOnly(table_, row);
            return true;
        }
    return false;
}

QString SeriesPage::showMode(int) {
    return tr("Comparing along steps shows its own table, plot and histograms");
}
