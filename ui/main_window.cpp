#include "main_window.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QCloseEvent>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QIcon>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QScreen>
#include <QSettings>
#include <QSplitter>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTimer>
#include <QToolButton>
#include <QTreeView>
#include <QVBoxLayout>
#include <algorithm>
#include <functional>
#include <utility>

#include "check_controller.h"
#include "compare_image_view.h"
#include "compare_panel.h"
#include "compare_view.h"
#include "details_panel.h"
#include "document.h"
#include "document_page.h"
#include "file_dialogs.h"
#include "image_view.h"
#include "key_filter_model.h"
#include "key_tree_model.h"
#include "load_settings.h"
#include "node_text.h"
#include "open_failure.h"
#include "open_url_dialog.h"
#include "overview_panel.h"
#include "plot_view.h"
#include "preview_panel.h"
#include "recent_files.h"
#include "save_controller.h"
#include "save_job.h"
#include "save_options_dialog.h"
#include "save_progress_dialog.h"
#include "series_page.h"
#include "shortcuts_dialog.h"
#include "slice_selector.h"
#include "status_bar.h"
#include "tensordict/datasets.h"
#include "tensordict/http.h"
#include "tensordict/series.h"
#include "tensordict/version.h"
#include "welcome_page.h"

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      document_(new Document(this)),
      documentPage_(new DocumentPage),
      statusBar_(new StatusBar),
      statusLabel_(new QLabel),
      fetchedLabel_(new QLabel),
      cancelReads_(new QToolButton),
      showInFolder_(new QToolButton),
      saves_(new SaveController(this, [this] { return saveScopes(); })),
      checks_(new CheckController(this)),
      pages_(new QStackedWidget),
      welcome_(new WelcomePage),
      compare_(new CompareView),
      series_(new SeriesPage) {
    setWindowTitle("tdstudio");
    setWindowIcon(QIcon(":/tdstudio.svg"));
    setAcceptDrops(true);
    setStatusBar(statusBar_);
    setUpPages();
    setUpStatusBar();
    connectDocumentAndComparison();
    createMenus();
    connectSavesAndChecks();
    // A first window within the screen (on a 1024x700 screen 1400x860 put
    // its edges and the status bar off-screen); a window manager adds its frame.
    QSize size = designedSize();
    if (const QScreen* s = screen())
        size = size.boundedTo(s->availableGeometry().size() * 0.95);
    resize(size);
}

void MainWindow::setUpPages() {
    connect(documentPage_, &DocumentPage::reloadRequested, this, &MainWindow::reload);
    connect(documentPage_, &DocumentPage::copyKeyPathRequested, this,
            &MainWindow::copySelectedKeyPath);
    pages_->addWidget(documentPage_);
    pages_->addWidget(compare_);
    pages_->addWidget(series_);
    pages_->addWidget(welcome_);
    pages_->setCurrentWidget(welcome_);
    setCentralWidget(pages_);
    connect(welcome_, &WelcomePage::openFileRequested, this, &MainWindow::chooseFile);
    connect(welcome_, &WelcomePage::openDirectoryRequested, this, &MainWindow::chooseDirectory);
    connect(welcome_, &WelcomePage::openUrlRequested, this, &MainWindow::chooseUrl);
    connect(welcome_, &WelcomePage::openRequested, this, &MainWindow::openPath);
}

// The status bar: what was written and where, what reading over the web
// cost, and the way to stop a read.
void MainWindow::setUpStatusBar() {
    // A file written (a save, an export) is noted with the way to its folder,
    // for as long as its note shows.
    showInFolder_->setText(tr("Show in Folder"));
    showInFolder_->setAutoRaise(true);
    showInFolder_->hide();
    connect(showInFolder_, &QToolButton::clicked, this,
            [this] { file_dialogs::showInFolder(writtenPath_); });
    connect(statusBar(), &QStatusBar::messageChanged, this, [this](const QString& text) {
        if (text != writtenNote_)
            showInFolder_->hide();
    });
    statusBar_->addRightWidget(showInFolder_);
    statusBar_->addRightWidget(fetchedLabel_);
    fetchedLabel_->hide();
    // A slow server never holds the window: what waits on it can be stopped.
    cancelReads_->setText(tr("Cancel"));
    cancelReads_->setObjectName("cancelReads");
    cancelReads_->setToolTip(tr("Stop reading: the file being opened, the leaf being fetched"));
    statusBar_->addRightWidget(cancelReads_);
    cancelReads_->hide();
    connect(cancelReads_, &QToolButton::clicked, this, &MainWindow::cancelReads);
    statusBar_->addRightWidget(statusLabel_);
    // What reading over the web cost so far, while it grows.
    auto* fetched = new QTimer(this);
    connect(fetched, &QTimer::timeout, this, &MainWindow::showFetched);
    fetched->start(500);
    connect(documentPage_->previewPanel(), &PreviewPanel::leafReady, this,
            &MainWindow::showFetched);
    statusBar_->addRightWidget(compare_->statusWidget());
    // The welcome page lists what opens; the bar says how, in few words.
    statusBar()->showMessage(tr("Open a file with File > Open File… (Ctrl+O), or drop it here."));
}

void MainWindow::connectDocumentAndComparison() {
    connect(document_, &Document::loadStarted, this, [this](const QString& path) {
        statusBar()->showMessage(tr("Opening %1…").arg(path));
        showFetched();
    });
    connect(document_, &Document::loadCancelled, this, [this](const QString& path) {
        statusBar()->showMessage(tr("Opening %1 was cancelled.").arg(path), 10000);
        showFetched();
    });
    connect(document_, &Document::loaded, this, &MainWindow::showLoaded);
    connect(document_, &Document::failed, this, &MainWindow::showFailure);
    connect(compare_, &CompareView::message, this, [this](const QString& text, int timeoutMs) {
        statusBar()->showMessage(text, timeoutMs);
    });
    connect(compare_, &CompareView::comparing, this, [this] {
        showComparison(true);
        Q_EMIT comparisonStarted();
    });
    connect(compare_, &CompareView::finished, this, &MainWindow::comparisonFinished);
    connect(compare_, &CompareView::loadFailed, this, [this](const QString& message) {
        showComparison(false);
        statusBar()->showMessage(tr("Could not open for comparison: %1").arg(message));
        auto* box = new QMessageBox(QMessageBox::Critical, tr("Cannot compare"),
                                    tr("tdstudio could not open the tensordict to compare with."),
                                    QMessageBox::Ok, this);
        box->setInformativeText(message);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
        Q_EMIT comparisonFailed(message);
    });
}

void MainWindow::connectSavesAndChecks() {
    connect(saves_, &SaveController::message, this, [this](const QString& text, int timeoutMs) {
        statusBar()->showMessage(text, timeoutMs);
    });
    connect(saves_, &SaveController::runningChanged, this, [this](bool running) {
        saveAction_->setEnabled(!running && documentPage_->tensorDict() != nullptr);
    });
    connect(saves_, &SaveController::openRequested, this, &MainWindow::openPath);
    connect(checks_, &CheckController::message, this, [this](const QString& text, int timeoutMs) {
        statusBar()->showMessage(text, timeoutMs);
    });
    connect(checks_, &CheckController::checked, this, &MainWindow::showCheckReport);
    connect(checks_, &CheckController::repaired, this, [this](const QStringList& done) {
        // The files changed: the tree is read again, the report stays for it.
        const auto report = checks_->report();
        connect(
            this, &MainWindow::documentLoaded, this,
            [this, report] { documentPage_->overviewPanel()->setCheckReport(report); },
            Qt::SingleShotConnection);
        reload();
        statusBar()->showMessage(done.join("; "), 0);
    });
    connect(documentPage_->overviewPanel(), &OverviewPanel::checkRequested, this,
            &MainWindow::checkIntegrity);
    connect(documentPage_->overviewPanel(), &OverviewPanel::repairRequested, checks_,
            &CheckController::repair);
    connect(saves_, &SaveController::saved, this,
            [this](const QString& prefix) { noteWritten(tr("Saved %1").arg(prefix), prefix); });
    connect(documentPage_, &DocumentPage::exported, this, [this](const QString& path) {
        noteWritten(tr("Exported %1 (%2)")
                        .arg(path, nodetext::byteSizeText(std::uint64_t(QFileInfo(path).size()))),
                    path);
    });
    connect(saves_, &SaveController::closeReady, this, &QWidget::close, Qt::QueuedConnection);
}

void MainWindow::showCheckReport(std::shared_ptr<const tensordict::CheckReport> report) {
    // A report of the file open now (another may have been opened meanwhile).
    if (report->cancelled || QString::fromStdString(report->path) != currentPath())
        return;
    // The problems show under the root's overview, scrolled to, and
    // the broken keys are marked in the tree until the next reload.
    documentPage_->overviewPanel()->setCheckReport(report);
    QHash<QStringList, QString> broken;
    for (const tensordict::Problem& p : report->problems) {
        if (p.severity != tensordict::Severity::Error || p.key.empty())
            continue;
        QStringList key;
        for (const std::string& k : p.key)
            key << QString::fromStdString(k);
        broken.insert(key, QString::fromStdString(p.kind + ": " + p.message));
    }
    documentPage_->keyModel()->setFlagged(std::move(broken));
    if (!isComparing() && !documentPage_->showsOverview())
        selectKeyPath({});
    // The result is in Problems ("None found" too): in view.
    documentPage_->overviewPanel()->revealProblems();
}

QSize MainWindow::designedSize() {
    return {1400, 860};
}

void MainWindow::checkIntegrity() {
    if (documentPage_->tensorDict())
        checks_->check(currentPath());
}

void MainWindow::noteWritten(const QString& text, const QString& path) {
    writtenNote_ = text;
    writtenPath_ = path;
    statusBar()->showMessage(text);
    showInFolder_->show();
}

QAbstractButton* MainWindow::showInFolderButton() const {
    return showInFolder_;
}

KeyPathCopy::KeyPathCopy(QObject* parent, std::function<void()> copy)
    : QObject(parent), copy_(std::move(copy)) {}

bool KeyPathCopy::eventFilter(QObject*, QEvent* event) {
    if (event->type() != QEvent::ShortcutOverride && event->type() != QEvent::KeyPress)
        return false;  // only those two are key events
    const auto* key = static_cast<QKeyEvent*>(event);
    // Ctrl+C is the tree's own key before any shortcut (another Ctrl+C made
    // the tree's action ambiguous once, and the tree copied the bare name).
    if (event->type() == QEvent::ShortcutOverride && key->matches(QKeySequence::Copy)) {
        event->accept();
        return true;
    }
    if (event->type() == QEvent::KeyPress && key->matches(QKeySequence::Copy)) {
        copy_();
        return true;
    }
    return false;
}

void MainWindow::createMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* openFile = file->addAction(tr("&Open File…"), this, &MainWindow::chooseFile);
    openFile->setStatusTip(openableSentence());
    openFile->setShortcut(QKeySequence::Open);
    file->addAction(tr("Open &Directory…"), this, &MainWindow::chooseDirectory)
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    file->addAction(tr("Open &URL…"), this, &MainWindow::chooseUrl)
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_U));
    QMenu* recentMenu = file->addMenu(tr("Open &Recent"));
    recentMenu->setObjectName("dynamic");  // files, not commands: not in the shortcuts list
    recent_ = new RecentFiles(recentMenu, this);
    connect(recent_, &RecentFiles::openRequested, this, &MainWindow::openPath);
    welcome_->setRecentFiles(recent_->files());
    file->addSeparator();
    compareMenu_ = file->addMenu(tr("&Compare With"));
    compareMenu_->addAction(tr("&File…"), this, [this] { chooseComparison(false); })
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_D));
    compareMenu_->addAction(tr("&Directory…"), this, [this] { chooseComparison(true); })
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_D));
    compareMenu_->setEnabled(false);
    file->addAction(
            tr("Compare Along &Steps…"), this,
            [this] {
                const QString folder =
                    file_dialogs::openDirectory(this, file_dialogs::Kind::Series,
                                                tr("Compare along steps: a folder of checkpoints"));
                if (folder.isEmpty())
                    return;
                QStringList steps;
                try {
                    for (const std::string& step : tensordict::seriesInFolder(folder.toStdString()))
                        steps << QString::fromStdString(step);
                } catch (const std::exception& e) {
                    statusBar()->showMessage(QString::fromUtf8(e.what()));
                    return;
                }
                compareAlongSteps(steps);
            })
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_L));
    closeCompareAction_ =
        file->addAction(tr("C&lose Comparison"), this, &MainWindow::closeComparison);
    closeCompareAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_W));
    closeCompareAction_->setEnabled(false);
    file->addAction(tr("Re&load"), this, &MainWindow::reload)->setShortcut(QKeySequence::Refresh);
    checkAction_ = file->addAction(tr("Check &Integrity…"), this, &MainWindow::checkIntegrity);
    checkAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_K));
    checkAction_->setToolTip(
        tr("Read every byte of the dataset once and check it against its "
           "format, as tdstudio --check does"));
    checkAction_->setEnabled(false);
    file->addSeparator();
    saveAction_ = file->addAction(tr("&Save As / Export…"), saves_, &SaveController::saveAs);
    // Not QKeySequence::SaveAs: some platforms have none.
    saveAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));
    saveAction_->setEnabled(false);
    file->addSeparator();
    file->addAction(tr("&Quit"), this, &QWidget::close)
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Q));  // QKeySequence::Quit is not everywhere

    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    // Ctrl+C belongs to the widget with focus: the table copies its cells, the
    // trees their key path (below); the menu's own shortcut works anywhere.
    QAction* copy = edit->addAction(tr("&Copy Key Path"), this, &MainWindow::copySelectedKeyPath);
    copy->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
    for (QTreeView* view : {documentPage_->treeView(), compare_->treeView(), series_->treeView()}) {
        auto* treeCopy = new QAction(tr("Copy Key Path"), view);
        treeCopy->setShortcut(QKeySequence::Copy);
        treeCopy->setShortcutContext(Qt::WidgetWithChildrenShortcut);
        connect(treeCopy, &QAction::triggered, this, &MainWindow::copySelectedKeyPath);
        view->addAction(treeCopy);
        // The key itself is taken by the tree (the action lists it): another
        // Ctrl+C of the window can never make it ambiguous and let the tree's
        // own Copy put the bare name on the clipboard.
        view->installEventFilter(new KeyPathCopy(view, [this] { copySelectedKeyPath(); }));
    }
    compare_->treeView()->setAccessibleName(tr("Comparison tree"));
    QAction* find = edit->addAction(tr("&Filter Keys"), this, [this] {
        QLineEdit* filter = page()->filterEdit();
        filter->setFocus();
        filter->selectAll();
    });
    find->setShortcut(QKeySequence::Find);
    edit->addAction(tr("Focus Key &Tree"), this,
                    [this] { page()->treeView()->setFocus(Qt::ShortcutFocusReason); })
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));

    createViewMenu();

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&Keyboard Shortcuts"), this, &MainWindow::showShortcuts)
        ->setShortcut(QKeySequence::HelpContents);
    help->addAction(tr("&About tdstudio"), this, [this] {
        QString libraries;
        for (const auto& [name, version] : tensordict::libraryVersions())
            libraries += QString("<tr><td>%1&nbsp;&nbsp;</td><td>%2</td></tr>")
                             .arg(QString::fromStdString(name), QString::fromStdString(version));
        QMessageBox::about(
            this, tr("About tdstudio"),
            tr("<h3>tdstudio %1</h3><p>Browse, preview and save PyTorch tensordict memmap "
               "directories and .tdz archives.</p><p>libtensordict %2 reads and writes the format "
               "of tensordict 0.14.</p><table>%3</table>")
                .arg(QApplication::applicationVersion(),
                     QString::fromStdString(tensordict::version()), libraries));
    });
}

void MainWindow::createViewMenu() {
    QMenu* view = menuBar()->addMenu(tr("&View"));
    const auto& modes = leafModeTypes();
    for (int mode = 0; mode < static_cast<int>(modes.size()); ++mode) {
        QAction* action = view->addAction("&" + modes[std::size_t(mode)].title, this,
                                          [this, mode] { showMode(mode); });
        if (mode < 9)
            action->setShortcut(QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_1 + mode)));
    }
    view->addSeparator();
    // Not PgUp/PgDown or arrows: the table scrolls with those.
    view->addAction(tr("&Next Slice"), this, [this] { stepSlice(1); })
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Period));
    view->addAction(tr("P&revious Slice"), this, [this] { stepSlice(-1); })
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Comma));
    view->addAction(tr("&Go to Slice…"), this, &MainWindow::goToSlice)
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_G));
    view->addAction(tr("Next &Difference"), this,
                    [this] {
                        const QString why = page()->nextDifference();
                        if (!why.isEmpty())
                            statusBar()->showMessage(why, 5000);
                    })
        ->setShortcut(QKeySequence(Qt::Key_F3));
    view->addSeparator();
    // A replay buffer dump's rows: reopened as asked, the key kept.
    const auto replayRowsAction = [this, view](const QString& title, const QString& tip,
                                               const QKeySequence& shortcut,
                                               bool ReplayRows::*field) {
        QAction* action = view->addAction(title);
        action->setCheckable(true);
        action->setShortcut(shortcut);
        action->setToolTip(tip);
        action->setChecked(currentReplayRows().*field);
        connect(action, &QAction::toggled, this, [this, field](bool on) {
            ReplayRows rows = currentReplayRows();
            rows.*field = on;
            setReplayRows(rows);
            const auto td = document_->tensordict();
            if (td && td->store() && tensordict::replayBufferFacts(*td->store()))
                reload();
        });
    };
    replayRowsAction(tr("Show &All Rows of Replay Buffers"),
                     tr("Show every row of a replay buffer's storage, the rows past its fill "
                        "level greyed, not only its valid rows"),
                     QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_A), &ReplayRows::all);
    replayRowsAction(tr("Replay Buffer Rows in &Storage Order"),
                     tr("Show a replay buffer's rows in storage order, not oldest first"),
                     QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_T), &ReplayRows::storageOrder);
    view->addSeparator();
    QAction* groups = view->addAction(tr("Group Keys by &Dots"));
    groups->setCheckable(true);
    groups->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_G));
    groups->setToolTip(
        tr("Show flat dotted keys (a state_dict's layer1.0.conv.weight) nested "
           "by their dots; key paths stay the file's own"));
    groups->setChecked(QSettings().value("view/groupKeysByDots", false).toBool());
    documentPage_->setGroupKeysByDots(groups->isChecked());
    connect(groups, &QAction::toggled, this, [this](bool on) {
        QSettings().setValue("view/groupKeysByDots", on);
        documentPage_->setGroupKeysByDots(on);
    });
    groupKeysAction_ = groups;
    QAction* details = view->addAction(tr("&Details"));
    details->setCheckable(true);
    details->setChecked(!documentPage_->detailsPanel()->isCollapsed());
    details->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_I));
    connect(details, &QAction::toggled, this,
            [this](bool on) { documentPage_->detailsPanel()->setCollapsed(!on); });
    connect(documentPage_->detailsPanel(), &DetailsPanel::collapsedChanged, details,
            [details](bool collapsed) { details->setChecked(!collapsed); });
}

void MainWindow::showMode(int mode) {
    const QString why = page()->showMode(mode);
    if (!why.isEmpty())
        statusBar()->showMessage(why, 3000);
}

void MainWindow::stepSlice(int delta) {
    SliceSelector* selector = page()->currentSliceSelector();
    if (!selector || !selector->step(delta))
        statusBar()->showMessage(tr("This view shows the whole leaf: there is no other slice."),
                                 3000);
}

void MainWindow::goToSlice() {
    if (!page()->focusSliceEntry())
        statusBar()->showMessage(tr("This view shows the whole leaf: there is no slice to go to."),
                                 3000);
}

ShortcutsDialog* MainWindow::shortcutsDialog() const {
    return shortcutsDialog_.data();
}

void MainWindow::showShortcuts() {
    if (!shortcutsDialog_) {
        shortcutsDialog_ = new ShortcutsDialog(this, this);
        shortcutsDialog_->setAttribute(Qt::WA_DeleteOnClose);
    }
    shortcutsDialog_->show();
    shortcutsDialog_->raise();
    shortcutsDialog_->activateWindow();
}

// The file formats the registry opens, for the file dialogs.
QString MainWindow::openableFiles() {
    return tr(
        "Tensors (*.tdz *.zip *.pt *.pth *.safetensors *.npy *.npz *.td);;"
        "tensordict archives (*.tdz *.zip);;PyTorch checkpoints (*.pt *.pth);;"
        "safetensors (*.safetensors);;NumPy arrays (*.npy *.npz);;All files (*)");
}

void MainWindow::chooseFile() {
    const QString path =
        file_dialogs::openFile(this, file_dialogs::Kind::Open,
                               tr("Open tensordict archive or checkpoint"), openableFiles());
    if (!path.isEmpty())
        openPath(path);
}

void MainWindow::chooseDirectory() {
    const QString path = file_dialogs::openDirectory(this, file_dialogs::Kind::OpenDirectory,
                                                     tr("Open memmap directory"));
    if (!path.isEmpty())
        openPath(path);
}

void MainWindow::chooseUrl() {
    auto* dialog = new OpenUrlDialog(this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &OpenUrlDialog::locationChosen, this, &MainWindow::openPath);
    dialog->open();
    if (const QString last = QSettings().value("open/lastUrl").toString();
        last.startsWith("s3://") && last.endsWith('/'))
        dialog->browse(last);  // where the user browsed last time
}

void MainWindow::showFetched() {
    // What this document fetched: since it began to open (its load, then
    // its previews), not what earlier documents of other servers fetched.
    const tensordict::HttpCounters c = tensordict::httpCounters();
    const std::uint64_t requests = c.requests - document_->fetchedBefore().requests;
    const std::uint64_t bytes = c.bytes - document_->fetchedBefore().bytes;
    cancelReads_->setVisible(document_->isLoading() || c.inFlight > 0);
    fetchedLabel_->setVisible(requests > 0 || c.inFlight > 0);
    fetchedLabel_->setText(
        tr("%1 · %2 fetched")
            .arg(nodetext::countText(std::int64_t(requests), tr("request"), tr("requests")),
                 nodetext::byteSizeText(bytes)));
}

void MainWindow::cancelReads() {
    document_->cancelLoad();
    documentPage_->previewPanel()->cancelReads();
    showFetched();
}

void MainWindow::chooseComparison(bool directory) {
    using file_dialogs::Kind;
    const QString path =
        directory
            ? file_dialogs::openDirectory(this, Kind::CompareDirectory,
                                          tr("Compare with memmap directory"))
            : file_dialogs::openFile(this, Kind::Compare, tr("Compare with archive or checkpoint"),
                                     openableFiles());
    if (!path.isEmpty())
        compareWith(path);
}

void MainWindow::compareWith(const QString& path) {
    if (document_->isLoading()) {  // A first
        connect(
            this, &MainWindow::documentLoaded, this, [this, path] { compareWith(path); },
            Qt::SingleShotConnection);
        return;
    }
    auto td = documentPage_->tensorDict();
    if (!td) {
        statusBar()->showMessage(tr("Open a tensordict first, then compare it with another."));
        return;
    }
    // The selected key stays selected.
    compare_->start(td, path, page()->hasCurrentKey() ? page()->currentKeyPath() : QStringList());
    closeCompareAction_->setEnabled(true);
}

void MainWindow::compareAlongSteps(const QStringList& locations) {
    if (isComparing())
        closeComparison();
    series_->start(locations);
    pages_->setCurrentWidget(series_);
    statusLabel_->setVisible(false);
    closeCompareAction_->setEnabled(true);
    setWindowTitle(tr("%1 steps — tdstudio").arg(locations.size()));
}

void MainWindow::closeComparison() {
    if (series_->isActive()) {
        series_->close();
        showComparison(false);
        return;
    }
    const QStringList keys = compare_->currentKeyPath();
    compare_->close();
    showComparison(false);
    // What the comparison said ("Compared with B.") no longer describes the window.
    statusBar()->clearMessage();
    if (!keys.isEmpty())
        selectKeyPath(keys);
}

bool MainWindow::isComparing() const {
    return compare_->isActive();
}

Page* MainWindow::page() const {
    if (series_->isActive())
        return series_;
    if (compare_->isActive())
        return compare_;
    return documentPage_;
}

void MainWindow::showComparison(bool on) {
    pages_->setCurrentWidget(on                            ? static_cast<QWidget*>(compare_)
                             : documentPage_->tensorDict() ? static_cast<QWidget*>(documentPage_)
                                                           : welcome_);
    statusLabel_->setVisible(!on);
    closeCompareAction_->setEnabled(compare_->isActive() || series_->isActive());
    auto td = documentPage_->tensorDict();
    const QString label = td ? QFileInfo(QString::fromStdString(td->path())).fileName() : QString();
    if (on)
        setWindowTitle(
            tr("%1 ↔ %2 — tdstudio").arg(label, QFileInfo(compare_->pathB()).fileName()));
    else if (td)
        setWindowTitle(tr("%1 — tdstudio").arg(label));
}

void MainWindow::reload() {
    const QString path = currentPath();
    if (path.isEmpty())
        return;
    const QStringList keys = documentPage_->currentKeyPath();
    if (!keys.isEmpty())
        connect(
            this, &MainWindow::documentLoaded, this, [this, keys] { selectKeyPath(keys); },
            Qt::SingleShotConnection);
    openPath(path);
}

void MainWindow::openPath(const QString& path) {
    if (isComparing())
        closeComparison();
    lastError_.clear();
    // A local path is remembered as it is, wherever tdstudio starts next
    // (Open Recent, Reload): absolute. URLs stay URLs.
    document_->open(isRemote(path) || path.isEmpty() ? path : QFileInfo(path).absoluteFilePath());
}

QString MainWindow::currentPath() const {
    return document_->path();
}

void MainWindow::showLoaded() {
    auto td = document_->tensordict();
    const QString label = QFileInfo(QString::fromStdString(td->path())).fileName();
    if (!isRemote(QString::fromStdString(td->path())))  // dialogs start beside local files
        file_dialogs::setDocumentPath(this, QString::fromStdString(td->path()));
    documentPage_->showTensorDict(td, label, document_->keyIndex());
    setWindowTitle(tr("%1 — tdstudio").arg(label));
    recent_->add(QString::fromStdString(td->path()));
    welcome_->setRecentFiles(recent_->files());
    welcome_->setFailure({}, {});
    showFetched();
    if (pages_->currentWidget() == welcome_)
        pages_->setCurrentWidget(documentPage_);
    saveAction_->setEnabled(!saves_->isRunning());
    compareMenu_->setEnabled(true);
    checkAction_->setEnabled(true);
    documentPage_->overviewPanel()->setCheckReport(nullptr);  // of the file open before

    const auto errors = td->errors();
    const QString format = QString::fromStdString(td->format());
    const QString rootClass =
        td->root().isTensor() ? tr("one tensor") : QString::fromStdString(td->root().className());
    statusLabel_->setText(
        tr("%1 · %2 · %3 of tensors")
            .arg(format, rootClass,
                 nodetext::byteSizeText(documentPage_->keyModel()->totalBytes(&td->root()))));
    const auto ofKind = [&](tensordict::ErrorKind kind) {
        return std::count_if(errors.begin(), errors.end(), [kind](const tensordict::Node* n) {
            return n->failure()->kind == kind;
        });
    };
    const auto notReadHere = ofKind(tensordict::ErrorKind::NotReadHere);
    const auto unplaced = ofKind(tensordict::ErrorKind::Unplaced);
    const auto unreadable = std::int64_t(errors.size()) - notReadHere - unplaced;
    QStringList said;
    if (unreadable)
        said << tr("%1 could not be read; they are marked in red in the tree.")
                    .arg(nodetext::countText(unreadable, tr("part"), tr("parts")));
    if (notReadHere)
        said << tr("%1 of kinds tdstudio does not show are grey in the tree: they are not damaged.")
                    .arg(nodetext::countText(notReadHere, tr("part"), tr("parts")));
    if (unplaced)
        said << tr(
            "The file holds data outside every key tdstudio shows, left unread (grey "
            "in the tree).");
    if (errors.empty())
        statusBar()->showMessage(tr("Opened %1").arg(QString::fromStdString(td->path())), 5000);
    else
        statusBar()->showMessage(said.join(' '));
    // Loaded means shown as asked: with keys grouped by dots, once the grouped tree is.
    if (documentPage_->isGroupingKeys())
        connect(
            documentPage_, &DocumentPage::treeShown, this, [this] { Q_EMIT documentLoaded(); },
            Qt::SingleShotConnection);
    else
        Q_EMIT documentLoaded();
}

void MainWindow::showFailure(const QString& message) {
    lastError_ = message;
    statusBar()->showMessage(tr("Could not open: %1").arg(message));
    const QString headline = document_->failureHeadline();
    if (!documentPage_->tensorDict()) {
        // Nothing else to show: the window says what failed, and how to go on.
        welcome_->setFailure(document_->path(), headline + "\n\n" + message);
        pages_->setCurrentWidget(welcome_);
    } else {
        // The tensordict open before stays; the box says why the other did not open.
        auto* box = new QMessageBox(
            QMessageBox::Critical, tr("Cannot open"),
            headline.isEmpty() ? tr("tdstudio could not open this tensordict.") : headline,
            QMessageBox::Ok, this);
        box->setInformativeText(message);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();  // not exec(): never block the event loop
    }
    Q_EMIT documentFailed(message);
}

bool MainWindow::selectKeyPath(const QStringList& path) {
    return page()->selectKeyPath(path);
}

void MainWindow::copySelectedKeyPath() {
    if (!page()->hasCurrentKey())
        return;
    std::vector<std::string> path;
    for (const QString& k : page()->currentKeyPath())
        path.push_back(k.toStdString());
    const QString text = nodetext::keyPathText(path);
    QApplication::clipboard()->setText(text);
    statusBar()->showMessage(tr("Copied %1").arg(text), 3000);
}

QStringList MainWindow::recentFiles() const {
    return recent_->files();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    const auto urls = event->mimeData()->urls();
    if (!urls.isEmpty() && (urls.front().isLocalFile() || isRemote(urls.front().toString())))
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    const auto urls = event->mimeData()->urls();
    if (urls.isEmpty() || !(urls.front().isLocalFile() || isRemote(urls.front().toString())))
        return;
    // Ctrl or Alt held: compare with the open tensordict instead of opening.
    const QString path =
        urls.front().isLocalFile() ? urls.front().toLocalFile() : urls.front().toString();
    if ((event->modifiers() & (Qt::ControlModifier | Qt::AltModifier)) &&
        documentPage_->tensorDict())
        compareWith(path);
    else
        openPath(path);
    event->acceptProposedAction();
}

std::vector<SaveController::Scope> MainWindow::saveScopes() const {
    auto td = documentPage_->tensorDict();
    if (!td)
        return {};
    // The selected subtrees, unless the selection is empty or holds the root.
    std::vector<std::vector<std::string>> paths;
    bool whole = false;
    // A key group (View > Group Keys by Dots) stands for the keys inside it.
    const std::function<void(const tensordict::Node&)> add = [&](const tensordict::Node& node) {
        if (!node.isKeyGroup())
            return paths.push_back(node.keyPath());
        for (const tensordict::Node* child : node.children())
            add(*child);
    };
    for (const tensordict::Node* node : documentPage_->selectedNodes()) {
        if (!node || !node->parent())
            whole = true;
        else
            add(*node);
    }
    std::vector<SaveController::Scope> scopes;
    if (!whole && !paths.empty()) {
        SaveController::Scope selected;
        selected.data =
            std::make_shared<const tensordict::TensorDict>(tensordict::select(*td, paths));
        selected.description = paths.size() == 1 ? tr("the selected key")
                                                 : tr("the %1 selected keys").arg(paths.size());
        for (const auto& path : paths)
            selected.keys << nodetext::keyPathText(path);
        selected.bytes = nodetext::totalBytesOf(selected.data->root());
        selected.sourcePath = currentPath();
        scopes.push_back(std::move(selected));
    }
    SaveController::Scope all;
    all.data = td;
    const QString file = QFileInfo(QString::fromStdString(td->path())).fileName();
    all.description = td->root().isTensor() ? tr("the tensor in %1").arg(file)
                                            : tr("the whole tensordict (%1)").arg(file);
    all.bytes = nodetext::totalBytesOf(td->root());
    all.sourcePath = currentPath();
    scopes.push_back(std::move(all));
    return scopes;
}

void MainWindow::saveAs() {
    saves_->saveAs();
}

SaveJob* MainWindow::startSave(const QString& prefix, const tensordict::SaveOptions& options) {
    return saves_->start(prefix, options);
}

SaveJob* MainWindow::currentSave() const {
    return saves_->current();
}

SaveProgressDialog* MainWindow::saveProgressDialog() const {
    return saves_->progressDialog();
}

void MainWindow::closeEvent(QCloseEvent* event) {
    documentPage_->saveLayout();
    if (saves_->confirmClose())
        event->accept();
    else
        event->ignore();
}
