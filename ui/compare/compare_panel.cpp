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
#include <map>
#include <tuple>

#include "compare_status.h"
#include "image_mode.h"
#include "node_properties.h"
#include "node_text.h"
#include "plot_mode.h"
#include "statistics_mode.h"
#include "table_mode.h"
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

// The properties of A and B side by side: Kind, then every property row
// of either side, in A's order and then B's extra ones.
struct SideBySide {
    QString label, a, b;
    bool isLong = false, isLocation = false;
};

std::vector<SideBySide> sideBySide(const Node* a, const Node* b) {
    std::vector<SideBySide> rows{
        {QObject::tr("Kind"), a ? kindOf(*a) : QString(), b ? kindOf(*b) : QString()}};
    std::map<std::string, std::size_t> at;
    const auto add = [&](const Node* n, QString SideBySide::*side) {
        if (!n)
            return;
        // No payload offsets: where the bytes sit says nothing about them.
        for (nodetext::PropertyRow& r : nodetext::propertyRows(*n, false)) {
            if (r.isLong && r.text.size() > kMaxValueChars)
                r.text = r.text.left(kMaxValueChars) + QStringLiteral("\n…");
            auto [it, fresh] = at.emplace(r.name, rows.size());
            if (fresh)
                rows.push_back({r.label, {}, {}, r.isLong, r.isLocation});
            rows[it->second].*side = r.text;
        }
    };
    add(a, &SideBySide::a);
    add(b, &SideBySide::b);
    return rows;
}

}  // namespace

ComparePanel::ComparePanel(QWidget* parent)
    : QWidget(parent),
      summary_(new QLabel),
      pages_(new QStackedWidget),
      message_(new QLabel),
      description_(new QTextBrowser),
      leafView_(new LeafView("compare/mode/")) {
    table_ = leafView_->find<TableLeafMode>();
    summary_->setWordWrap(true);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    summary_->setVisible(false);
    message_->setAlignment(Qt::AlignCenter);
    message_->setWordWrap(true);
    message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    description_->setOpenLinks(false);
    // A value with no space in it (a long string, a path) wraps anywhere.
    description_->setWordWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);

    pages_->addWidget(message_);
    pages_->addWidget(description_);
    pages_->addWidget(leafView_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(summary_);
    layout->addWidget(pages_, 1);
    showMessage(tr("Select a key to compare its two sides."));

    connect(leafView_, &LeafView::sourceChanged, this, &ComparePanel::sourceChanged);
    connect(table_, &TableLeafMode::differenceShown, this, &ComparePanel::differenceShown);
    connect(table_, &TableLeafMode::noDifference, this, &ComparePanel::noDifference);
}

ComparePanel::~ComparePanel() = default;

TensorTableModel* ComparePanel::tableModel() const {
    return table_->model();
}
TensorTableView* ComparePanel::tableView() const {
    return table_->view();
}
SliceSelector* ComparePanel::tableSlice() const {
    return table_->sliceSelector();
}
CompareImageView* ComparePanel::imageView() const {
    return leafView_->find<ImageLeafMode>()->compareView();
}
PlotView* ComparePanel::plotView() const {
    return leafView_->find<PlotLeafMode>()->view();
}
StatisticsView* ComparePanel::statisticsView() const {
    return leafView_->find<StatisticsLeafMode>()->view();
}
bool ComparePanel::isSearching() const {
    return table_->isSearching();
}
void ComparePanel::nextDifference() {
    if (!showsValues())
        return;
    // The table and the image show where it is (the image by its slice);
    // from any other tab, the table does.
    if (mode() != TableMode && mode() != ImageMode)
        setMode(TableMode);
    table_->nextDifference();
}

void ComparePanel::showItem(std::shared_ptr<const tensordict::TensorDict> a,
                            std::shared_ptr<const tensordict::TensorDict> b, const Item* item,
                            const tensordict::Tolerance& tolerance) {
    read_.cancel();  // a read still running finishes on its own; its result is dropped
    a_ = std::move(a);
    b_ = std::move(b);
    item_ = item;
    tolerance_ = tolerance;
    leafView_->clear();
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
    read_.start(
        [na = item->a, nb = item->b, a = a_, b = b_](const tensordict::CancelToken&) {
            Read read;
            try {
                read.a = na->bytes();
                read.b = nb->bytes();
            } catch (const std::exception& e) {
                read.error = QString::fromUtf8(e.what());
            }
            return read;
        },
        [this](Read read) { leavesLoaded(std::move(read)); });
}

void ComparePanel::updateItem() {
    if (!item_)
        return;
    summary_->setText(summaryHtml());
    if (pages_->currentWidget() == description_)
        showDescription();
    if (showsValues())
        table_->setDifferingCount(item_->values ? std::optional(item_->values->differing)
                                                : std::nullopt);
}

bool ComparePanel::showsValues() const {
    return pages_->currentWidget() == leafView_;
}

ComparePanel::Mode ComparePanel::mode() const {
    return leafView_->mode();
}

void ComparePanel::setMode(Mode mode) {
    leafView_->setMode(mode);
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
            text += " · " + nodetext::byteSizeText(n->leaf().dataBytes());
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
    const std::vector<SideBySide> rows = sideBySide(i.a, i.b);
    // The labels' column is as wide as its widest label (bold), never
    // squeezed by the values; A and B share the rest equally.
    QFont bold = description_->font();
    bold.setBold(true);
    int labelWidth = 0;
    for (const SideBySide& row : rows)
        labelWidth = std::max(labelWidth, QFontMetrics(bold).horizontalAdvance(row.label));
    for (const SideBySide& row : rows) {
        const bool differs = i.a && i.b && row.a != row.b && !row.isLocation;
        auto cell = [&](const QString& text) {
            if (text.isEmpty())
                return colored(QStringLiteral("—"), compare_status::statusColor(Status::Same));
            const QString escaped = text.toHtmlEscaped();
            // Long values keep their lines but wrap to the column: a wide
            // value must not squeeze the labels or push B off the pane.
            return row.isLong ? "<div style=\"white-space: pre-wrap; font-family: monospace\">" +
                                    escaped + "</div>"
                              : escaped;
        };
        html += QString(
                    "<tr%1><td valign=\"top\" width=\"%2\"><b>%3</b></td>"
                    "<td valign=\"top\" width=\"50%\">%4</td>"
                    "<td valign=\"top\" width=\"50%\">%5</td></tr>")
                    .arg(differs ? QString(" style=\"background:%1\"").arg(highlight.name())
                                 : QString())
                    .arg(labelWidth + 12)
                    .arg(row.label, cell(row.a), cell(row.b));
    }
    html += "</table>";

    // A collection: which keys inside differ (not below keys on one side only).
    if (i.differingBelow > 0) {
        html += tr("<p><b>%1 inside differ:</b></p><ul>")
                    .arg(nodetext::countText(i.differingBelow, tr("key"), tr("keys")));
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

void ComparePanel::leavesLoaded(Read read) {
    if (!read.error.isEmpty()) {
        showMessage(tr("Cannot read this key: %1").arg(read.error));
        return;
    }
    ShownLeaves shown;
    shown.ownerA = a_;
    shown.ownerB = b_;
    shown.a = {item_->a, std::move(read.a)};
    shown.b = LeafSide{item_->b, std::move(read.b)};
    shown.tolerance = tolerance_;
    pages_->setCurrentWidget(leafView_);
    leafView_->setLeaves(shown);
    table_->setDifferingCount(item_->values ? std::optional(item_->values->differing)
                                            : std::nullopt);
    Q_EMIT leafReady();
}

void ComparePanel::sourceChanged() {
    if (!showsValues())
        return;
    // Drop the lost mappings from every view; the rest of the comparison stays usable.
    leafView_->clear();
    showMessage(
        tr("The data of this key changed while it was read (a file was truncated or "
           "replaced by another program). Open both again to compare their current "
           "contents."));
}
