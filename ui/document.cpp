#include "document.h"

#include "load_settings.h"

#include <QtConcurrent/QtConcurrentRun>

Document::Document(QObject* parent) : QObject(parent) {}

Document::~Document() {
    if (watcher_)
        watcher_->waitForFinished();
}

Document::LoadResult Document::loadNow(const QString& path) {
    // Show what can be read, mark the rest.
    const tensordict::LoadOptions options = loadOptionsFromSettings(/*tolerant=*/true);
    try {
        return {std::make_shared<const tensordict::TensorDict>(
                    tensordict::load(path.toStdString(), options)),
                {},
                nullptr};
    } catch (const std::exception& e) {
        return {nullptr, QString::fromUtf8(e.what()), nullptr};
    }
}

void Document::open(const QString& path) {
    if (watcher_) {
        // Abandon the running load: its watcher goes, its result is dropped.
        watcher_->disconnect(this);
        connect(watcher_, &QFutureWatcherBase::finished, watcher_, &QObject::deleteLater);
        watcher_ = nullptr;
    }
    path_ = path;
    watcher_ = new QFutureWatcher<LoadResult>(this);
    connect(watcher_, &QFutureWatcherBase::finished, this, &Document::finish);
    watcher_->setFuture(QtConcurrent::run([path] {
        LoadResult result = loadNow(path);
        // The tree's whole walk happens here, never on the GUI thread.
        if (result.tensordict)
            result.keys = KeyIndex::build(result.tensordict);
        return result;
    }));
    Q_EMIT loadStarted(path);
}

void Document::finish() {
    QFutureWatcher<LoadResult>* watcher = watcher_;
    watcher_ = nullptr;
    const LoadResult result = watcher->result();
    watcher->deleteLater();
    if (!result.tensordict) {
        Q_EMIT failed(result.error);
        return;
    }
    tensordict_ = result.tensordict;
    keys_ = result.keys;
    Q_EMIT loaded();
}
