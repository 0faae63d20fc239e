// What a replay buffer's or a stack's tree means beyond its leaves: the
// episodes of a TED buffer, and the facts --info --json gives.

#include <vector>

#include "tensordict/datasets.h"
#include "tensordict/element.h"
#include "tensordict/error.h"
#include "tensordict/guarded_read.h"

namespace tensordict {
namespace {

// A leaf of one value per row (shape [rows] or [rows, 1]), decoded as doubles.
std::optional<std::vector<double>> perRowValues(const Node* leaf, std::int64_t rows) {
    if (!leaf || !leaf->isTensor())
        return std::nullopt;
    const TensorLeaf& l = leaf->leaf();
    if (l.shape.empty() || l.shape[0] != rows || l.numel != rows ||
        dtypeInfo(l.dtype).category == DTypeCategory::Complex)
        return std::nullopt;
    const std::size_t item = itemSize(l.dtype);
    std::vector<std::byte> bytes(static_cast<std::size_t>(l.nbytes));
    leaf->readInto(0, bytes.data(), bytes.size());
    std::vector<double> out(static_cast<std::size_t>(rows));
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = elementAsDouble(bytes.data() + i * item, l.dtype);
    return out;
}

Value optionalInt(const std::optional<std::int64_t>& v) {
    return v ? Value(*v) : Value();
}

}  // namespace

std::vector<Episode> episodesOf(const Node& root) {
    const Node* ids = root.find({"collector", "traj_ids"});
    if (!ids || !ids->isTensor() || ids->leaf().shape.empty())
        return {};
    const std::int64_t rows = ids->leaf().shape[0];
    const auto traj = perRowValues(ids, rows);
    const auto reward = perRowValues(root.find({"next", "reward"}), rows);
    if (!traj || !reward)
        return {};
    const auto done = perRowValues(root.find({"next", "done"}), rows);
    // A replay buffer's rows that are not valid (all rows shown) are no one's.
    const std::optional<ReplayBufferFacts> facts =
        root.store() ? replayBufferFacts(*root.store()) : std::nullopt;
    const auto valid = [&](std::int64_t i) {
        return !facts || facts->isValid(facts->storageRowOf(i));
    };
    std::vector<Episode> episodes;
    bool open = false;  // an episode runs on from the row before
    for (std::int64_t i = 0; i < rows; ++i) {
        if (!valid(i)) {
            open = false;
            continue;
        }
        const auto id = static_cast<std::int64_t>((*traj)[std::size_t(i)]);
        if (!open || episodes.back().trajId != id) {
            // The oldest row of a buffer that wrapped: what came before it is gone.
            const bool cut =
                facts && facts->wrapped() && facts->storageRowOf(i) == facts->oldestRow;
            episodes.push_back({id, i, 0, 0.0, cut});
        }
        open = true;
        ++episodes.back().length;
        episodes.back().reward += (*reward)[std::size_t(i)];
    }
    // The newest episode is unfinished unless its last row is done.
    if (!episodes.empty() && done) {
        const Episode& last = episodes.back();
        if ((*done)[std::size_t(last.firstRow + last.length - 1)] == 0)
            episodes.back().partial = true;
    }
    return episodes;
}

Value::Object datasetFactsValue(const Node& root) {
    if (!root.store())
        return {};
    if (const auto facts = replayBufferFacts(*root.store())) {
        Value::List pickled;
        Value::Object contents;
        for (std::size_t i = 0; i < facts->pickledFiles.size(); ++i) {
            pickled.push_back(Value(facts->pickledFiles[i]));
            contents.emplace_back(facts->pickledFiles[i], Value(facts->pickledContents[i]));
        }
        Value::List episodes;
        std::string episodesError;
        try {
            for (const Episode& e : episodesOf(root))
                episodes.push_back(Value(Value::Object{{"traj_id", Value(e.trajId)},
                                                       {"first_row", Value(e.firstRow)},
                                                       {"length", Value(e.length)},
                                                       {"return", Value(e.reward)},
                                                       {"partial", Value(e.partial)}}));
        } catch (const Error& e) {  // the leaves could not be read: the rest still shows
            episodesError = e.what();
        }
        Value::Object buffer{
            {"capacity", Value(facts->capacity)},
            {"valid", optionalInt(facts->valid)},
            {"cursor", optionalInt(facts->cursor)},
            {"write_count", optionalInt(facts->writeCount)},
            {"sampler", Value(facts->sampler)},
            {"writer", Value(facts->writer)},
            {"sampler_parameters", Value(facts->samplerParameters)},
            {"writer_parameters", Value(facts->writerParameters)},
            {"batch_size", optionalInt(facts->batchSize)},
            {"layout", Value(facts->layout)},
            {"oldest_row", Value(facts->oldestRow)},
            {"first_shown_row", Value(facts->firstShownRow)},
            {"shown_rows", Value(facts->shownRows)},
            {"pickled", Value(std::move(pickled))},
            {"pickled_contents", Value(std::move(contents))},
        };
        if (!episodes.empty())
            buffer.emplace_back("episodes", Value(std::move(episodes)));
        if (!episodesError.empty())
            buffer.emplace_back("episodes_error", Value(episodesError));
        return {{"replay_buffer", Value(std::move(buffer))}};
    }
    if (const auto facts = stackFacts(*root.store())) {
        Value::List chunks;
        for (const StackChunk& c : facts->chunks)
            chunks.push_back(
                Value(Value::Object{{"name", Value(c.name)}, {"rows", Value(c.rows)}}));
        return {{"stack", Value(Value::Object{{"chunks", Value(std::move(chunks))}})}};
    }
    return {};
}

}  // namespace tensordict
