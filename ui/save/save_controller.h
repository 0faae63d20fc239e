#pragma once

#include <QObject>
#include <QPointer>
#include <QStringList>
#include <functional>
#include <memory>
#include <vector>

#include "tensordict/save.h"

class QWidget;
class SaveJob;
class SaveProgressDialog;

// File > Save As / Export for one window: what to save (the scope), the
// options dialog, the one save that runs at a time with its progress
// dialog, and closing the window while it runs (cancel first, close when
// it has ended; never a nested event loop).
class SaveController : public QObject {
    Q_OBJECT

public:
    struct Scope {
        std::shared_ptr<const tensordict::TensorDict> data;  // nullptr: nothing to save
        QString description;      // "the whole tensordict (x.tdz)", "2 selected keys"
        QStringList keys;         // the selected keys, as Python indexes; empty: the whole
        std::uint64_t bytes = 0;  // of its tensors
        QString sourcePath;       // where the dialog starts
    };

    // `window` parents the dialogs; `scopes` is asked at each save: what
    // can be saved, the keys selected in the tree first (when any are),
    // then the whole tensordict; empty when nothing is open.
    SaveController(QWidget* window, std::function<std::vector<Scope>()> scopes);

    // Asks for what to save (the selected keys, listed, or the whole
    // tensordict), a destination and options, then saves.
    void saveAs();
    // Saves scope `scope` (0: the first offered) to `prefix` (tests call it
    // directly), a file of one tensor under `keyName`; nullptr when a save
    // runs already or there is nothing to save.
    SaveJob* start(const QString& prefix, const tensordict::SaveOptions& options, int scope = 0,
                   const QString& keyName = {});
    // `data` as saved: a file of one tensor under `keyName` (if given).
    static std::shared_ptr<const tensordict::TensorDict> withKey(
        std::shared_ptr<const tensordict::TensorDict> data, const QString& keyName);
    SaveJob* current() const { return job_; }
    SaveProgressDialog* progressDialog() const;
    bool isRunning() const { return job_ != nullptr; }

    // The window is asked to close: true when it may now. While a save runs
    // the user is asked; on Yes the save is cancelled and closeReady() follows
    // its end.
    bool confirmClose();

Q_SIGNALS:
    void message(const QString& text, int timeoutMs);
    // A save to `prefix` succeeded.
    void saved(const QString& prefix);
    void runningChanged(bool running);
    void openRequested(const QString& path);  // "Open" in the progress dialog
    void closeReady();

private:
    QWidget* window_;
    std::function<std::vector<Scope>()> scopes_;
    SaveJob* job_ = nullptr;
    bool closeAfterSave_ = false;
    QPointer<SaveProgressDialog> progressDialog_;  // deletes itself when closed
};
