#include "details_panel.h"

#include <QFontDatabase>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
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
    auto* columns = new QHBoxLayout;
    columns->setSpacing(24);
    for (QFormLayout*& form : forms_) {
        form = new QFormLayout;
        form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
        form->setLabelAlignment(Qt::AlignRight);
        form->setVerticalSpacing(2);
        columns->addLayout(form, 1);
    }
    bodyLayout->addLayout(columns);

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

void DetailsPanel::addRow(const QString& label, const QString& value) {
    auto* v = new QLabel(value);
    v->setTextInteractionFlags(Qt::TextSelectableByMouse);
    v->setWordWrap(true);
    v->setObjectName(label);
    rows_.emplace_back(label, v);
}

void DetailsPanel::layOutRows() {
    const std::size_t half = (rows_.size() + 1) / 2;
    for (std::size_t i = 0; i < rows_.size(); ++i)
        forms_[i < half ? 0 : 1]->addRow(rows_[i].first + ":", rows_[i].second);
    rows_.clear();
    value_->setVisible(!value_->toPlainText().isEmpty());
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
