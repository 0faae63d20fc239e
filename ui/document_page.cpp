#include "document_page.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSettings>
#include <QShortcut>
#include <QSplitter>
#include <QStackedWidget>
#include <QTreeView>
#include <QVBoxLayout>
#include <algorithm>
#include <utility>

#include "details_panel.h"
#include "key_columns.h"
#include "key_filter_model.h"
#include "key_index.h"
#include "key_tree_model.h"
#include "leaf_view.h"
#include "overview_panel.h"
#include "preview_panel.h"
#include "slice_selector.h"

DocumentPage::DocumentPage(QWidget* parent)
    : QWidget(parent),
      model_(new KeyTreeModel(this)),
      filter_(new KeyFilterModel(this)),
      tree_(new QTreeView),
      filterEdit_(new QLineEdit),
      filterStatus_(new QLabel),
      details_(new DetailsPanel),
      preview_(new PreviewPanel),
      overview_(new OverviewPanel),
      content_(new QStackedWidget),
      treeSplitter_(new QSplitter),
      detailsSplitter_(new QSplitter(Qt::Vertical)) {
    filter_->setKeyModel(model_);
    filterEdit_->setPlaceholderText(tr("Filter keys (any depth)…"));
    filterEdit_->setClearButtonEnabled(true);
    connect(preview_, &PreviewPanel::reloadRequested, this, &DocumentPage::reloadRequested);
    connect(preview_, &PreviewPanel::exported, this, &DocumentPage::exported);
    connect(filterEdit_, &QLineEdit::textChanged, this, [this](const QString& text) {
        // Clearing the filter keeps the key selected in it, shown in the whole tree.
        const QStringList keep = text.trimmed().isEmpty() ? currentKeyPath() : QStringList();
        filter_->setPattern(text.trimmed());
        updateFilterStatus();
        if (!keep.isEmpty())
            selectKeyPath(keep);
    });
    connect(filter_, &KeyFilterModel::searchFinished, this, &DocumentPage::updateFilterStatus);
    // The keyboard, as in a file manager: Escape clears, Down or Enter goes to the matches.
    auto* clear = new QShortcut(QKeySequence(Qt::Key_Escape), filterEdit_, nullptr, nullptr,
                                Qt::WidgetShortcut);
    connect(clear, &QShortcut::activated, filterEdit_, &QLineEdit::clear);
    connect(filterEdit_, &QLineEdit::returnPressed, this, &DocumentPage::goToMatches);
    auto* down = new QShortcut(QKeySequence(Qt::Key_Down), filterEdit_, nullptr, nullptr,
                               Qt::WidgetShortcut);
    connect(down, &QShortcut::activated, this, &DocumentPage::goToMatches);
    filterStatus_->setStyleSheet("color: #5e5c64;");
    filterStatus_->hide();
    // The filter fetches and shows only the rows leading to its matches: open those.
    connect(filter_, &KeyFilterModel::matchPathsShown, this, [this](const QModelIndexList& rows) {
        for (const QModelIndex& row : rows)
            tree_->expand(row);
    });

    tree_->setModel(filter_);
    tree_->setUniformRowHeights(true);
    tree_->setAlternatingRowColors(true);
    tree_->setSelectionMode(QAbstractItemView::ExtendedSelection);
    tree_->setAccessibleName(tr("Key tree"));
    // Keys stay readable at any width: the other columns as wide as their
    // contents, the key column the rest but never less than its keys need.
    new KeyColumns(tree_, KeyTreeModel::KeyColumn);
    connect(tree_->selectionModel(), &QItemSelectionModel::currentChanged, this,
            &DocumentPage::updateDetails);
    // Several leaves of one length selected (Ctrl- or Shift-click): plotted together.
    // After currentChanged, which showed the current one alone.
    connect(tree_->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            [this] { preview_->showSeries(model_->tensorDict(), selectedNodes()); });

    auto* left = new QWidget;
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    leftLayout->addWidget(filterEdit_);
    leftLayout->addWidget(filterStatus_);
    leftLayout->addWidget(tree_);

    content_->addWidget(preview_);
    content_->addWidget(overview_);
    // The preview gets the room; the details keep what their fields need.
    detailsSplitter_->addWidget(content_);
    detailsSplitter_->addWidget(details_);
    detailsSplitter_->setStretchFactor(0, 1);
    detailsSplitter_->setStretchFactor(1, 0);
    detailsSplitter_->setCollapsible(0, false);
    treeSplitter_->addWidget(left);
    treeSplitter_->addWidget(detailsSplitter_);
    treeSplitter_->setStretchFactor(0, 2);
    treeSplitter_->setStretchFactor(1, 3);
    treeSplitter_->setSizes({580, 820});
    detailsSplitter_->setSizes({650, 150});
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(treeSplitter_);

    connect(details_, &DetailsPanel::copyKeyPathRequested, this,
            &DocumentPage::copyKeyPathRequested);
    connect(details_, &DetailsPanel::collapsedChanged, this, [this](bool collapsed) {
        const int total = detailsSplitter_->height();
        // Folded, the header keeps its one line and the preview takes the rest;
        // unfolded, the fields get back the room they need, no more.
        const int wanted = collapsed
                               ? details_->sizeHint().height()
                               : std::clamp(details_->sizeHint().height(), total / 5, total / 3);
        detailsSplitter_->setSizes({total - wanted, wanted});
        saveLayout();
    });
    connect(overview_, &OverviewPanel::keyActivated, this,
            [this](const QStringList& path) { selectKeyPath(path); });
    // An episode of a replay buffer: its rows, in the leaf of its rewards.
    connect(overview_, &OverviewPanel::rowActivated, this, [this](std::int64_t row) {
        const tensordict::Node* root = overview_->node();
        const tensordict::Node* leaf = root ? root->find({"next", "reward"}) : nullptr;
        if (!leaf || !leaf->isTensor())
            return;
        preview_->showRow(leaf, row);
        selectKeyPath({"next", "reward"});
    });
    for (QSplitter* s : {treeSplitter_, detailsSplitter_})
        connect(s, &QSplitter::splitterMoved, this, &DocumentPage::saveLayout);
}

void DocumentPage::showTensorDict(std::shared_ptr<const tensordict::TensorDict> td,
                                  const QString& label, std::shared_ptr<const KeyIndex> keyIndex) {
    grouping_.cancel();
    original_ = std::move(td);
    label_ = label;
    keyIndex_ = std::move(keyIndex);
    if (groupByDots_ && original_) {
        groupByDots_ = false;  // shown flat until the grouped tree is built
        setGroupKeysByDots(true);
    }
    showTree(original_, {});
}

void DocumentPage::setGroupKeysByDots(bool on) {
    if (on == groupByDots_)
        return;
    groupByDots_ = on;
    grouping_.cancel();
    if (!original_)
        return;
    if (!on)
        return showTree(original_, currentKeyPath());
    // A copy of the tree's metadata: on a worker, for trees of any size.
    grouping_.start(
        [td = original_](const tensordict::CancelToken&) {
            return std::make_shared<const tensordict::TensorDict>(tensordict::groupKeysByDots(*td));
        },
        [this](std::shared_ptr<const tensordict::TensorDict> grouped) {
            showTree(std::move(grouped), currentKeyPath());
        });
}

void DocumentPage::showTree(std::shared_ptr<const tensordict::TensorDict> shown,
                            const QStringList& keep) {
    // The flat tree's key index is the document's; a grouped one indexes itself.
    const bool flat = shown == original_;
    model_->setTensorDict(std::move(shown), label_, flat ? keyIndex_ : nullptr);
    const QModelIndex root = filter_->index(0, 0);
    tree_->expand(root);
    if (keep.isEmpty() || !selectKeyPath(keep))
        selectOnly(tree_, root);
    Q_EMIT treeShown();
}

const tensordict::Node* DocumentPage::selectedNode() const {
    return model_->node(filter_->mapToSource(tree_->currentIndex()));
}

std::vector<const tensordict::Node*> DocumentPage::selectedNodes() const {
    std::vector<const tensordict::Node*> nodes;
    for (const QModelIndex& row : tree_->selectionModel()->selectedRows(KeyTreeModel::KeyColumn))
        nodes.push_back(model_->node(filter_->mapToSource(row)));
    return nodes;
}

QStringList DocumentPage::currentKeyPath() const {
    QStringList keys;
    if (const tensordict::Node* node = selectedNode())
        for (const std::string& k : node->keyPath())
            keys << QString::fromStdString(k);
    return keys;
}

bool DocumentPage::selectKeyPath(const QStringList& path) {
    auto td = model_->tensorDict();  // as shown: find() looks inside key groups
    if (!td)
        return false;
    std::vector<std::string> keys;
    for (const QString& k : path)
        keys.push_back(k.toStdString());
    const tensordict::Node* node = td->root().find(keys);
    if (!node)
        return false;
    model_->ensureFetched(node);
    const QModelIndex proxy = filter_->mapFromSource(model_->indexOf(node));
    if (!proxy.isValid())
        return false;
    selectOnly(tree_, proxy);
    return true;
}

QString DocumentPage::showMode(int mode) {
    const tensordict::Node* node = preview_->node();
    if (showsOverview() || !node || !node->isTensor())
        return tr("Select a tensor leaf to preview it.");
    if (!preview_->canShow(mode))
        return tr("This leaf has no such view.");
    preview_->setMode(mode);
    return {};
}

SliceSelector* DocumentPage::currentSliceSelector() const {
    const tensordict::Node* node = preview_->node();
    if (showsOverview() || !node || !node->isTensor())
        return nullptr;
    // The current mode's, or the table's (the statistics of a slice are those of the table's).
    return preview_->leafView()->sliceSelector();
}

bool DocumentPage::focusSliceEntry() {
    if (Page::focusSliceEntry())
        return true;
    // No slider (a 2-D table): the row to go to.
    if (currentSliceSelector() && preview_->mode() == PreviewPanel::TableMode) {
        preview_->goToRowField()->setFocus(Qt::ShortcutFocusReason);
        preview_->goToRowField()->selectAll();
        return true;
    }
    return false;
}

void DocumentPage::updateDetails() {
    const tensordict::Node* node = selectedNode();
    details_->showNode(node, model_);
    preview_->showNode(model_->tensorDict(), node);
    // A collection shows what takes its space; anything else, its preview.
    if (node && node->isCollection()) {
        overview_->showNode(model_->tensorDict(), node);
        content_->setCurrentWidget(overview_);
    } else {
        overview_->clear();
        content_->setCurrentWidget(preview_);
    }
}

void DocumentPage::updateFilterStatus() {
    const QString pattern = filter_->pattern();
    filterStatus_->setVisible(!pattern.isEmpty());
    if (pattern.isEmpty())
        return;
    if (filter_->isSearching())
        filterStatus_->setText(tr("Searching…"));
    else if (filter_->matchCount() == 0)
        filterStatus_->setText(tr("No key matches “%1”.").arg(pattern));
    else
        filterStatus_->setText(filter_->matchCount() == 1
                                   ? tr("1 key matches")
                                   : tr("%1 keys match").arg(filter_->matchCount()));
}

void DocumentPage::goToMatches() {
    tree_->setFocus(Qt::ShortcutFocusReason);
    if (filter_->pattern().isEmpty())
        return;
    // The current row if it matches, else the first match in tree order.
    const QString folded = filter_->pattern().toCaseFolded();
    const auto matches = [&](const QModelIndex& row) {
        const tensordict::Node* n = model_->node(filter_->mapToSource(row));
        return n && n->parent() && QString::fromStdString(n->key()).toCaseFolded().contains(folded);
    };
    if (tree_->currentIndex().isValid() && matches(tree_->currentIndex()))
        return;
    std::vector<QModelIndex> stack{filter_->index(0, 0)};
    while (!stack.empty()) {
        const QModelIndex row = stack.back();
        stack.pop_back();
        if (matches(row)) {
            selectOnly(tree_, row);
            return;
        }
        for (int r = filter_->rowCount(row); r-- > 0;)
            stack.push_back(filter_->index(r, 0, row));
    }
}

bool DocumentPage::showsOverview() const {
    return content_->currentWidget() == overview_;
}

void DocumentPage::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    // Once laid out at its real size: splitter sizes restored earlier would be
    // scaled as the page grows to it.
    if (!std::exchange(layoutRestored_, true))
        restoreLayout();
}

void DocumentPage::restoreLayout() {
    QSettings settings;
    const bool collapsed = settings.value("layout/detailsCollapsed", false).toBool();
    treeSplitter_->restoreState(settings.value("layout/treeSplitter").toByteArray());
    detailsSplitter_->restoreState(settings.value("layout/detailsSplitter").toByteArray());
    details_->setCollapsed(collapsed);  // last: it saves the layout
}

void DocumentPage::saveLayout() const {
    QSettings settings;
    settings.setValue("layout/treeSplitter", treeSplitter_->saveState());
    settings.setValue("layout/detailsSplitter", detailsSplitter_->saveState());
    settings.setValue("layout/detailsCollapsed", details_->isCollapsed());
}
