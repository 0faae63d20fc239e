#pragma once

#include <QDialog>
#include <QTimer>
#include <cstdint>
#include <optional>
#include <vector>

#include "job_tracker.h"
#include "tensordict/save.h"

class QCheckBox;
class QComboBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QRadioButton;
class QSpinBox;

// One thing the dialog can save: the keys selected in the tree, or the
// whole tensordict.
struct SaveScopeChoice {
    QString title;     // "the whole tensordict (a.tdz)", "2 selected keys"
    QStringList keys;  // the keys saved, as Python indexes; empty for the whole tensordict
    std::uint64_t bytes = 0;
};

// What the disk says about a destination, gathered on a worker thread.
struct DestinationFacts {
    QString destination;  // as typed, trimmed
    QString parent;       // its folder, absolute
    bool parentIsDir = false;
    bool parentIsFile = false;    // "/etc/passwd/x.tdz"
    bool parentWritable = false;  // we may create files in it
    bool holdsNoFiles = false;    // a virtual file system (/proc, /sys)
    bool exists = false;
    bool isDir = false;
    bool isEmptyDir = false;
    bool isSource = false;  // the same file as the archive being read
    std::optional<std::uint64_t> freeBytes;
};

// Every option of tensordict::save, explained, with invalid combinations
// made impossible or reported inline before the user presses Save. The
// destination's checks (existence, free space) touch the disk: they run on
// a worker, once typing pauses, not on every keystroke.
class SaveOptionsDialog : public QDialog {
    Q_OBJECT

public:
    // `scopes`: what can be saved, the first chosen (the selected keys, then
    // the whole tensordict); with two, the user picks one and sees the keys.
    SaveOptionsDialog(std::vector<SaveScopeChoice> scopes, const QString& sourcePath,
                      QWidget* parent = nullptr);
    // One scope: `bytes` of it, described as `scope`.
    SaveOptionsDialog(std::uint64_t bytes, const QString& scope, const QString& sourcePath,
                      QWidget* parent = nullptr)
        : SaveOptionsDialog({SaveScopeChoice{scope, {}, bytes}}, sourcePath, parent) {}

    // The scope chosen (an index of the constructor's `scopes`).
    int scope() const { return scope_; }
    void setScope(int index);
    QRadioButton* scopeButton(int index) const;
    // The selected keys the first scope saves, one a line.
    QListWidget* keyList() const { return keyList_; }

    void setDestination(const QString& path);
    QString destination() const;
    bool archive() const;
    void setArchive(bool archive);
    // What is written: a tensordict (directory or archive), a safetensors
    // file, or a Hugging Face folder of safetensors shards.
    tensordict::SaveFormat format() const;
    void setFormat(tensordict::SaveFormat format);
    void setCompression(int zipMethod);
    tensordict::SaveOptions options() const;
    // What is saved holds Python objects of a checkpoint: the choice to leave them out shows.
    void setHasObjects(bool hasObjects);
    // What the save would refuse about the data of scope `scope` with these
    // options (two keys that would become one, a link out of the dataset,
    // an object), asked on a worker as the choices change, so that the
    // dialog says it before Save. `keyName` is the key of a file of one tensor.
    using DataCheck = std::function<std::optional<tensordict::Failure>(
        int scope, const QString& keyName, const tensordict::SaveOptions& options)>;
    void setDataCheck(DataCheck check);
    // The source is one tensor (an .npy, a bare .pt): it is saved under a
    // key, `suggested` at first (the file's name), which the user may change.
    void setSingleTensor(const QString& suggested);
    // The key a single tensor is saved under ("" when the source is not one).
    QString keyName() const;
    QLineEdit* keyNameEdit() const { return keyName_; }

    // What the dialog says about the current choices ("" when all is well, or
    // while the destination is being checked).
    QString problem() const { return problem_; }
    QString warning() const { return warning_; }
    bool canSave() const;
    // Whether the destination's disk checks are waiting for a pause in typing or running.
    bool isChecking() const;
    // Runs the pending disk check now and waits for it (Save does this; so do tests).
    void finishPendingCheck();
    // How many times the destination was checked on disk.
    int diskCheckCount() const { return diskChecks_; }
    // How long typing must pause before the destination is checked.
    static constexpr int kCheckDelayMs = 300;

    QLineEdit* destinationEdit() const { return destination_; }
    QComboBox* compressionBox() const { return compression_; }
    QSpinBox* levelBox() const { return level_; }
    QString compressionNoteText() const;
    static QString compressionNote(int method, int level);
    QSpinBox* threadsBox() const { return threads_; }
    QCheckBox* atomicBox() const { return atomic_; }
    QCheckBox* robustKeyBox() const { return robustKey_; }
    QCheckBox* copyExistingBox() const { return copyExisting_; }
    QCheckBox* allowOutsideLinksBox() const { return allowOutsideLinks_; }
    QRadioButton* directoryButton() const { return asDirectory_; }
    QRadioButton* archiveButton() const { return asArchive_; }
    QRadioButton* safetensorsButton() const { return asSafetensors_; }
    QRadioButton* huggingFaceButton() const { return asHuggingFace_; }
    QLineEdit* shardSizeEdit() const { return shardSize_; }
    QCheckBox* skipObjectsBox() const { return skipObjects_; }

Q_SIGNALS:
    void destinationChecked();

private:
    // The dialog's parts, built once by the constructor.
    QWidget* scopeChooser();
    QWidget* keyNameRow();
    QLayout* destinationRow();
    QLayout* formatChooser();
    QLayout* compressionRow();
    void setUpOptions();
    void connectEditors();
    void browse();
    void destinationEdited();
    void validate();
    void startCheck();
    void checkFinished(DestinationFacts facts);
    void trySave();

    std::vector<SaveScopeChoice> scopes_;
    int scope_ = 0;
    std::uint64_t bytes_;
    QString sourcePath_;
    QList<QRadioButton*> scopeButtons_;
    QListWidget* keyList_ = nullptr;
    QLineEdit* destination_;
    QRadioButton* asDirectory_;
    QRadioButton* asArchive_;
    QRadioButton* asSafetensors_;
    QRadioButton* asHuggingFace_;
    QLineEdit* shardSize_;  // the Hugging Face folder's largest shard: "5GB"
    QWidget* shardRow_;
    QLineEdit* keyName_;
    QWidget* keyNameRow_;
    QComboBox* compression_;
    QSpinBox* level_;
    QLabel* compressionNote_;
    QSpinBox* threads_;
    QCheckBox* atomic_;
    QCheckBox* robustKey_;
    QCheckBox* copyExisting_;
    QCheckBox* allowOutsideLinks_;
    QCheckBox* skipObjects_;
    QLabel* sizes_;
    QLabel* message_;
    QDialogButtonBox* buttons_;
    QString problem_, warning_;
    // What the data check said, and what it was asked about.
    DataCheck dataCheck_;
    std::optional<tensordict::Failure> dataProblem_;
    QString dataCheckedFor_;        // the choices it answered; "" before any answer
    bool saveWhenChecked_ = false;  // Save was pressed while a check was under way
    JobTracker<std::optional<tensordict::Failure>> dataJob_{this};
    QString dataInputs() const;
    void startDataCheck();
    QTimer checkTimer_;
    JobTracker<DestinationFacts> destinationJob_{this};
    bool checkApplied_ = true;
    std::optional<DestinationFacts> facts_;
    int diskChecks_ = 0;
    bool archiveChosenByHand_ = false;
    int compressionChosen_ = tensordict::kZipStored;  // for archives; a directory shows "stored"
};
