#pragma once

#include <QObject>
#include <QStringList>

class QMenu;

// File > Open Recent: the last tensordicts opened, newest first, kept in
// the settings; the menu it fills asks for a path to be opened.
class RecentFiles : public QObject {
    Q_OBJECT

public:
    static constexpr int kMaxFiles = 10;

    // Fills and keeps `menu` up to date (the menu outlives this object or is its child).
    explicit RecentFiles(QMenu* menu, QObject* parent = nullptr);

    QStringList files() const;
    void add(const QString& path);
    void clear();

Q_SIGNALS:
    void openRequested(const QString& path);

private:
    void rebuildMenu();

    QMenu* menu_;
};
