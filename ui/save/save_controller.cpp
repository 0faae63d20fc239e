#include "save_controller.h"

#include <QFileInfo>
#include <QMessageBox>
#include <QWidget>

#include "save_job.h"
#include "save_options_dialog.h"
#include "save_progress_dialog.h"

SaveController::SaveController(QWidget* window, std::function<std::vector<Scope>()> scopes)
    : QObject(window), window_(window), scopes_(std::move(scopes)) {}

// A file of one tensor under the key `keyName` (as --key-name saves it);
// anything else, or no name, as it is.
std::shared_ptr<const tensordict::TensorDict> SaveController::withKey(
    std::shared_ptr<const tensordict::TensorDict> data, const QString& keyName) {
    if (!data || keyName.isEmpty() || !data->root().isTensor())
        return data;
    return std::make_shared<const tensordict::TensorDict>(
        tensordict::underKey(*data, keyName.toStdString()));
}

namespace {

// Python objects of a checkpoint, or parts not read here, anywhere in the
// tree (metadata only): what "skip objects" leaves out.
bool hasObjects(const tensordict::Node& node) {
    if (node.kind() == tensordict::NodeKind::Object || node.isUnread())
        return true;
    for (const tensordict::Node* child : node.children())
        if (hasObjects(*child))
            return true;
    return false;
}

}  // namespace

SaveProgressDialog* SaveController::progressDialog() const {
    return progressDialog_.data();
}

void SaveController::saveAs() {
    if (job_)
        return;
    const std::vector<Scope> scopes = scopes_();
    if (scopes.empty() || !scopes.front().data)
        return;
    std::vector<SaveScopeChoice> choices;
    for (const Scope& scope : scopes)
        choices.push_back({scope.description, scope.keys, scope.bytes});
    SaveOptionsDialog dialog(std::move(choices), scopes.front().sourcePath, window_);
    // The whole tree holds every object a selection could.
    dialog.setHasObjects(hasObjects(scopes.back().data->root()));
    if (scopes.back().data->root().isTensor())  // a file of one tensor: saved under a key
        dialog.setSingleTensor(QFileInfo(scopes.back().sourcePath).completeBaseName());
    // What the save would refuse about the data, said before Save (on a worker).
    std::vector<std::shared_ptr<const tensordict::TensorDict>> data;
    for (const Scope& scope : scopes)
        data.push_back(scope.data);
    dialog.setDataCheck(
        [data](int scope, const QString& keyName, const tensordict::SaveOptions& options) {
            if (scope < 0 || scope >= static_cast<int>(data.size()) || !data[std::size_t(scope)])
                return std::optional<tensordict::Failure>();
            return tensordict::saveRefusal(*withKey(data[std::size_t(scope)], keyName), options);
        });
    if (dialog.exec() != QDialog::Accepted)
        return;
    start(dialog.destination(), dialog.options(), dialog.scope(), dialog.keyName());
}

SaveJob* SaveController::start(const QString& prefix, const tensordict::SaveOptions& options,
                               int scopeIndex, const QString& keyName) {
    const std::vector<Scope> scopes = scopes_();
    if (job_ || scopeIndex < 0 || scopeIndex >= static_cast<int>(scopes.size()))
        return nullptr;
    const Scope& scope = scopes[std::size_t(scopeIndex)];
    if (!scope.data)
        return nullptr;
    job_ = new SaveJob(this);
    Q_EMIT runningChanged(true);
    // Started first: its prefix and options are what the dialog shows. Its
    // progress and outcome arrive as queued signals, after the connections below.
    job_->start(withKey(scope.data, keyName), prefix, options);
    progressDialog_ = new SaveProgressDialog(job_, window_);
    progressDialog_->setAttribute(Qt::WA_DeleteOnClose);
    connect(progressDialog_, &SaveProgressDialog::openRequested, this,
            &SaveController::openRequested);
    auto finished = [this](const QString& text, int timeoutMs) {
        if (!text.isEmpty())
            Q_EMIT message(text, timeoutMs);
        job_->deleteLater();
        job_ = nullptr;
        Q_EMIT runningChanged(false);
        if (closeAfterSave_)  // the user asked to quit and the save is now over
            Q_EMIT closeReady();
    };
    connect(job_, &SaveJob::succeeded, this, [this, finished] {
        const QString prefix = job_->prefix();
        finished({}, 0);
        Q_EMIT saved(prefix);
    });
    connect(job_, &SaveJob::failed, this, [finished](const JobOutcome& outcome) {
        finished(tr("Save failed: %1").arg(outcome.text()), 0);
    });
    connect(job_, &SaveJob::cancelled, this, [finished] { finished(tr("Save cancelled"), 5000); });
    progressDialog_->show();
    return job_;
}

bool SaveController::confirmClose() {
    if (!job_)
        return true;
    if (closeAfterSave_)  // already cancelling: the window closes when the save ends
        return false;
    const auto answer = QMessageBox::question(
        window_, tr("A save is running"),
        tr("Saving to %1 is not finished. Cancel it and quit?").arg(job_->prefix()),
        QMessageBox::Yes | QMessageBox::No, QMessageBox::No);
    if (answer != QMessageBox::Yes)
        return false;
    // The writers stop at their next check and the save's end closes the
    // window; the event loop goes on meanwhile.
    closeAfterSave_ = true;
    job_->cancel();
    Q_EMIT message(tr("Cancelling the save to %1, then closing…").arg(job_->prefix()), 0);
    return false;
}
