#include "overview_panel.h"

#include <QEvent>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QLocale>
#include <QPushButton>
#include <QScrollArea>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>
#include <utility>

#include "node_text.h"
#include "size_bar_chart.h"
#include "widget_shortcut.h"

using tensordict::Node;

namespace {

constexpr int kTop = 10;

QString leavesText(std::int64_t n) {
    return nodetext::countText(n, QObject::tr("leaf"), QObject::tr("leaves"));
}

QString keyPathText(const QStringList& path) {
    std::vector<std::string> keys;
    for (const QString& k : path)
        keys.push_back(k.toStdString());
    return nodetext::keyPathText(keys);
}

QLabel* heading(const QString& text) {
    auto* label = new QLabel(text);
    label->setWordWrap(true);  // a narrow pane
    QFont f = label->font();
    f.setBold(true);
    label->setFont(f);
    return label;
}

std::vector<SizeBarChart::Bar> keyBars(const std::vector<CollectionSummary::Entry>& entries) {
    std::vector<SizeBarChart::Bar> bars;
    for (const auto& e : entries)
        bars.push_back({e.label, e.bytes, nodetext::byteSizeText(e.bytes), e.keyPath,
                        QObject::tr("%1 (%2): %3 — click to select")
                            .arg(e.label, e.kind, nodetext::byteSizeText(e.bytes))});
    return bars;
}

}  // namespace

OverviewPanel::OverviewPanel(QWidget* parent)
    : QWidget(parent),
      title_(new QLabel),
      counts_(new QLabel),
      dataset_(new QLabel),
      episodesTitle_(heading(tr("Episodes"))),
      episodes_(new QTableWidget(0, 4)),
      childrenTitle_(heading(tr("Largest keys here"))),
      leavesTitle_(heading(tr("Largest leaves (any depth)"))),
      dtypesTitle_(heading(tr("Bytes by dtype"))),
      storageTitle_(heading(tr("Bytes by storage (on disk, compression)"))),
      filesTitle_(heading(tr("Bytes by file"))),
      children_(new SizeBarChart),
      leaves_(new SizeBarChart),
      dtypes_(new SizeBarChart),
      storage_(new SizeBarChart),
      files_(new SizeBarChart),
      problemsTitle_(heading(tr("Problems"))),
      problems_(new QListWidget),
      checkButton_(new QPushButton(tr("Check Integrity…"))),
      repair_(new QPushButton(tr("Repair…"))) {
    checkButton_->setToolTip(
        tr("Read every byte once and check the dataset against its format: checksums, the zip "
           "structure, every meta.json against its files (File > Check Integrity)"));
    repair_->setToolTip(tr("Fix what can be fixed without guessing; asks first"));
    setAccessibleName(tr("Overview"));
    addButtonShortcut(this, repair_, tr("Repair what the check found…"),
                      QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R));
    repair_->hide();
    connect(checkButton_, &QPushButton::clicked, this, &OverviewPanel::checkRequested);
    connect(repair_, &QPushButton::clicked, this, &OverviewPanel::repairRequested);
    QFont big = title_->font();
    big.setBold(true);
    big.setPointSizeF(big.pointSizeF() * 1.25);
    title_->setFont(big);
    title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    counts_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    counts_->setWordWrap(true);
    problems_->setToolTip(tr("Click a problem to select its key"));
    // Long problems wrap; the list grows with them, up to a dozen lines, then scrolls.
    problems_->setWordWrap(true);
    problems_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    problems_->setResizeMode(QListView::Adjust);
    problems_->setSizeAdjustPolicy(QAbstractScrollArea::AdjustToContents);
    problems_->setMaximumHeight(problems_->fontMetrics().lineSpacing() * 12);
    dataset_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    dataset_->setWordWrap(true);
    episodes_->setHorizontalHeaderLabels(
        {tr("Trajectory"), tr("First row"), tr("Length"), tr("Return")});
    episodes_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    episodes_->setSelectionBehavior(QAbstractItemView::SelectRows);
    episodes_->setSelectionMode(QAbstractItemView::SingleSelection);
    episodes_->verticalHeader()->hide();
    episodes_->horizontalHeader()->setStretchLastSection(true);
    episodes_->setToolTip(
        tr("Each run of one collector/traj_ids value in the rows shown: its "
           "length and return (the sum of next/reward). Click one to show "
           "its rows."));
    connect(episodes_, &QTableWidget::cellClicked, this, [this](int row, int) {
        if (const QTableWidgetItem* first = episodes_->item(row, 1))
            Q_EMIT rowActivated(first->data(Qt::UserRole).toLongLong());
    });

    auto* content = new QWidget;
    grid_ = new QGridLayout(content);
    grid_->setHorizontalSpacing(24);
    // The problems' heading, with the integrity check beside it.
    problemsHeader_ = new QWidget;
    auto* headerRow = new QHBoxLayout(problemsHeader_);
    headerRow->setContentsMargins(0, 0, 0, 0);
    headerRow->addWidget(problemsTitle_, 1);
    headerRow->addWidget(checkButton_);
    headerRow->addWidget(repair_);
    // Until the leaves are found in several files; in the content from the
    // start, so that showing them never makes them windows of their own.
    for (QWidget* part : std::initializer_list<QWidget*>{filesTitle_, files_, dataset_,
                                                         episodesTitle_, episodes_}) {
        part->setParent(content);
        part->hide();
    }
    arrange(2);

    scroll_ = new QScrollArea;
    scroll_->setWidget(content);
    scroll_->setWidgetResizable(true);
    scroll_->setFrameShape(QFrame::NoFrame);
    scroll_->viewport()->installEventFilter(this);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(scroll_);

    for (SizeBarChart* chart : {children_, leaves_})
        connect(chart, &SizeBarChart::keyActivated, this, &OverviewPanel::keyActivated);
    connect(problems_, &QListWidget::itemClicked, this, [this](QListWidgetItem* item) {
        const QStringList path = item->data(Qt::UserRole).toStringList();
        if (item->data(Qt::UserRole + 1).toBool())  // a problem, not the "none found" line
            Q_EMIT keyActivated(path);
    });
}

OverviewPanel::~OverviewPanel() = default;

void OverviewPanel::arrange(int columns) {
    if (columns == columns_)
        return;
    columns_ = columns;
    QWidget* parts[] = {title_,          counts_,       dataset_,     episodesTitle_, episodes_,
                        childrenTitle_,  children_,     leavesTitle_, leaves_,        dtypesTitle_,
                        dtypes_,         storageTitle_, storage_,     filesTitle_,    files_,
                        problemsHeader_, problems_};
    for (QWidget* part : parts)
        grid_->removeWidget(part);
    for (int r = 0; r < grid_->rowCount(); ++r) {
        grid_->setRowStretch(r, 0);
        grid_->setRowMinimumHeight(r, 0);
    }
    const int headingHeight = title_->fontMetrics().height() + 12;
    const int span = columns;
    grid_->addWidget(title_, 0, 0, 1, span);
    grid_->addWidget(counts_, 1, 0, 1, span);
    grid_->addWidget(dataset_, 2, 0, 1, span);
    grid_->addWidget(episodesTitle_, 3, 0, 1, span);
    grid_->addWidget(episodes_, 4, 0, 1, span);
    // (title, chart) pairs, side by side in twos or one under the other.
    const std::pair<QLabel*, SizeBarChart*> charts[] = {{childrenTitle_, children_},
                                                        {leavesTitle_, leaves_},
                                                        {dtypesTitle_, dtypes_},
                                                        {storageTitle_, storage_},
                                                        {filesTitle_, files_}};
    int row = 5, i = 0;
    for (const auto& [title, chart] : charts) {
        if (chart == files_ && files_->isHidden())
            continue;  // one file: nothing to say
        const int column = i++ % columns;
        grid_->addWidget(title, row, column);
        grid_->addWidget(chart, row + 1, column, Qt::AlignTop);
        grid_->setRowMinimumHeight(row, headingHeight);
        if (column == columns - 1)
            row += 2;
    }
    if (i % columns != 0)
        row += 2;
    grid_->addWidget(problemsHeader_, row, 0, 1, span);
    grid_->setRowMinimumHeight(row, headingHeight);
    grid_->addWidget(problems_, row + 1, 0, 1, span);
    grid_->setRowStretch(row + 2, 1);
    grid_->setColumnStretch(0, 1);
    grid_->setColumnStretch(1, columns == 2 ? 1 : 0);
    grid_->activate();  // parts shown just now are placed before the next paint
}

void OverviewPanel::fitColumns() {
    int widest = 0;
    for (const SizeBarChart* chart : {children_, leaves_, dtypes_, storage_, files_})
        widest = std::max(widest, chart->sizeHint().width());
    const QMargins m = grid_->contentsMargins();
    const int twoColumns = 2 * widest + grid_->horizontalSpacing() + m.left() + m.right();
    arrange(scroll_->viewport()->width() >= twoColumns ? 2 : 1);
}

bool OverviewPanel::eventFilter(QObject* watched, QEvent* event) {
    if (watched == scroll_->viewport() && event->type() == QEvent::Resize)
        fitColumns();
    return QWidget::eventFilter(watched, event);
}

void OverviewPanel::clear() {
    job_.cancel();  // a walk still running stops soon; its result is dropped
    owner_.reset();
    node_ = nullptr;
    summary_ = {};
    ready_ = false;
    for (QWidget* part : std::initializer_list<QWidget*>{dataset_, episodesTitle_, episodes_})
        part->hide();
}

void OverviewPanel::showNode(std::shared_ptr<const tensordict::TensorDict> owner,
                             const Node* collection) {
    clear();
    if (!collection)
        return;
    owner_ = std::move(owner);
    node_ = collection;
    title_->setText(collection->parent() ? nodetext::keyPathText(collection->keyPath())
                                         : tr("(root)"));
    counts_->setText(tr("Summarising %1…")
                         .arg(nodetext::countText(std::int64_t(collection->children().size()),
                                                  tr("key"), tr("keys"))));
    // Even a large subtree never stalls the window: the walk runs on a worker,
    // keeping its tree alive, and stops when another node is chosen.
    job_.start(
        [collection, owner = owner_](const tensordict::CancelToken& cancel) {
            return summarizeCollection(*collection, kTop, cancel);
        },
        [this](CollectionSummary result) { summarized(std::move(result)); });
}

void OverviewPanel::summarized(CollectionSummary result) {
    if (result.cancelled)
        return;
    summary_ = std::move(result);
    showSummary();
    ready_ = true;
    Q_EMIT summaryReady();
}

QString OverviewPanel::headline() const {
    return title_->text() + '\n' + counts_->text();
}

void OverviewPanel::showSummary() {
    const CollectionSummary& s = summary_;
    title_->setText((s.keyPath.isEmpty() ? tr("(root)") : title_->text()) + " — " + s.className);
    QStringList parts;
    parts << (s.hasBatchSize ? tr("batch size %1").arg(nodetext::shapeText(s.batchSize)) : s.kind);
    parts << tr("%1 of tensors in %2")
                 .arg(nodetext::byteSizeText(s.totalBytes), leavesText(s.leaves));
    QString keys = tr("%1 in all").arg(nodetext::countText(s.keys, tr("key"), tr("keys")));
    QStringList more;
    if (s.collections > 0)
        more << nodetext::countText(s.collections, tr("nested collection"),
                                    tr("nested collections"));
    if (s.nonTensors > 0)
        more << nodetext::countText(s.nonTensors, tr("non-tensor"), tr("non-tensors"));
    if (!more.isEmpty())
        keys += " (" + more.join(", ") + ")";
    parts << keys;
    counts_->setText(parts.join(" · "));
    dataset_->setText(s.datasetFacts.join('\n'));
    dataset_->setVisible(!s.datasetFacts.isEmpty());
    episodes_->setRowCount(int(s.episodes.size()));
    for (int i = 0; i < int(s.episodes.size()); ++i) {
        const tensordict::Episode& e = s.episodes[std::size_t(i)];
        const auto number = [](double v) {
            auto* item = new QTableWidgetItem(QLocale().toString(v, 'g', 7));
            item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            return item;
        };
        episodes_->setItem(i, 0, number(double(e.trajId)));
        QTableWidgetItem* first = number(double(e.firstRow));
        first->setData(Qt::UserRole, qlonglong(e.firstRow));
        episodes_->setItem(i, 1, first);
        QTableWidgetItem* length = number(double(e.length));
        if (e.partial) {
            length->setText(tr("%1 (part)").arg(length->text()));
            length->setToolTip(
                tr("Not whole: it began before the buffer's oldest row, or it "
                   "is the newest and not done"));
        }
        episodes_->setItem(i, 2, length);
        episodes_->setItem(i, 3, number(e.reward));
    }
    episodesTitle_->setText(s.episodeError.isEmpty() ? tr("Episodes (%1)").arg(s.episodes.size())
                                                     : tr("Episodes: %1").arg(s.episodeError));
    episodesTitle_->setVisible(!s.episodes.empty() || !s.episodeError.isEmpty());
    episodes_->setVisible(!s.episodes.empty());
    // As tall as its rows, up to a dozen; then it scrolls.
    const int shownRows = std::min<int>(int(s.episodes.size()), 12);
    episodes_->setFixedHeight(episodes_->horizontalHeader()->sizeHint().height() +
                              shownRows * episodes_->verticalHeader()->defaultSectionSize() +
                              2 * episodes_->frameWidth());

    childrenTitle_->setText(
        tr("Largest keys here (%1 of %2)").arg(s.largestChildren.size()).arg(s.ownKeys));
    children_->setBars(keyBars(s.largestChildren), tr("No keys"));
    leaves_->setBars(keyBars(s.largestLeaves), tr("No tensor leaves"));

    std::vector<SizeBarChart::Bar> dtypes;
    for (const auto& d : s.byDType)
        dtypes.push_back({d.dtype,
                          d.bytes,
                          tr("%1 · %2").arg(nodetext::byteSizeText(d.bytes), leavesText(d.leaves)),
                          {},
                          {}});
    dtypes_->setBars(std::move(dtypes), tr("No tensor leaves"));

    std::vector<SizeBarChart::Bar> storage;
    for (const auto& st : s.byStorage) {
        QString value = tr("%1 · %2").arg(nodetext::byteSizeText(st.bytes), leavesText(st.leaves));
        if (st.kind == tensordict::StorageKind::CompressedEntry)
            value += tr(" · %1 on disk (%2×)")
                         .arg(nodetext::byteSizeText(st.storedBytes))
                         .arg(st.compressionRatio(), 0, 'f', 1);
        storage.push_back({st.name, st.bytes, value, {}, {}});
    }
    storage_->setBars(std::move(storage), tr("No tensor leaves"));

    std::vector<SizeBarChart::Bar> files;
    for (const auto& f : s.byFile)
        files.push_back({f.name,
                         f.bytes,
                         tr("%1 · %2").arg(nodetext::byteSizeText(f.bytes), leavesText(f.leaves)),
                         {},
                         f.location});
    filesTitle_->setText(tr("Bytes by file (%1 files)").arg(s.byFile.size()));
    const bool hadFiles = !files_->isHidden();
    filesTitle_->setVisible(!files.empty());
    files_->setVisible(!files.empty());
    files_->setBars(std::move(files));
    if (hadFiles != !files_->isHidden()) {
        const int columns = std::exchange(columns_, 0);  // laid out again
        arrange(columns);
    }
    fitColumns();  // the figures' widths changed

    showProblems();
    if (revealProblemsWhenReady_)
        revealProblems();
}

void OverviewPanel::revealProblems() {
    if (!ready_) {
        revealProblemsWhenReady_ = true;
        return;
    }
    revealProblemsWhenReady_ = false;
    // Once laid out with them: the title and the list in view.
    QTimer::singleShot(0, this, [this] {
        scroll_->ensureWidgetVisible(problems_, 0, 0);
        scroll_->ensureWidgetVisible(problemsTitle_, 0, 0);
    });
}

bool OverviewPanel::problemsInView() const {
    const QRect shown(scroll_->viewport()->mapToGlobal(QPoint(0, 0)), scroll_->viewport()->size());
    const QRect list(problems_->mapToGlobal(QPoint(0, 0)), problems_->size());
    return shown.intersects(list);
}

void OverviewPanel::setCheckReport(std::shared_ptr<const tensordict::CheckReport> report) {
    check_ = std::move(report);
    if (ready_)
        showProblems();
}

void OverviewPanel::showProblems() {
    const CollectionSummary& s = summary_;
    problems_->clear();
    // The integrity check's problems under this collection, then what reading found.
    std::vector<const tensordict::Problem*> checked;
    std::int64_t checkedMore = 0;  // past those listed: --check lists them all
    if (check_)
        for (const tensordict::Problem& p : check_->problems) {
            const bool inside = p.key.size() >= std::size_t(s.keyPath.size()) &&
                                std::equal(s.keyPath.begin(), s.keyPath.end(), p.key.begin(),
                                           [](const QString& a, const std::string& b) {
                                               return a.toStdString() == b;
                                           });
            if (!inside && !s.keyPath.isEmpty())
                continue;
            if (checked.size() < std::size_t(CollectionSummary::kMaxProblems))
                checked.push_back(&p);
            else
                ++checkedMore;
        }
    const std::int64_t total = s.problemCount + std::int64_t(checked.size()) + checkedMore;
    problemsTitle_->setText(total > 0 ? tr("Problems (%1)").arg(total) : tr("Problems"));
    for (const tensordict::Problem* p : checked) {
        QStringList key;
        for (const std::string& k : p->key)
            key << QString::fromStdString(k);
        const bool error = p->severity == tensordict::Severity::Error;
        auto* item = new QListWidgetItem(
            tr("%1 · %2 · %3%4: %5")
                .arg(error ? tr("error") : tr("warning"), QString::fromStdString(p->kind),
                     QString::fromStdString(p->file),
                     key.isEmpty() ? QString() : " " + keyPathText(key),
                     QString::fromStdString(p->message)));
        item->setForeground(error ? QColor(0xc0, 0x20, 0x20) : QColor(0x9c, 0x65, 0x00));
        item->setToolTip(QString::fromStdString(p->message));
        item->setData(Qt::UserRole, key);
        item->setData(Qt::UserRole + 1, !key.isEmpty());
        problems_->addItem(item);
    }
    if (checkedMore > 0)
        problems_->addItem(tr("… and %1 more found by the check (tdstudio --check lists them all)")
                               .arg(checkedMore));
    for (const auto& p : s.problems) {
        auto* item = new QListWidgetItem(QString("%1: %2").arg(
            p.keyPath.isEmpty() ? tr("(root)") : keyPathText(p.keyPath), p.text));
        item->setForeground(QColor(0xc0, 0x20, 0x20));
        item->setData(Qt::UserRole, p.keyPath);
        item->setData(Qt::UserRole + 1, true);
        problems_->addItem(item);
    }
    if (s.problemCount > static_cast<std::int64_t>(s.problems.size()))
        problems_->addItem(
            tr("… and %1 more").arg(s.problemCount - std::int64_t(s.problems.size())));
    if (total == 0)
        problems_->addItem(
            check_ && !check_->cancelled
                ? tr("None found: the integrity check found the dataset sound (%1 read).")
                      .arg(nodetext::byteSizeText(check_->bytes))
                : tr("None found: every part could be read, no integrity warning, "
                     "no link out of the dataset."));
    const bool repairable =
        check_ && std::any_of(check_->problems.begin(), check_->problems.end(),
                              [](const tensordict::Problem& p) { return p.repairable; });
    repair_->setVisible(repairable);
    problems_->updateGeometry();  // as tall as its wrapped lines, up to its maximum
}
