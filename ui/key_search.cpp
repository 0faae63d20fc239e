#include "key_search.h"

#include <QStringMatcher>
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

KeySearch::~KeySearch() = default;

void KeySearch::waitForWorker() {
    job_.waitForFinished();
}

void KeySearch::start(std::shared_ptr<const KeyIndex> keys, const QString& pattern) {
    job_.stream<Matches>(
        [keys = std::move(keys), pattern](const tensordict::CancelToken& cancel,
                                          const JobSend<Matches>& send) {
            return keys ? match(cancel, send, *keys, pattern) : 0;
        },
        [this](const Matches& matches) { Q_EMIT matchesFound(matches); },
        [this](int matchCount) { Q_EMIT finished(matchCount); });
}

int KeySearch::match(const tensordict::CancelToken& cancel, const JobSend<Matches>& send,
                     const KeyIndex& keys, const QString& pattern) {
    const QString folded = pattern.toCaseFolded();
    if (folded.isEmpty())
        return 0;
    const QStringMatcher matcher(folded, Qt::CaseSensitive);
    const QString& text = keys.foldedKeys();
    const std::vector<qsizetype>& starts = keys.starts();
    Matches batch;
    std::size_t batchLimit = kFirstBatch;
    int found = 0;
    auto sendBatch = [&] {
        found += static_cast<int>(batch.size());
        send(std::move(batch));
        batch = {};
        batchLimit = std::min(batchLimit * 2, kLargestBatch);
    };
    std::size_t chunk = kFirstChunk;
    for (std::size_t first = 0, last = 0; first < keys.size(); first = last) {
        if (cancel.isCancelled())
            return found;
        last = std::min(first + chunk, keys.size());
        chunk = std::min(chunk * 2, kLargestChunk);
        const qsizetype chunkEnd = last < keys.size() ? starts[last] : text.size();
        qsizetype at = starts[first];
        while ((at = matcher.indexIn(text.constData(), chunkEnd, at)) >= 0) {
            const std::size_t entry = keys.entryAt(at);
            batch.push_back(keys.node(entry));
            if (batch.size() >= batchLimit)
                sendBatch();
            // One match per key: go on from the next key.
            at = entry + 1 < keys.size() ? starts[entry + 1] : chunkEnd;
            if (at >= chunkEnd)
                break;
        }
        // Sparse matches are not held back by the rest of a long scan.
        if (!batch.empty())
            sendBatch();
    }
    return found;
}
