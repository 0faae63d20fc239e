#pragma once

#include <QWidget>
#include <utility>
#include <vector>

class QFormLayout;
class QHBoxLayout;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QScrollArea;
class QToolButton;
class KeyTreeModel;
namespace tensordict {
class Node;
}

// Everything known about the selected node: key path, kind, class, batch
// size, device, dtype and shape, where its bytes live, and non-tensor values.
// Compact, so the preview keeps the room: fields in two columns, the value box
// only when there is a value, and the whole body collapsible to its header.
class DetailsPanel : public QWidget {
    Q_OBJECT

public:
    explicit DetailsPanel(QWidget* parent = nullptr);

    // Shows `node` (nullptr clears). `model` supplies derived figures (sizes).
    void showNode(const tensordict::Node* node, const KeyTreeModel* model);
    // The value of a field as displayed, by its label ("Key path", "Device"...); for tests.
    QString field(const QString& label) const;
    QString valueText() const;
    QString keyPathText() const { return keyPath_; }
    bool isCollapsed() const;
    void setCollapsed(bool collapsed);

Q_SIGNALS:
    void copyKeyPathRequested();
    void collapsedChanged(bool collapsed);

private:
    void addRow(const QString& label, const QString& value);
    // Splits the rows added between the two columns.
    void layOutRows();

    QToolButton* toggle_;
    QLabel* title_;
    QWidget* body_;
    QScrollArea* scroll_;  // holds body_
    QFormLayout* forms_[2];
    QHBoxLayout* columns_;
    void resizeEvent(QResizeEvent* event) override;
    bool wantsTwoColumns() const;
    void arrangeColumns();
    void fitColumns();  // the rows in one column or two, as the width wants
    void fitBodyHeight();
    std::vector<std::pair<QString, QLabel*>> rows_;
    QPlainTextEdit* value_;
    QPushButton* copyButton_;
    QString keyPath_;
};
