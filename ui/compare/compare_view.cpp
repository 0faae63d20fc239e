#include "compare_view.h"

#include <QCheckBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QSplitter>
#include <QToolButton>
#include <QTreeView>
#include <QVBoxLayout>
#include <algorithm>
#include <utility>

#include "compare_filter_model.h"
#include "compare_job.h"
#include "compare_panel.h"
#include "compare_status.h"
#include "compare_tree.h"
#include "compare_tree_model.h"
#include "document.h"
#include "key_columns.h"
#include "leaf_view.h"
#include "node_text.h"
#include "widget_shortcut.h"

using Item = CompareTree::Item;

namespace {
// Up to this many keys, the collections holding differences open when the comparison ends.
constexpr std::size_t kExpandLimit = 5000;
}  // namespace

CompareView::CompareView(QWidget* parent)
    : QWidget(parent),
      documentB_(new Document(this)),
      model_(new CompareTreeModel(this)),
      filter_(new CompareFilterModel(this)),
      filterEdit_(new QLineEdit),
      differencesOnly_(new QCheckBox(tr("Differences only"))),
      tree_(new QTreeView),
      panel_(new ComparePanel),
      statusWidget_(new QWidget),
      counts_(new QLabel),
      progress_(new QProgressBar),
      cancel_(new QToolButton) {
    // NaN against NaN is no difference worth showing in a viewer.
    tolerance_.equalNan = true;
    filter_->setCompareModel(model_);

    filterEdit_->setPlaceholderText(tr("Filter keys (any depth)…"));
    filterEdit_->setClearButtonEnabled(true);
    differencesOnly_->setToolTip(
        tr("Show only the keys that differ, with the collections that lead to them"));
    tree_->setModel(filter_);
    tree_->setUniformRowHeights(true);
    tree_->setAlternatingRowColors(true);
    keyColumns_ = new KeyColumns(tree_, CompareTreeModel::KeyColumn);

    auto* left = new QWidget;
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    auto* filterRow = new QHBoxLayout;
    filterRow->addWidget(filterEdit_, 1);
    filterRow->addWidget(differencesOnly_);
    leftLayout->addLayout(filterRow);
    leftLayout->addWidget(tree_);
    auto* splitter = new QSplitter;
    splitter->addWidget(left);
    splitter->addWidget(panel_);
    splitter->setStretchFactor(0, 2);
    splitter->setStretchFactor(1, 3);
    splitter->setSizes({560, 840});
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(splitter);

    // Counts, progress and Cancel, for the status bar.
    auto* statusLayout = new QHBoxLayout(statusWidget_);
    statusLayout->setContentsMargins(0, 0, 0, 0);
    counts_->setObjectName("compareCounts");
    progress_->setRange(0, 1000);
    progress_->setMaximumWidth(220);
    progress_->setTextVisible(true);
    cancel_->setText(tr("Cancel"));
    cancel_->setToolTip(tr("Stop comparing; keys not compared yet are marked so"));
    statusLayout->addWidget(counts_);
    statusLayout->addWidget(progress_);
    statusLayout->addWidget(cancel_);
    progress_->hide();
    cancel_->hide();
    statusWidget_->hide();

    connect(documentB_, &Document::loaded, this, &CompareView::loadedB);
    connect(documentB_, &Document::failed, this, [this](const QString& message) {
        if (!active_)
            return;
        close();
        Q_EMIT loadFailed(message);
    });
    connect(filterEdit_, &QLineEdit::textChanged, this, &CompareView::applyFilter);
    connect(differencesOnly_, &QCheckBox::toggled, this, &CompareView::applyFilter);
    setAccessibleName(tr("Comparison"));
    addButtonShortcut(this, differencesOnly_, tr("Show differences only (or every key)"),
                      QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_F));
    connect(tree_->selectionModel(), &QItemSelectionModel::currentChanged, this,
            &CompareView::currentChanged);
    connect(cancel_, &QToolButton::clicked, this, &CompareView::cancel);
}

CompareView::~CompareView() {
    delete job_;  // cancels and waits for its worker
    if (statusWidget_ && !statusWidget_->parent())
        delete statusWidget_.data();
}

void CompareView::start(std::shared_ptr<const tensordict::TensorDict> a, const QString& pathB,
                        const QStringList& select) {
    close();
    active_ = true;
    a_ = std::move(a);
    select_ = select;
    if (statusWidget_ && statusWidget_->parent())
        statusWidget_->show();
    counts_->setText(tr("Opening B…"));
    documentB_->open(pathB);
    Q_EMIT message(tr("Opening %1 to compare…").arg(pathB), 0);
}

void CompareView::close() {
    delete job_;  // cancels and waits for its worker
    job_ = nullptr;
    panel_->clear();
    model_->clear();
    a_.reset();
    select_.clear();
    active_ = false;
    counts_->clear();
    progress_->hide();
    cancel_->hide();
    if (statusWidget_ && statusWidget_->parent())
        statusWidget_->hide();
}

bool CompareView::isLoading() const {
    return active_ && documentB_->isLoading();
}

bool CompareView::isComparing() const {
    return job_ && job_->isRunning();
}

void CompareView::cancel() {
    if (job_)
        job_->cancel();
}

QString CompareView::pathB() const {
    return documentB_->path();
}

void CompareView::loadedB() {
    if (!active_ || job_)
        return;
    job_ = new CompareJob(a_, documentB_->tensordict(), tolerance_, this);
    connect(job_, &CompareJob::treeReady, this, &CompareView::treeReady);
    connect(job_, &CompareJob::keysCompared, this, &CompareView::keysCompared);
    connect(job_, &CompareJob::progressed, this, &CompareView::progressed);
    connect(job_, &CompareJob::finished, this, &CompareView::jobFinished);
    progress_->setRange(0, 0);  // busy until the first bytes are compared
    progress_->show();
    cancel_->show();
    job_->start();
    updateCounts();
    Q_EMIT message(tr("Comparing with %1…").arg(documentB_->path()), 0);
    Q_EMIT comparing();
}

void CompareView::treeReady() {
    auto b = documentB_->tensordict();
    auto name = [](const tensordict::TensorDict& td) {
        return QFileInfo(QString::fromStdString(td.path())).fileName();
    };
    model_->setTree(job_->takeTree(), a_, b, tr("%1 ↔ %2").arg(name(*a_), name(*b)));
    if (filter_->isFiltering())
        applyFilter();
    const QModelIndex root = filter_->index(0, 0);
    tree_->expand(root);
    const QStringList select = std::exchange(select_, {});
    if (select.isEmpty() || !selectKeyPath(select))
        selectOnly(tree_, root);
    keyColumns_->fit();
}

void CompareView::keysCompared(const std::vector<tensordict::KeyComparison>& batch) {
    const std::vector<const Item*> touched = model_->apply(batch);
    if (filter_->differencesOnly())
        filter_->refilter();
    if (panel_->item() &&
        std::find(touched.begin(), touched.end(), panel_->item()) != touched.end())
        panel_->updateItem();
    updateCounts();
}

void CompareView::progressed(const tensordict::CompareProgress& p) {
    if (p.bytesTotal == 0)
        return;
    progress_->setRange(0, 1000);
    progress_->setValue(static_cast<int>(1000.0 * double(p.bytesDone) / double(p.bytesTotal)));
    progress_->setFormat(
        tr("%1 of %2")
            .arg(nodetext::byteSizeText(p.bytesDone), nodetext::byteSizeText(p.bytesTotal)));
}

void CompareView::jobFinished() {
    const JobOutcome outcome = job_->outcome();
    job_->deleteLater();
    job_ = nullptr;
    if (outcome.isCancelled())
        model_->markNotCompared();
    progress_->hide();
    cancel_->hide();
    if (filter_->isFiltering())
        applyFilter();
    expandDifferences();
    keyColumns_->fit();
    updateCounts();
    panel_->updateItem();
    const CompareTree* tree = model_->tree();
    if (outcome.isFailed())
        Q_EMIT message(tr("The comparison failed: %1").arg(outcome.text()), 0);
    else if (outcome.isCancelled())
        Q_EMIT message(tr("Comparison cancelled; %1 not compared.")
                           .arg(nodetext::countText(tree ? tree->counts().notCompared : 0,
                                                    tr("key"), tr("keys"))),
                       0);
    else
        Q_EMIT message(
            tr("Compared with %1.").arg(QString::fromStdString(documentB_->tensordict()->path())),
            0);
    Q_EMIT finished();
}

QString CompareView::countsText() const {
    const CompareTree* tree = model_->tree();
    if (!tree)
        return {};
    const CompareTree::Counts& c = tree->counts();
    const bool any = c.changed + c.onlyInA + c.onlyInB + c.errors > 0;
    if (isComparing())
        return any ? tr("%1 so far…").arg(compare_status::countsText(c)) : tr("comparing…");
    return compare_status::countsText(c);
}

void CompareView::updateCounts() {
    counts_->setText(countsText());
}

bool CompareView::selectKeyPath(const QStringList& path) {
    if (!model_->tree()) {
        select_ = path;  // selected when the tree arrives
        return active_;
    }
    std::vector<std::string> keys;
    for (const QString& k : path)
        keys.push_back(k.toStdString());
    const Item* item = model_->tree()->find(keys);
    if (!item)
        return false;
    model_->ensureFetched(item);
    const QModelIndex proxy = filter_->mapFromSource(model_->indexOf(item));
    if (!proxy.isValid())
        return false;
    selectOnly(tree_, proxy);
    return true;
}

bool CompareView::hasCurrentKey() const {
    return tree_->currentIndex().isValid();
}

QStringList CompareView::currentKeyPath() const {
    return tree_->currentIndex().data(CompareTreeModel::KeyPathRole).toStringList();
}

QString CompareView::showMode(int mode) {
    panel_->setMode(mode);
    return {};
}

QString CompareView::nextDifference() {
    if (!panel_->showsValues())
        return tr(
            "Select a changed leaf of the same shape in A and B to step through its "
            "differences.");
    panel_->nextDifference();
    return {};
}

SliceSelector* CompareView::currentSliceSelector() const {
    return panel_->showsValues() ? panel_->leafView()->sliceSelector() : nullptr;
}

void CompareView::currentChanged() {
    const Item* item = model_->item(filter_->mapToSource(tree_->currentIndex()));
    if (item == panel_->item())
        return;
    panel_->showItem(model_->tensorDictA(), model_->tensorDictB(), item, tolerance_);
}

void CompareView::applyFilter() {
    filter_->setFilter(filterEdit_->text().trimmed(), differencesOnly_->isChecked());
    if (filter_->isFiltering())
        tree_->expandAll();
}

void CompareView::expandDifferences() {
    const CompareTree* tree = model_->tree();
    if (!tree || tree->size() > kExpandLimit)
        return;
    std::vector<const Item*> stack{&tree->root()};
    while (!stack.empty()) {
        const Item* item = stack.back();
        stack.pop_back();
        if (item->differingBelow == 0)
            continue;
        model_->ensureFetched(item);
        tree_->expand(filter_->mapFromSource(model_->indexOf(item)));
        for (const auto& c : item->children)
            stack.push_back(c.get());
    }
}
