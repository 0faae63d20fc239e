#include "details_panel.h"

#include <QFontDatabase>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QStyle>
#include <QToolButton>
#include <QVBoxLayout>

#include "key_tree_model.h"
#include "node_properties.h"
#include "node_text.h"
#include "tensordict/node.h"
#include "tensordict/value.h"

using tensordict::Node;

DetailsPanel::DetailsPanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 2, 6, 4);
    layout->setSpacing(2);
    auto* header = new QHBoxLayout;
    toggle_ = new QToolButton;
    toggle_->setText(tr("Details"));
    toggle_->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    toggle_->setArrowType(Qt::DownArrow);
    toggle_->setAutoRaise(true);
    toggle_->setToolTip(tr("Show or hide the details of the selected key"));
    connect(toggle_, &QToolButton::clicked, this, [this] { setCollapsed(!isCollapsed()); });
    title_ = new QLabel(tr("Nothing selected"));
    QFont f = title_->font();
    f.setBold(true);
    title_->setFont(f);
    title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    header->addWidget(toggle_);
    copyButton_ = new QPushButton(tr("Copy key path"));
    copyButton_->setEnabled(false);
    copyButton_->setToolTip(
        tr("Copy the key as a Python index expression, e.g. (\"obs\", \"pixels\")"));
    connect(copyButton_, &QPushButton::clicked, this, &DetailsPanel::copyKeyPathRequested);
    header->addWidget(title_, 1);
    header->addWidget(copyButton_);
    layout->addLayout(header);

    body_ = new QWidget;
    auto* bodyLayout = new QVBoxLayout(body_);
    bodyLayout->setContentsMargins(0, 0, 0, 0);
    // Two columns side by side; a narrow panel puts every row in the first.
    columns_ = new QHBoxLayout;
    columns_->setSpacing(24);
    for (QFormLayout*& form : forms_) {
        form = new QFormLayout;
        form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
        form->setLabelAlignment(Qt::AlignRight);
        form->setVerticalSpacing(2);
        columns_->addLayout(form, 1);
    }
    bodyLayout->addLayout(columns_);

    value_ = new QPlainTextEdit;
    value_->setReadOnly(true);
    value_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    value_->setVisible(false);  // only for non-tensor values, attributes and errors
    bodyLayout->addWidget(value_, 1);
    // When the window is short the fields scroll rather than being cut off.
    scroll_ = new QScrollArea;
    scroll_->setWidget(body_);
    scroll_->setWidgetResizable(true);
    scroll_->setFrameShape(QFrame::NoFrame);
    scroll_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    layout->addWidget(scroll_, 1);
}

void DetailsPanel::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    if (wantsTwoColumns() != (forms_[1]->rowCount() > 0))
        arrangeColumns();
    fitBodyHeight();
}

void DetailsPanel::fitBodyHeight() {
    // Wrapped values are taller the narrower they are; the scroll area does
    // not ask, and squeezed the rows over each other: the body says it.
    QLayout* layout = body_->layout();
    layout->activate();
    const int width = scroll_->viewport()->width();
    body_->setMinimumHeight(layout->hasHeightForWidth() ? layout->totalHeightForWidth(width)
                                                        : layout->totalMinimumSize().height());
}

bool DetailsPanel::wantsTwoColumns() const {
    constexpr int kTwoColumnsFrom = 640;  // two columns of label and value, each readable
    return width() >= kTwoColumnsFrom;
}

void DetailsPanel::fitColumns() {
    // One column takes the whole width: the empty second one took half, and
    // at 800x600 values wrapped in a third of the panel beside empty space.
    const bool two = forms_[1]->rowCount() > 0;
    columns_->setStretch(1, two ? 1 : 0);
}

void DetailsPanel::arrangeColumns() {
    std::vector<std::pair<QString, QWidget*>> rows;
    for (QFormLayout* form : forms_)
        while (form->rowCount() > 0) {
            const QFormLayout::TakeRowResult row = form->takeRow(0);
            auto* label = row.labelItem ? qobject_cast<QLabel*>(row.labelItem->widget()) : nullptr;
            rows.emplace_back(label ? label->text() : QString(), row.fieldItem->widget());
            if (label)
                label->deleteLater();
            delete row.labelItem;
            delete row.fieldItem;
        }
    const std::size_t half = wantsTwoColumns() ? (rows.size() + 1) / 2 : rows.size();
    for (std::size_t i = 0; i < rows.size(); ++i)
        forms_[i < half ? 0 : 1]->addRow(rows[i].first, rows[i].second);
    fitColumns();
    fitBodyHeight();
}

bool DetailsPanel::isCollapsed() const {
    return scroll_->isHidden();
}

void DetailsPanel::setCollapsed(bool collapsed) {
    if (collapsed == isCollapsed())
        return;
    scroll_->setHidden(collapsed);
    toggle_->setArrowType(collapsed ? Qt::RightArrow : Qt::DownArrow);
    // Collapsed, the header is all there is: a splitter must not give it more.
    setMaximumHeight(collapsed ? sizeHint().height() : QWIDGETSIZE_MAX);
    Q_EMIT collapsedChanged(collapsed);
}

namespace {

// One word too long for its column (a file name, a path): elided in the
// middle, where a name is least telling, with the whole in its tooltip;
// text() stays whole.
class MiddleElidedLabel : public QLabel {
public:
    explicit MiddleElidedLabel(const QString& text) : QLabel(text) {
        setToolTip(text);
        setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Preferred);  // whole when it fits
    }
    QSize minimumSizeHint() const override {
        return {fontMetrics().horizontalAdvance("…") * 6, QLabel::minimumSizeHint().height()};
    }

protected:
    void paintEvent(QPaintEvent*) override {
        QPainter painter(this);
        const QRect area = contentsRect();
        style()->drawItemText(&painter, area, int(alignment()), palette(), isEnabled(),
                              fontMetrics().elidedText(text(), Qt::ElideMiddle, area.width()),
                              foregroundRole());
    }
};

}  // namespace

void DetailsPanel::addRow(const QString& label, const QString& value) {
    // Words wrap; a single long word (a path, a file name) is elided in the middle.
    QLabel* v;
    if (value.contains(' ')) {
        v = new QLabel(value);
        v->setTextInteractionFlags(Qt::TextSelectableByMouse);
        v->setWordWrap(true);
    } else {
        v = new MiddleElidedLabel(value);
    }
    v->setObjectName(label);
    rows_.emplace_back(label, v);
}

void DetailsPanel::layOutRows() {
    const std::size_t half = wantsTwoColumns() ? (rows_.size() + 1) / 2 : rows_.size();
    for (std::size_t i = 0; i < rows_.size(); ++i)
        forms_[i < half ? 0 : 1]->addRow(rows_[i].first + ":", rows_[i].second);
    rows_.clear();
    fitColumns();
    value_->setVisible(!value_->toPlainText().isEmpty());
    fitBodyHeight();
}

QString DetailsPanel::field(const QString& label) const {
    const auto* v = findChild<QLabel*>(label);
    return v ? v->text() : QString();
}

QString DetailsPanel::valueText() const {
    return value_->toPlainText();
}

void DetailsPanel::showNode(const Node* node, const KeyTreeModel* model) {
    for (QFormLayout* form : forms_)
        while (form->rowCount() > 0)
            form->removeRow(0);
    value_->clear();
    value_->setVisible(false);
    keyPath_.clear();
    copyButton_->setEnabled(node != nullptr);
    if (!node) {
        title_->setText(tr("Nothing selected"));
        return;
    }
    keyPath_ = nodetext::keyPathText(node->keyPath());
    title_->setText(node->parent() ? nodetext::displayKey(node->key()) : tr("(root)"));
    addRow(tr("Key path"), node->parent() ? keyPath_ : tr("(root)"));
    addRow(tr("Kind"), nodetext::kindText(*node));

    QStringList longTexts;
    for (const nodetext::PropertyRow& row : nodetext::propertyRows(*node)) {
        if (row.isLong)  // a node has at most one: its value, fields or error
            longTexts << row.text;
        else
            addRow(row.label, row.text);
        // The model counts bytes under a collection once, for the whole tree.
        if (row.name == "keys" && model)
            addRow(tr("Tensor bytes"), nodetext::byteSizeText(model->totalBytes(node)));
    }
    value_->setPlainText(longTexts.join("\n\n"));
    layOutRows();
}
