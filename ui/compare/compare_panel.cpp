#include "compare_panel.h"

#include <QAction>
#include <QComboBox>
#include <QHBoxLayout>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLocale>
#include <QSettings>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTableView>
#include <QTextBrowser>
#include <QTextDocument>
#include <QToolButton>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <tuple>

#include "compare_image_view.h"
#include "compare_status.h"
#include "node_text.h"
#include "plot_view.h"
#include "preview_panel.h"
#include "slice_selector.h"
#include "statistics_view.h"
#include "tensor_table_model.h"
#include "tensor_table_view.h"
#include "tensordict/guarded_read.h"

using Item = CompareTree::Item;
using Status = CompareTree::Status;
using tensordict::Node;
using tensordict::NodeKind;

namespace {

constexpr int kMaxListedDifferences = 50;  // in a collection's description
constexpr int kMaxValueChars = 4000;       // of a non-tensor value's JSON

QString keyTitle(const Item& item) {
    return item.parent ? nodetext::keyPathText(item.keyPath())
                       : QObject::tr("the whole tensordict");
}

QString plainText(const QString& html) {
    QTextDocument doc;
    doc.setHtml(html);
    return doc.toPlainText();
}

QString colored(const QString& text, const QColor& color) {
    return QString("<span style=\"color:%1\">%2</span>").arg(color.name(), text);
}

QString kindOf(const Node& n) {
    QString kind = nodetext::kindText(n);
    if (n.kind() == NodeKind::TensorClass || n.kind() == NodeKind::View)
        kind += " " + QString::fromStdString(n.className());
    return kind;
}

// One property of a node as the description shows it ("" when it has none).
QString nodeProperty(const Node* n, const QString& name) {
    if (!n)
        return {};
    const bool tensor = n->isTensor();
    const bool nonTensor =
        n->kind() == NodeKind::NonTensorData || n->kind() == NodeKind::NonTensorStack;
    if (name == "kind")
        return kindOf(*n);
    if (name == "shape" && tensor)
        return n->leaf().isNested
                   ? QObject::tr("nested, %1 parts").arg(n->leaf().nestedShapes.size())
                   : nodetext::shapeText(n->leaf().shape);
    if (name == "batch" && !tensor && !n->isError())
        return nodetext::shapeText(n->batchSize());
    if (name == "dtype" && tensor)
        return nodetext::torchDtypeText(n->leaf().dtype);
    if (name == "device" && !n->isError())
        return QString::fromStdString(n->device().value_or("—"));
    if (name == "elements" && tensor)
        return QLocale().toString(qlonglong(n->leaf().numel));
    if (name == "size" && tensor)
        return nodetext::byteSizeText(n->leaf().nbytes);
    if (name == "keys" && n->isCollection())
        return QString::number(n->children().size());
    if (name == "storage" && tensor)
        return nodetext::storageText(*n);
    if (name == "value" && nonTensor) {
        if (n->nonTensor().pickleOpaque)
            return QObject::tr("<pickled Python object, never unpickled>");
        QString json =
            QString::fromStdString(tensordict::toJson(n->value(), tensordict::JsonStyle::Pretty));
        if (json.size() > kMaxValueChars)
            json = json.left(kMaxValueChars) + QStringLiteral("\n…");
        return json;
    }
    if (name == "error" && n->isError())
        return QString::fromStdString(n->error());
    return {};
}

}  // namespace

ComparePanel::ComparePanel(QWidget* parent)
    : QWidget(parent),
      summary_(new QLabel),
      pages_(new QStackedWidget),
      message_(new QLabel),
      description_(new QTextBrowser),
      tabs_(new QTabWidget),
      tableModel_(new TensorTableModel(this)),
      tableSlice_(new SliceSelector(SliceSelector::Mode::Table)),
      shown_(new QComboBox),
      next_(new QToolButton),
      cell_(new QLabel),
      imageView_(new CompareImageView),
      plotView_(new PlotView),
      statisticsView_(new StatisticsView) {
    tableView_ = new TensorTableView(tableModel_);
    summary_->setWordWrap(true);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    summary_->setVisible(false);
    message_->setAlignment(Qt::AlignCenter);
    message_->setWordWrap(true);
    message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    description_->setOpenLinks(false);

    auto* statisticsPage = new QWidget;
    auto* statisticsLayout = new QVBoxLayout(statisticsPage);
    statisticsLayout->setContentsMargins(0, 0, 0, 0);
    statisticsLayout->addWidget(new QLabel(tr("Statistics of the difference A − B:")));
    statisticsLayout->addWidget(statisticsView_, 1);
    tabs_->addTab(makeTablePage(), tr("Table"));
    tabs_->addTab(imageView_, tr("Image"));
    tabs_->addTab(plotView_, tr("Plot"));
    tabs_->addTab(statisticsPage, tr("Statistics"));
    connect(tabs_, &QTabWidget::currentChanged, this, &ComparePanel::modeChosen);

    pages_->addWidget(message_);
    pages_->addWidget(description_);
    pages_->addWidget(tabs_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(summary_);
    layout->addWidget(pages_, 1);
    showMessage(tr("Select a key to compare its two sides."));

    connect(&watcher_, &QFutureWatcherBase::finished, this, &ComparePanel::leavesLoaded);
    connect(&searchWatcher_, &QFutureWatcherBase::finished, this, &ComparePanel::searchDone);
    connect(tableModel_, &TensorTableModel::sourceChanged, this, &ComparePanel::sourceChanged);
    connect(imageView_, &CompareImageView::sourceChanged, this, &ComparePanel::sourceChanged);
    connect(plotView_, &PlotView::sourceChanged, this, &ComparePanel::sourceChanged);
    connect(statisticsView_, &StatisticsView::sourceChanged, this, &ComparePanel::sourceChanged);
    connect(tableSlice_, &SliceSelector::sliceChanged, this, [this](const TensorSlice& slice) {
        tableModel_->setSlice(slice);
        tableView_->fitColumns();
        statisticsView_->setCurrentSlice(slice);
        showCurrentCell();
    });
}

ComparePanel::~ComparePanel() {
    watcher_.waitForFinished();
    searchWatcher_.waitForFinished();
}

QWidget* ComparePanel::makeTablePage() {
    auto* page = new QWidget;
    shown_->addItems({tr("A"), tr("B"), tr("A − B")});
    shown_->setToolTip(tr("What the cells show; differing cells are highlighted in every case"));
    auto* next = new QAction(tr("Next difference"), this);
    next->setShortcut(QKeySequence(Qt::Key_F3));
    next->setToolTip(tr("Go to the next element that differs, after the current cell (F3)"));
    next_->setDefaultAction(next);
    next_->setToolButtonStyle(Qt::ToolButtonTextOnly);
    cell_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Cells show:")));
    bar->addWidget(shown_);
    bar->addWidget(next_);
    bar->addWidget(cell_, 1);
    auto* layout = new QVBoxLayout(page);
    layout->addLayout(bar);
    layout->addWidget(tableSlice_);
    layout->addWidget(tableView_, 1);
    connect(next, &QAction::triggered, this, &ComparePanel::nextDifference);
    connect(shown_, &QComboBox::currentIndexChanged, this, [this](int index) {
        tableModel_->setShown(static_cast<TensorTableModel::Shown>(index));
        tableView_->fitColumns();
    });
    connect(tableView_->table()->selectionModel(), &QItemSelectionModel::currentChanged, this,
            &ComparePanel::showCurrentCell);
    return page;
}

void ComparePanel::showItem(std::shared_ptr<const tensordict::TensorDict> a,
                            std::shared_ptr<const tensordict::TensorDict> b, const Item* item,
                            const tensordict::Tolerance& tolerance) {
    // A read still running for the previous key finishes on its own (it keeps
    // its trees alive); the watchers only report the newest.
    a_ = std::move(a);
    b_ = std::move(b);
    item_ = item;
    tolerance_ = tolerance;
    aBytes_ = bBytes_ = {};
    tableModel_->clear();
    imageView_->clear();
    plotView_->clear();
    statisticsView_->clear();
    summary_->setText(summaryHtml());
    summary_->setVisible(item != nullptr);
    if (!item) {
        showMessage(tr("Select a key to compare its two sides."));
        return;
    }
    if (!item->comparableLeaves()) {
        showDescription();
        return;
    }
    const bool inflate = item->a->leaf().storage.kind == tensordict::StorageKind::CompressedEntry ||
                         item->b->leaf().storage.kind == tensordict::StorageKind::CompressedEntry;
    showMessage(inflate ? tr("Inflating…") : tr("Mapping…"));
    // Mapping is quick, inflating a compressed entry is not: never on this thread.
    watcher_.setFuture(QtConcurrent::run([na = item->a, nb = item->b, a = a_, b = b_] {
        return std::make_pair(na->bytes(), nb->bytes());
    }));
}

void ComparePanel::updateItem() {
    if (!item_)
        return;
    summary_->setText(summaryHtml());
    if (pages_->currentWidget() == description_)
        showDescription();
    if (showsValues())
        showCurrentCell();
}

bool ComparePanel::showsValues() const {
    return pages_->currentWidget() == tabs_;
}

ComparePanel::Mode ComparePanel::mode() const {
    return static_cast<Mode>(tabs_->currentIndex());
}

void ComparePanel::setMode(Mode mode) {
    tabs_->setCurrentIndex(mode);
}

QString ComparePanel::message() const {
    return pages_->currentWidget() == message_ ? message_->text() : QString();
}

QString ComparePanel::description() const {
    return pages_->currentWidget() == description_ ? description_->toPlainText() : QString();
}

QString ComparePanel::summary() const {
    return plainText(summary_->text());
}

void ComparePanel::showMessage(const QString& text) {
    message_->setText(text);
    pages_->setCurrentWidget(message_);
}

void ComparePanel::showDescription() {
    description_->setHtml(descriptionHtml());
    pages_->setCurrentWidget(description_);
}

QString ComparePanel::summaryHtml() const {
    if (!item_)
        return {};
    const Item& i = *item_;
    const Status shownStatus =
        i.status == Status::Same && i.differingBelow ? Status::Changed : i.status;
    QString html = QString("<b>%1</b> · %2")
                       .arg(keyTitle(i).toHtmlEscaped(),
                            colored(compare_status::itemStatusText(i).toHtmlEscaped(),
                                    compare_status::statusColor(shownStatus)));
    const QString what = compare_status::differenceText(i);
    if (!what.isEmpty())
        html += ": " + what.toHtmlEscaped();
    auto side = [](const QString& name, const Node* n) {
        QString text = name + ": " + compare_status::sideText(n).toHtmlEscaped();
        if (n && n->isTensor())
            text += " · " + nodetext::byteSizeText(n->leaf().nbytes);
        return text;
    };
    return html + "<br>" + side(tr("A"), i.a) + " &nbsp;&nbsp; " + side(tr("B"), i.b);
}

QString ComparePanel::descriptionHtml() const {
    const Item& i = *item_;
    QString html;
    switch (i.status) {
        case Status::OnlyInA:
            html += tr("<p>Only A has this key%1.</p>")
                        .arg(i.parent && !i.parent->b ? tr(" (B lacks its parent too)") : "");
            break;
        case Status::OnlyInB:
            html += tr("<p>Only B has this key%1.</p>")
                        .arg(i.parent && !i.parent->a ? tr(" (A lacks its parent too)") : "");
            break;
        case Status::Error:
            html += tr("<p>A side could not be read: %1</p>")
                        .arg(QString::fromStdString(i.error).toHtmlEscaped());
            break;
        case Status::Same:
            html += i.differingBelow
                        ? tr("<p>The same in A and B, apart from the keys inside listed below.</p>")
                        : tr("<p>The same in A and B.</p>");
            break;
        case Status::Changed:
            html += tr("<p>What differs: %1.</p>")
                        .arg(compare_status::differenceText(i).toHtmlEscaped());
            break;
        case Status::Pending:
            html += tr("<p>Comparing…</p>");
            break;
        case Status::NotCompared:
            html += tr("<p>Not compared: the comparison was cancelled.</p>");
            break;
    }

    // Side by side; the properties that differ are highlighted.
    const QColor highlight = compare_status::rowTint(Status::Changed, palette());
    html += "<table cellspacing=\"0\" cellpadding=\"4\" width=\"100%\">";
    html += QString("<tr><th></th><th align=\"left\">%1</th><th align=\"left\">%2</th></tr>")
                .arg(tr("A"), tr("B"));
    const std::pair<const char*, QString> rows[] = {
        {"kind", tr("Kind")},   {"shape", tr("Shape")},   {"batch", tr("Batch size")},
        {"dtype", tr("DType")}, {"device", tr("Device")}, {"elements", tr("Elements")},
        {"size", tr("Size")},   {"keys", tr("Keys")},     {"storage", tr("Storage")},
        {"value", tr("Value")}, {"error", tr("Error")},
    };
    for (const auto& [name, label] : rows) {
        const QString a = nodeProperty(i.a, name), b = nodeProperty(i.b, name);
        if (a.isEmpty() && b.isEmpty())
            continue;
        const bool differs = i.a && i.b && a != b && QLatin1String(name) != "storage";
        auto cell = [&](const QString& text, bool present) {
            if (!present)
                return colored(QStringLiteral("—"), compare_status::statusColor(Status::Same));
            const QString escaped = text.toHtmlEscaped();
            return QLatin1String(name) == "value" ? "<pre>" + escaped + "</pre>" : escaped;
        };
        html += QString(
                    "<tr%1><td><b>%2</b></td><td valign=\"top\">%3</td>"
                    "<td valign=\"top\">%4</td></tr>")
                    .arg(differs ? QString(" style=\"background:%1\"").arg(highlight.name())
                                 : QString(),
                         label, cell(a, !a.isEmpty()), cell(b, !b.isEmpty()));
    }
    html += "</table>";

    // A collection: which keys inside differ (not below keys on one side only).
    if (i.differingBelow > 0) {
        html += tr("<p><b>%n key(s) inside differ:</b></p><ul>", "", i.differingBelow);
        int listed = 0;
        std::vector<const Item*> stack;
        for (auto it = i.children.rbegin(); it != i.children.rend(); ++it)
            stack.push_back(it->get());
        while (!stack.empty() && listed < kMaxListedDifferences) {
            const Item* c = stack.back();
            stack.pop_back();
            if (c->reported && c->differs()) {
                const QString what = compare_status::differenceText(*c);
                html += QString("<li>%1 — %2%3</li>")
                            .arg(nodetext::keyPathText(c->keyPath()).toHtmlEscaped(),
                                 colored(compare_status::statusText(c->status),
                                         compare_status::statusColor(c->status)),
                                 what.isEmpty() ? QString() : ": " + what.toHtmlEscaped());
                ++listed;
            }
            if (c->a && c->b)
                for (auto it = c->children.rbegin(); it != c->children.rend(); ++it)
                    stack.push_back(it->get());
        }
        html += "</ul>";
        if (i.differingBelow > listed)
            html += tr("<p>… and %1 more (Differences only shows them all).</p>")
                        .arg(i.differingBelow - listed);
    }
    return html;
}

void ComparePanel::leavesLoaded() {
    if (!item_ || !item_->comparableLeaves())
        return;
    try {
        std::tie(aBytes_, bBytes_) = watcher_.result();
    } catch (const std::exception& e) {
        showMessage(tr("Cannot read this key: %1").arg(QString::fromUtf8(e.what())));
        return;
    }
    const Node& a = *item_->a;
    const Node& b = *item_->b;
    const TensorSlice slice = TensorSlice::defaultFor(a.leaf().shape);
    tableSlice_->setSlice(slice);
    tableModel_->setLeaf(a.leaf().dtype, aBytes_, slice);
    tableModel_->setOther(b.leaf().dtype, bBytes_, tolerance_);
    tableModel_->setShown(static_cast<TensorTableModel::Shown>(shown_->currentIndex()));
    tableView_->fitColumns();
    const bool image = a.leaf().shape.size() >= 2;
    const bool plot = !a.leaf().shape.empty();
    tabs_->setTabEnabled(ImageMode, image);
    tabs_->setTabEnabled(PlotMode, plot);
    if (image)
        imageView_->setLeaves(a.leaf().dtype, aBytes_, b.leaf().dtype, bBytes_, a.leaf().shape);
    if (plot) {
        plotView_->setOther(b.leaf().dtype, bBytes_, tr("A"), tr("B"));
        plotView_->setLeaf(a.leaf().dtype, aBytes_, a.leaf().shape);
    }
    statisticsView_->setLeaf(a.leaf().dtype, aBytes_, a.leaf().numel);
    statisticsView_->setOther(b.leaf().dtype, bBytes_);
    statisticsView_->setCurrentSlice(slice);
    statisticsStale_ = true;

    // The mode last chosen for this kind of shape, as the preview does.
    const QString kind = PreviewPanel::shapeKind(a.leaf().shape);
    const int fallback = kind == "hwc" || kind == "chw" ? ImageMode : TableMode;
    int wanted = QSettings().value("compare/mode/" + kind, fallback).toInt();
    if (wanted < 0 || wanted >= tabs_->count() || !tabs_->isTabEnabled(wanted))
        wanted = TableMode;
    restoringMode_ = true;
    tabs_->setCurrentIndex(wanted);
    restoringMode_ = false;
    pages_->setCurrentWidget(tabs_);
    modeChosen(wanted);
    showCurrentCell();
    Q_EMIT leafReady();
}

void ComparePanel::modeChosen(int index) {
    if (!showsValues() || !item_)
        return;
    if (!restoringMode_)  // remember the user's choice for this kind of shape
        QSettings().setValue("compare/mode/" + PreviewPanel::shapeKind(item_->a->leaf().shape),
                             index);
    if (index == StatisticsMode && statisticsStale_ && aBytes_.data) {
        statisticsStale_ = false;
        statisticsView_->compute();
    }
}

void ComparePanel::showCurrentCell() {
    if (!item_ || !aBytes_.data)
        return;
    QString counts;
    if (item_->values)
        counts = tr("%1 of %2 elements differ")
                     .arg(QLocale().toString(qulonglong(item_->values->differing)),
                          QLocale().toString(qlonglong(item_->a->leaf().numel)));
    std::int64_t row = 0, col = 0;
    if (!tableView_->currentCell(&row, &col)) {
        cell_->setText(counts);
        return;
    }
    const std::int64_t flat = tableModel_->slice().elementIndex(row, col);
    QStringList index;
    for (const std::int64_t i : tensordict::unflattenIndex(flat, item_->a->leaf().shape))
        index << QString::number(i);
    using Shown = TensorTableModel::Shown;
    QString text = tr("[%1]  A = %2 · B = %3 · A − B = %4")
                       .arg(index.join(", "), tableModel_->text(row, col, Shown::Leaf),
                            tableModel_->text(row, col, Shown::Other),
                            tableModel_->text(row, col, Shown::Difference));
    if (!counts.isEmpty())
        text += "  (" + counts + ")";
    cell_->setText(text);
}

void ComparePanel::nextDifference() {
    if (!showsValues() || !item_ || isSearching())
        return;
    std::int64_t from = 0, row = 0, col = 0;
    if (tableView_->currentCell(&row, &col))
        from = tableModel_->slice().elementIndex(row, col) + 1;
    searchWatcher_.setFuture(QtConcurrent::run(
        [item = item_, na = item_->a, nb = item_->b, a = a_, b = b_, tolerance = tolerance_, from] {
            Search s;
            s.item = item;
            try {
                auto d = tensordict::compareValues(*na, *nb, tolerance, from, true);
                if (d.firstIndex < 0 && from > 0) {  // none after the cell: from the start
                    d = tensordict::compareValues(*na, *nb, tolerance, 0, true);
                    s.wrapped = true;
                }
                s.flat = d.firstIndex;
            } catch (const std::exception& e) {
                s.error = QString::fromUtf8(e.what());
            }
            return s;
        }));
}

void ComparePanel::searchDone() {
    if (!showsValues())
        return;
    const Search s = searchWatcher_.result();
    if (s.item != item_)  // another key was selected meanwhile
        return;
    if (!s.error.isEmpty()) {
        cell_->setText(tr("Cannot compare: %1").arg(s.error));
        return;
    }
    if (s.flat < 0) {
        cell_->setText(tr("No element differs."));
        Q_EMIT noDifference();
        return;
    }
    showElement(s.flat);
    Q_EMIT differenceShown(s.flat, s.wrapped);
}

void ComparePanel::showElement(std::int64_t flat) {
    const std::vector<std::int64_t> index =
        tensordict::unflattenIndex(flat, item_->a->leaf().shape);
    const TensorSlice slice = tableSlice_->slice();
    for (const int d : slice.fixedDims())
        tableSlice_->setIndex(d, index[static_cast<std::size_t>(d)]);
    const std::int64_t row = slice.rowDim >= 0 ? index[static_cast<std::size_t>(slice.rowDim)] : 0;
    const std::int64_t col = slice.colDim >= 0 ? index[static_cast<std::size_t>(slice.colDim)] : 0;
    tableView_->showCell(row, col);
    showCurrentCell();
}

void ComparePanel::sourceChanged() {
    if (!showsValues())
        return;
    // Drop the lost mappings from every view; the rest of the comparison stays usable.
    aBytes_ = bBytes_ = {};
    tableModel_->clear();
    imageView_->clear();
    plotView_->clear();
    statisticsView_->clear();
    showMessage(
        tr("The data of this key changed while it was read (a file was truncated or "
           "replaced by another program). Open both again to compare their current "
           "contents."));
}
