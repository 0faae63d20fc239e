#pragma once

#include <QLayout>
#include <QList>

// A row of controls that wraps onto more lines when its space is narrow,
// as words wrap in a paragraph: a toolbar that never forces its panel (and
// so the window's splitter) wider than one control. An item with a stretch
// (addStretch) pushes what follows it to the right end of its line.
class FlowLayout : public QLayout {
public:
    explicit FlowLayout(QWidget* parent = nullptr, int spacing = 6);
    ~FlowLayout() override;

    // Pushes the items after it to the right end of the line.
    void addStretch();

    void addItem(QLayoutItem* item) override;
    int count() const override { return static_cast<int>(items_.size()); }
    QLayoutItem* itemAt(int index) const override { return items_.value(index); }
    QLayoutItem* takeAt(int index) override;
    Qt::Orientations expandingDirections() const override { return {}; }
    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;
    QSize minimumSize() const override;
    QSize sizeHint() const override;
    void setGeometry(const QRect& rect) override;

private:
    // Lays the items out in `rect` (only measuring when `apply` is false);
    // returns the height used.
    int arrange(const QRect& rect, bool apply) const;

    QList<QLayoutItem*> items_;
    int spacing_;
};
