#pragma once

#include <QWidget>

class QFormLayout;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class KeyTreeModel;
namespace tensordict {
class Node;
}

// Everything known about the selected node: key path, kind, class, batch
// size, device, dtype and shape, where its bytes live, and non-tensor values.
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

Q_SIGNALS:
    void copyKeyPathRequested();

private:
    void addRow(const QString& label, const QString& value);

    QLabel* title_;
    QFormLayout* form_;
    QPlainTextEdit* value_;
    QPushButton* copyButton_;
    QString keyPath_;
};
