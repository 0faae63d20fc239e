#include "document.h"

#include "load_settings.h"
#include "open_failure.h"

Document::Document(QObject* parent) : QObject(parent) {}

Document::~Document() = default;

Document::LoadResult Document::loadNow(const QString& path) {
    // Show what can be read, mark the rest.
    const tensordict::LoadOptions options = loadOptionsFromSettings(/*tolerant=*/true);
    try {
        LoadResult loaded;
        loaded.tensordict = std::make_shared<const tensordict::TensorDict>(
            tensordict::load(path.toStdString(), options));
        return loaded;
    } catch (const tensordict::Cancelled&) {
        throw;  // the load was abandoned: nothing to deliver
    } catch (const std::exception& e) {
        LoadResult failed;
        failed.failure = tensordict::failureOf(e);
        failed.error = QString::fromStdString(failed.failure->text());
        return failed;
    }
}

void Document::open(const QString& path) {
    // A load still running is abandoned: its result is dropped.
    path_ = path;
    // Before the load's first read: this document's requests count from
    // here (a fast load may be done before start() returns).
    fetchedBefore_ = tensordict::httpCounters();
    load_.start(
        [path](const tensordict::CancelToken&) {
            LoadResult result;
            try {
                result = loadNow(path);
            } catch (const tensordict::Cancelled&) {
                return result;  // cancelled: dropped by the tracker, never delivered
            }
            // The tree's whole walk happens here, never on the GUI thread; so
            // does the look at the disk that explains a failure.
            if (result.tensordict)
                result.keys = KeyIndex::build(result.tensordict);
            else
                result.headline = describeOpenFailure(path, *result.failure).headline;
            return result;
        },
        [this](LoadResult result) { finish(std::move(result)); });
    Q_EMIT loadStarted(path);
}

void Document::cancelLoad() {
    if (!load_.isBusy())
        return;
    load_.cancel();
    const QString abandoned = path_;
    path_ = tensordict_ ? QString::fromStdString(tensordict_->path()) : QString();
    Q_EMIT loadCancelled(abandoned);
}

void Document::finish(LoadResult result) {
    failureHeadline_ = result.headline;
    if (!result.tensordict) {
        Q_EMIT failed(result.error);
        return;
    }
    tensordict_ = std::move(result.tensordict);
    keys_ = std::move(result.keys);
    Q_EMIT loaded();
}
