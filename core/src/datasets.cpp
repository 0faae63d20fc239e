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
    std::vector<Episode> episodes;
    for (std::int64_t i = 0; i < rows; ++i) {
        const auto id = static_cast<std::int64_t>((*traj)[std::size_t(i)]);
        if (episodes.empty() || episodes.back().trajId != id)
            episodes.push_back({id, i, 0, 0.0});
        ++episodes.back().length;
        episodes.back().reward += (*reward)[std::size_t(i)];
    }
    return episodes;
}

Value::Object datasetFactsValue(const Node& root) {
    if (!root.store())
        return {};
    if (const auto facts = replayBufferFacts(*root.store())) {
        Value::List pickled;
        for (const std::string& f : facts->pickledFiles)
            pickled.push_back(Value(f));
        Value::List episodes;
        for (const Episode& e : episodesOf(root))
            episodes.push_back(Value(Value::Object{{"traj_id", Value(e.trajId)},
                                                   {"first_row", Value(e.firstRow)},
                                                   {"length", Value(e.length)},
                                                   {"return", Value(e.reward)}}));
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
        };
        if (!episodes.empty())
            buffer.emplace_back("episodes", Value(std::move(episodes)));
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
