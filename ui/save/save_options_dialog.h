#pragma once

#include <QDialog>
#include <cstdint>

#include "tensordict/save.h"

class QCheckBox;
class QComboBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QRadioButton;
class QSpinBox;

// Every option of tensordict::save, explained, with invalid combinations
// made impossible or reported inline before the user presses Save.
class SaveOptionsDialog : public QDialog {
    Q_OBJECT

public:
    // `bytes`: what the save writes; `scope`: "the whole tensordict" or "2 selected keys".
    SaveOptionsDialog(std::uint64_t bytes, const QString& scope, const QString& sourcePath,
                      QWidget* parent = nullptr);

    void setDestination(const QString& path);
    QString destination() const;
    bool archive() const;
    void setArchive(bool archive);
    void setCompression(int zipMethod);
    tensordict::SaveOptions options() const;

    // What the dialog says about the current choices ("" when all is well).
    QString problem() const { return problem_; }
    QString warning() const { return warning_; }
    bool canSave() const;

    QLineEdit* destinationEdit() const { return destination_; }
    QComboBox* compressionBox() const { return compression_; }
    QSpinBox* levelBox() const { return level_; }
    QSpinBox* threadsBox() const { return threads_; }
    QCheckBox* atomicBox() const { return atomic_; }
    QCheckBox* robustKeyBox() const { return robustKey_; }
    QCheckBox* copyExistingBox() const { return copyExisting_; }
    QCheckBox* allowOutsideLinksBox() const { return allowOutsideLinks_; }

private:
    void browse();
    void destinationEdited();
    void validate();

    std::uint64_t bytes_;
    QString sourcePath_;
    QLineEdit* destination_;
    QRadioButton* asDirectory_;
    QRadioButton* asArchive_;
    QComboBox* compression_;
    QSpinBox* level_;
    QLabel* compressionNote_;
    QSpinBox* threads_;
    QCheckBox* atomic_;
    QCheckBox* robustKey_;
    QCheckBox* copyExisting_;
    QCheckBox* allowOutsideLinks_;
    QLabel* sizes_;
    QLabel* message_;
    QDialogButtonBox* buttons_;
    QString problem_, warning_;
    bool archiveChosenByHand_ = false;
};
