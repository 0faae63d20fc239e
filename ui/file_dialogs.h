#pragma once

#include <QFileDialog>
#include <QString>
#include <functional>

class QWidget;

// The window's file dialogs, each starting where the user expects: in the
// folder last used for that kind of file (remembered across sessions), else
// in the folder of the file open in the window, else in the home folder.
namespace file_dialogs {

enum class Kind {
    Open,              // File > Open
    OpenDirectory,     // File > Open Directory
    Compare,           // File > Compare With > Archive
    CompareDirectory,  // File > Compare With > Directory
    Series,            // File > Compare Along Steps
    ExportCsv,
    ExportNpy,
    ExportPng,
    SaveArchive,    // Save As: a .tdz
    SaveDirectory,  // Save As: a directory
};

// The file open in `window` (MainWindow sets it), which dialogs start beside.
void setDocumentPath(QWidget* window, const QString& path);
// Where a dialog of `kind` opened from `parent` starts.
QString startFolder(const QWidget* parent, Kind kind);

// The dialogs; each returns "" for Cancel and remembers the folder chosen.
QString openFile(QWidget* parent, Kind kind, const QString& caption, const QString& filter);
QString openDirectory(QWidget* parent, Kind kind, const QString& caption);
// `name`: the file name suggested, in the start folder.
QString saveFile(QWidget* parent, Kind kind, const QString& caption, const QString& name,
                 const QString& filter, QFileDialog::Options options = {});

// Opens the folder that holds `path` in the desktop's file manager.
void showInFolder(const QString& path);

// For tests: instead of showing a dialog, `chooser` is given the kind and
// the folder the dialog would start in, and returns the path chosen. An
// empty function brings the dialogs back.
// `suggestedName` is the name a save dialog offers (empty when opening).
using Chooser =
    std::function<QString(Kind kind, const QString& startFolder, const QString& suggestedName)>;
void setChooser(Chooser chooser);
// Sizes a file dialog for its columns (Qt's own opened small, with names and
// dates cut), within the screen: every dialog of tdstudio is prepared so.
void prepareDialog(QFileDialog& dialog);
// For tests: instead of the file manager, `opener` gets the folder showInFolder() would open.
void setFolderOpener(std::function<void(const QString& folder)> opener);

}  // namespace file_dialogs
