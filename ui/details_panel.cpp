#include "details_panel.h"

#include <QFontDatabase>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QToolButton>
#include <QVBoxLayout>

#include "key_tree_model.h"
#include "node_text.h"
#include "tensordict/node.h"
#include "tensordict/store.h"
#include "tensordict/value.h"

using tensordict::Node;
using tensordict::NodeKind;

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
    layout->addWidget(body_, 1);
}

bool DetailsPanel::isCollapsed() const {
    return body_->isHidden();
}

void DetailsPanel::setCollapsed(bool collapsed) {
    if (collapsed == isCollapsed())
        return;
    body_->setHidden(collapsed);
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

    switch (node->kind()) {
        case NodeKind::Tensor: {
            addRow(tr("DType"), nodetext::torchDtypeText(node->leaf().dtype));
            addRow(tr("Shape"), nodetext::shapeText(node->leaf().shape));
            if (node->leaf().isNested)
                addRow(tr("Nested parts"), QString::number(node->leaf().nestedShapes.size()));
            addRow(tr("Elements"), QString::number(node->leaf().numel));
            addRow(tr("Size"), nodetext::byteSizeText(node->leaf().nbytes) +
                                   (node->leaf().nbytes >= 1024
                                        ? QString(" (%1 bytes)").arg(node->leaf().nbytes)
                                        : QString()));
            if (node->device())
                addRow(tr("Saved from device"), QString::fromStdString(*node->device()));
            addRow(tr("Storage"), nodetext::storageText(*node));
            if (node->leaf().storage.kind != tensordict::StorageKind::None) {
                const bool archive = node->leaf().storage.kind != tensordict::StorageKind::File;
                addRow(archive ? tr("Archive entry") : tr("File"),
                       QString::fromStdString(node->leaf().storage.path));
                if (node->store())
                    addRow(archive ? tr("Archive") : tr("Directory"),
                           QString::fromStdString(node->store()->location()));
                if (!node->leaf().storage.outsideTarget.empty())
                    addRow(tr("Linked from outside"),
                           tr("%1 (a symbolic link out of the dataset: saving it is refused "
                              "unless allowed)")
                               .arg(QString::fromStdString(node->leaf().storage.outsideTarget)));
                std::optional<std::uint64_t> offset;
                try {
                    offset = node->payloadOffset();  // one small read of the local header, once
                } catch (const tensordict::Error& e) {
                    addRow(tr("Payload offset"), QString::fromStdString(e.reason()));
                }
                if (offset)
                    addRow(tr("Payload offset"),
                           QString("%1 (%2)").arg(*offset).arg(
                               *offset % 64 == 0 ? tr("64-byte aligned") : tr("unaligned")));
                if (archive) {
                    addRow(tr("Compression"), QString::fromStdString(tensordict::zipMethodName(
                                                  node->leaf().storage.zipMethod)));
                    addRow(tr("Stored size"),
                           nodetext::byteSizeText(node->leaf().storage.storedSize));
                }
                if (node->leaf().storage.size > node->leaf().nbytes)
                    addRow(tr("File size"),
                           tr("%1 (longer than needed; the first %2 bytes are used)")
                               .arg(node->leaf().storage.size)
                               .arg(node->leaf().nbytes));
            }
            break;
        }
        case NodeKind::NonTensorData:
        case NodeKind::NonTensorStack:
            addRow(tr("Class"), QString::fromStdString(node->className()));
            addRow(tr("Batch size"), nodetext::shapeText(node->batchSize()));
            if (!node->nonTensor().pickleFile.empty())
                addRow(tr("Pickle sidecar"),
                       QString::fromStdString(node->nonTensor().pickleFile) +
                           (node->nonTensor().pickleOpaque
                                ? tr(" (holds Python objects; never unpickled)")
                                : tr(" (plain data, decoded safely)")));
            if (node->nonTensor().pickleOpaque)
                value_->setPlainText(
                    tr("<pickled Python object in %1: not shown, never unpickled>")
                        .arg(QString::fromStdString(node->nonTensor().pickleFile)));
            else
                value_->setPlainText(QString::fromStdString(
                    tensordict::toJson(node->value(), tensordict::JsonStyle::Pretty)));
            break;
        case NodeKind::Error:
            addRow(tr("Directory"),
                   QString::fromStdString(node->directory().empty() ? "." : node->directory()));
            value_->setPlainText(QString::fromStdString(node->error()));
            break;
        default:  // collections
            addRow(tr("Class"), QString::fromStdString(node->className()));
            addRow(tr("Batch size"), nodetext::shapeText(node->batchSize()));
            addRow(tr("Device"),
                   node->device() ? QString::fromStdString(*node->device()) : tr("none"));
            if (node->kind() == NodeKind::LazyStack)
                addRow(tr("Stack dim"), QString::number(node->collection().stackDim));
            addRow(tr("Keys"), QString::number(node->children().size()));
            if (model)
                addRow(tr("Tensor bytes"), nodetext::byteSizeText(model->totalBytes(node)));
            addRow(tr("Directory"),
                   QString::fromStdString(node->directory().empty() ? "." : node->directory()));
            if (!node->collection().attributes.empty())
                value_->setPlainText(QString::fromStdString(
                    tensordict::toJson(tensordict::Value(node->collection().attributes),
                                       tensordict::JsonStyle::Pretty)));
            break;
    }
    layOutRows();
}
