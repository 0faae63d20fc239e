#include "key_search.h"

#include <QFutureWatcher>
#include <QStringMatcher>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>

namespace {
// Keys scanned between checks for a cancel and for matches to send: few at
// first, so that sparse matches show at once, more as the scan goes on.
constexpr std::size_t kFirstChunk = 1024;
constexpr std::size_t kLargestChunk = 16384;
// The first batch is small so that it shows at once; later ones grow.
constexpr std::size_t kFirstBatch = 32;
constexpr std::size_t kLargestBatch = 8192;
}  // namespace

KeySearch::KeySearch(QObject* parent) : QObject(parent) {}

KeySearch::~KeySearch() {
    cancel();
}

void KeySearch::cancel() {
    if (!watcher_)
        return;
    // The worker holds only the index and its promise: it may finish on its own.
    watcher_->disconnect(this);
    watcher_->cancel();
    watcher_->deleteLater();
    watcher_ = nullptr;
}

void KeySearch::waitForWorker() const {
    if (watcher_)
        watcher_->waitForFinished();
}

void KeySearch::start(QFuture<std::shared_ptr<const KeyIndex>> keys, const QString& pattern) {
    cancel();
    matchCount_ = 0;
    auto* watcher = new QFutureWatcher<Matches>(this);
    watcher_ = watcher;
    connect(watcher, &QFutureWatcherBase::resultsReadyAt, this,
            [this, watcher](int begin, int end) {
                if (watcher != watcher_)
                    return;  // a superseded search
                for (int i = begin; i < end; ++i) {
                    const Matches matches = watcher->resultAt(i);
                    matchCount_ += static_cast<int>(matches.size());
                    Q_EMIT matchesFound(matches);
                }
            });
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher] {
        if (watcher != watcher_)
            return;
        watcher_ = nullptr;
        watcher->deleteLater();
        Q_EMIT finished(matchCount_);
    });
    watcher->setFuture(QtConcurrent::run([keys, pattern](QPromise<Matches>& promise) {
        // Waiting here runs the index's build on this thread if it has not started.
        const std::shared_ptr<const KeyIndex> index = keys.result();
        if (index)
            match(promise, *index, pattern);
    }));
}

void KeySearch::match(QPromise<Matches>& promise, const KeyIndex& keys, const QString& pattern) {
    const QString folded = pattern.toCaseFolded();
    if (folded.isEmpty())
        return;
    const QStringMatcher matcher(folded, Qt::CaseSensitive);
    const QString& text = keys.foldedKeys();
    const std::vector<qsizetype>& starts = keys.starts();
    Matches batch;
    std::size_t batchLimit = kFirstBatch;
    auto send = [&] {
        promise.addResult(std::move(batch));
        batch = {};
        batchLimit = std::min(batchLimit * 2, kLargestBatch);
    };
    std::size_t chunk = kFirstChunk;
    for (std::size_t first = 0, last = 0; first < keys.size(); first = last) {
        if (promise.isCanceled())
            return;
        last = std::min(first + chunk, keys.size());
        chunk = std::min(chunk * 2, kLargestChunk);
        const qsizetype chunkEnd = last < keys.size() ? starts[last] : text.size();
        qsizetype at = starts[first];
        while ((at = matcher.indexIn(text.constData(), chunkEnd, at)) >= 0) {
            const std::size_t entry = keys.entryAt(at);
            batch.push_back(keys.node(entry));
            if (batch.size() >= batchLimit)
                send();
            // One match per key: go on from the next key.
            at = entry + 1 < keys.size() ? starts[entry + 1] : chunkEnd;
            if (at >= chunkEnd)
                break;
        }
        // Sparse matches are not held back by the rest of a long scan.
        if (!batch.empty())
            send();
    }
}
