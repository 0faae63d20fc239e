#pragma once

#include <QStringList>
#include <QWidget>

class QLabel;
class QListWidget;
class QPushButton;

// What the window shows while no tensordict is open: how to open one (Open
// File, Open Directory, dropping), the files opened recently, and, after an
// open failed, what failed and why.
class WelcomePage : public QWidget {
    Q_OBJECT

public:
    explicit WelcomePage(QWidget* parent = nullptr);

    void setRecentFiles(const QStringList& files);
    // Says that `path` could not be opened, and why; "" says nothing failed.
    void setFailure(const QString& path, const QString& reason);
    QString failureText() const;
    QListWidget* recentList() const { return recent_; }
    QPushButton* openFileButton() const { return openFile_; }
    QPushButton* openDirectoryButton() const { return openDirectory_; }
    QPushButton* openUrlButton() const { return openUrl_; }

Q_SIGNALS:
    void openFileRequested();
    void openDirectoryRequested();
    void openUrlRequested();
    void openRequested(const QString& path);

private:
    QLabel* failure_;
    QPushButton* openFile_;
    QPushButton* openDirectory_;
    QPushButton* openUrl_;
    QLabel* recentTitle_;
    QListWidget* recent_;
};
