#include "tensordict/series.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <string_view>
#include <thread>

#include "sources/folder_listing.h"
#include "statistics/float32_sums.h"
#include "tensordict/element.h"
#include "tensordict/error.h"
#include "tensordict/guarded_read.h"
#include "tensordict/keys.h"
#include "tensordict/statistics.h"
#include "tensordict/worker_threads.h"

namespace tensordict {
namespace {

constexpr std::uint64_t kPieceElements = 1u << 16;  // read and decoded at a time

using KeyPath = std::vector<std::string>;

// Values as float32 where that is exact (float32 read in place; bfloat16
// and float16 widened into a buffer), else decoded to float64 (complex by
// magnitude, as the statistics count it).
class Values {
public:
    void set(const std::byte* raw, DType dtype, std::size_t n) {
        n_ = n;
        float32_ = nullptr;
        if (dtype == DType::Float32) {
            float32_ = reinterpret_cast<const float*>(raw);
            return;
        }
        const std::size_t item = itemSize(dtype);
        if (dtype == DType::BFloat16 || dtype == DType::Float16) {
            widened_.resize(n);
            const auto widen = dtype == DType::BFloat16 ? bfloat16ToFloat : halfToFloat;
            for (std::size_t i = 0; i < n; ++i) {
                std::uint16_t h;
                std::memcpy(&h, raw + i * 2, 2);
                widened_[i] = widen(h);
            }
            float32_ = widened_.data();
            return;
        }
        decoded_.resize(n);
        if (dtype == DType::Float64)
            std::memcpy(decoded_.data(), raw, n * 8);
        else if (dtypeInfo(dtype).category == DTypeCategory::Complex)
            for (std::size_t i = 0; i < n; ++i) {
                const ComplexValue c = elementAsComplex(raw + i * item, dtype);
                decoded_[i] = std::hypot(c.re, c.im);
            }
        else
            for (std::size_t i = 0; i < n; ++i)
                decoded_[i] = elementAsDouble(raw + i * item, dtype);
    }
    std::size_t size() const { return n_; }
    const float* float32() const { return float32_; }  // null: as float64 only
    const double* decoded() const { return decoded_.data(); }

private:
    std::size_t n_ = 0;
    const float* float32_ = nullptr;
    std::vector<float> widened_;
    std::vector<double> decoded_;
};

struct Float32At {
    const float* p;
    double operator()(std::size_t i) const { return p[i]; }
};
struct DoubleAt {
    const double* p;
    double operator()(std::size_t i) const { return p[i]; }
};

// The sums of one piece of a step's values (b), and of how they moved
// from the step before (a), merged in order across pieces.
struct Sums {
    Moments moments;    // its zeros not counted: no figure needs them
    double normSq = 0;  // of b's finite values
    bool compared = false;
    std::int64_t changed = 0;
    double maxAbs = 0, dot = 0, aSq = 0, bSq = 0;  // over positions finite in both

    void merge(const Sums& o) {
        moments.merge(o.moments);
        normSq += o.normSq;
        changed += o.changed;
        maxAbs = std::max(maxAbs, o.maxAbs);
        dot += o.dot, aSq += o.aSq, bSq += o.bSq;
    }
};

// One pass over b's values (and a's): b's moments (sums about its first
// finite value, as momentsOf takes them) and norm, and how b moved from a.
template <typename B, typename A>
Sums sumsOf(std::size_t n, B b, A a, bool compare) {
    Sums s;
    Moments& m = s.moments;
    m.count = std::int64_t(n);
    double shift = 0, sum = 0, sumsq = 0;
    bool haveShift = false;
    for (std::size_t i = 0; i < n; ++i) {
        const double y = b(i);
        const bool finite = std::isfinite(y);
        if (!finite) {
            m.nans += std::isnan(y);
            m.infs += std::isinf(y);
        } else {
            if (!haveShift)
                shift = y, haveShift = true;
            const double d = y - shift;
            sum += d, sumsq += d * d;
            m.min = std::min(m.min, y), m.max = std::max(m.max, y);
            s.normSq += y * y;
            ++m.finite;
        }
        if (compare) {
            const double x = a(i);
            s.changed += !(x == y || (std::isnan(x) && std::isnan(y)));
            if (finite && std::isfinite(x)) {
                s.maxAbs = std::max(s.maxAbs, std::fabs(y - x));
                s.dot += x * y, s.aSq += x * x, s.bSq += y * y;
            }
        }
    }
    if (m.finite && std::isfinite(sum) && std::isfinite(sumsq)) {
        m.mean = shift + sum / double(m.finite);
        m.m2 = std::max(0.0, sumsq - sum * sum / double(m.finite));
    } else if (m.finite) {  // squares past the largest double: momentsOf's careful way
        s.moments =
            momentsOf(0, std::int64_t(n), [&](std::int64_t i) { return b(std::size_t(i)); });
    }
    s.compared = compare;
    return s;
}

// The common case, float values that are all finite, in one vector pass.
// The norm comes from the sums about the shift (sum of y^2 = sumsq +
// shift * (2 sum + n shift); the shift is one of the values, so it cannot
// swamp them), and a's squares from a's own sums of this piece. False when
// a value is NaN or Inf: the general way then counts them.
bool finiteFloat32Sums(const float* b, const float* a, const Sums* aSums, std::size_t n,
                       Sums& out) {
    if (n == 0)
        return false;
    const float shift = b[0];
    const Float32Sums f = float32Sums(b, a, n, shift);
    if (!f.allFinite())
        return false;
    Sums s;
    Moments& m = s.moments;
    const double count = double(n);
    m.count = m.finite = std::int64_t(n);
    m.min = f.lo, m.max = f.hi;
    m.mean = shift + f.sum / count;
    m.m2 = std::max(0.0, f.sumsq - f.sum * f.sum / count);
    s.normSq = std::max(0.0, f.sumsq + double(shift) * (2 * f.sum + count * double(shift)));
    s.bSq = s.normSq;
    if (a) {  // both all finite: a NaN or Inf in a makes the dot product one
        s.compared = true;
        s.changed = f.changed, s.maxAbs = f.maxAbs, s.dot = f.dot;
        s.aSq = aSums->normSq;
    }
    out = s;
    return true;
}

// `aSums`: a's own sums of this piece, when `a` is given.
Sums sumsOf(const Values& b, const Values* a, const Sums* aSums) {
    const std::size_t n = b.size();
    const float* bf = b.float32();
    const float* af = a ? a->float32() : nullptr;
    Sums s;
    if (bf && (!a || af) && finiteFloat32Sums(bf, af, aSums, n, s))
        return s;
    if (bf) {
        if (af)
            return sumsOf(n, Float32At{bf}, Float32At{af}, true);
        return sumsOf(n, Float32At{bf}, DoubleAt{a ? a->decoded() : nullptr}, a != nullptr);
    }
    const DoubleAt bAt{b.decoded()};
    if (af)
        return sumsOf(n, bAt, Float32At{af}, true);
    return sumsOf(n, bAt, DoubleAt{a ? a->decoded() : nullptr}, a != nullptr);
}

// A leaf's elements in pieces: by range where the leaf can be read at any
// offset (files, stored entries, chunks, entries with access points), else
// front to back by one reader (a deflated entry inflated as it goes).
class ElementSource {
public:
    explicit ElementSource(const Node& leaf)
        : leaf_(leaf), item_(itemSize(leaf.leaf().dtype)), byRange_(leaf.readsAnyRange()) {}
    // Elements [first, first + n) into `out`; without ranges, in order only.
    void read(std::uint64_t first, std::size_t n, std::byte* out) {
        if (byRange_)
            return leaf_.readInto(first * item_, out, n * item_);
        if (!reader_)
            reader_ = std::make_unique<LeafReader>(leaf_);
        for (std::size_t done = 0, want = n * item_; done < want;) {
            const std::size_t got = reader_->read(out + done, want - done);
            if (got == 0)
                throw Error::truncated(leaf_.fileName(), "the leaf ends early");
            done += got;
        }
    }

private:
    const Node& leaf_;
    const std::size_t item_;
    const bool byRange_;
    std::unique_ptr<LeafReader> reader_;
};

// What a thread reuses: a piece of two consecutive steps, raw and as values.
struct Buffers {
    std::vector<std::byte> raw[2];
    Values values[2];
};

void collectLeaves(const Node& node, std::vector<const Node*>& out) {
    if (node.isTensor()) {
        out.push_back(&node);
        return;
    }
    for (const Node* child : node.children())
        collectLeaves(*child, out);
}

bool wanted(const KeyPath& key, const std::vector<KeyPath>& filters) {
    if (filters.empty())
        return true;
    for (const KeyPath& f : filters)
        if (f.size() <= key.size() && std::equal(f.begin(), f.end(), key.begin()))
            return true;
    return false;
}

StepFigures figuresOf(const Sums& s) {
    StepFigures f;
    const Moments& m = s.moments;
    f.count = m.count, f.nans = m.nans, f.infs = m.infs;
    if (m.finite) {
        f.norm = std::sqrt(s.normSq);
        f.mean = m.mean, f.std = m.populationStd(), f.min = m.min, f.max = m.max;
    }
    if (s.compared) {
        f.maxAbsDelta = s.maxAbs;
        f.changedFraction = m.count ? double(s.changed) / double(m.count) : 0.0;
        if (s.aSq > 0 && s.bSq > 0)
            f.cosine = s.dot / (std::sqrt(s.aSq) * std::sqrt(s.bSq));
    }
    return f;
}

}  // namespace

SeriesReport compareAlongSteps(const std::vector<std::string>& locations,
                               const SeriesOptions& options) {
    const int threads = options.threads > 0
                            ? options.threads
                            : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const std::size_t stepCount = locations.size();
    SeriesReport report;
    report.steps = locations;

    // Every step open at once (their trees; bytes are read piece by piece),
    // and each key's leaf at every step (nullptr: none).
    std::vector<TensorDict> opened;
    opened.reserve(stepCount);
    std::map<KeyPath, std::size_t> index;
    std::vector<std::vector<const Node*>> leafOf;
    for (std::size_t step = 0; step < stepCount; ++step) {
        if (options.cancel)
            options.cancel->throwIfCancelled(locations[step]);
        opened.push_back(load(locations[step], options.load));
        std::vector<const Node*> leaves;
        collectLeaves(opened.back().root(), leaves);
        for (const Node* leaf : leaves) {
            KeyPath key = leaf->keyPath();
            if (!wanted(key, options.keys))
                continue;
            const auto [it, added] = index.emplace(key, report.keys.size());
            if (added) {
                report.keys.push_back({std::move(key), {}});
                leafOf.emplace_back(stepCount, nullptr);
            }
            leafOf[it->second][step] = leaf;
        }
    }

    // A task is one piece of a key at every step, so that each file is read
    // once: a step's piece is summed and compared with the step before's
    // while both are in memory. A key with a leaf read front to back is one
    // task of all its pieces, in order.
    struct Task {
        std::size_t key;
        std::uint64_t first, count;  // elements
    };
    std::vector<Task> tasks;
    std::vector<std::vector<Sums>> sums(report.keys.size());  // [key][piece * steps + step]
    for (std::size_t k = 0; k < report.keys.size(); ++k) {
        std::uint64_t numel = 0;
        bool byRange = true;
        for (const Node* leaf : leafOf[k])
            if (leaf) {
                numel = std::max(numel, std::uint64_t(leaf->leaf().numel));
                byRange = byRange && leaf->readsAnyRange();
            }
        const std::uint64_t pieces =
            std::max<std::uint64_t>(1, (numel + kPieceElements - 1) / kPieceElements);
        sums[k].resize(pieces * stepCount);
        if (!byRange) {
            tasks.push_back({k, 0, numel});
            continue;
        }
        for (std::uint64_t p = 0; p < pieces; ++p)
            tasks.push_back(
                {k, p * kPieceElements, std::min(kPieceElements, numel - p * kPieceElements)});
    }
    std::uint64_t total = 0;  // elements of every step
    for (std::size_t k = 0; k < report.keys.size(); ++k)
        for (const Node* leaf : leafOf[k])
            total += leaf ? std::uint64_t(leaf->leaf().numel) : 0;
    std::atomic<std::uint64_t> done{0};
    parallelFor(
        tasks.size(), threads, [] { return Buffers(); },
        [&](Buffers& buf, std::size_t t) {
            const Task& task = tasks[t];
            // The task's own readers: one reading front to back holds what it
            // inflated or gathered only while its task runs.
            std::vector<std::unique_ptr<ElementSource>> sources;
            for (const Node* leaf : leafOf[task.key])
                sources.push_back(leaf ? std::make_unique<ElementSource>(*leaf) : nullptr);
            for (std::uint64_t at = task.first, end = task.first + task.count;;) {
                const std::uint64_t piece = at / kPieceElements;
                const std::uint64_t n = std::min(kPieceElements, end - at);
                const Node* before = nullptr;  // the step before, when it has this piece
                int cur = 0;
                for (std::size_t step = 0; step < stepCount; ++step) {
                    const Node* leaf = leafOf[task.key][step];
                    const std::uint64_t numel = leaf ? std::uint64_t(leaf->leaf().numel) : 0;
                    if (!leaf || (at >= numel && !(numel == 0 && at == 0))) {
                        before = nullptr;  // none, or shorter than this piece
                        continue;
                    }
                    const std::size_t m = static_cast<std::size_t>(std::min(n, numel - at));
                    const DType dtype = leaf->leaf().dtype;
                    buf.raw[cur].resize(m * itemSize(dtype));
                    sources[step]->read(at, m, buf.raw[cur].data());
                    buf.values[cur].set(buf.raw[cur].data(), dtype, m);
                    const bool compare = before && std::uint64_t(before->leaf().numel) == numel;
                    Sums* row = &sums[task.key][piece * stepCount];
                    row[step] = sumsOf(buf.values[cur], compare ? &buf.values[1 - cur] : nullptr,
                                       compare ? &row[step - 1] : nullptr);
                    before = leaf;
                    cur = 1 - cur;
                    if (options.progress)
                        options.progress(done += m, total);
                }
                at += n;
                if (at >= end)
                    break;
            }
        },
        options.cancel, locations.empty() ? std::string() : locations.front());

    for (std::size_t k = 0; k < report.keys.size(); ++k) {
        SeriesKey& key = report.keys[k];
        key.steps.resize(stepCount);
        const std::size_t pieces = sums[k].size() / stepCount;
        for (std::size_t step = 0; step < stepCount; ++step) {
            if (!leafOf[k][step])
                continue;
            Sums all = sums[k][step];
            for (std::size_t p = 1; p < pieces; ++p)
                all.merge(sums[k][p * stepCount + step]);
            key.steps[step] = figuresOf(all);
        }
    }
    return report;
}

namespace {

// What a run keeps beside its steps that is no step: text (configs, logs,
// metrics, plots, scripts), TensorBoard's event files, and a model saved
// in shards ("model-00001-of-00003.safetensors" and its index: one model,
// which opens by its folder).
bool isBesideTheSteps(const std::string& name) {
    std::string lower(name);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    const auto endsWith = [&](std::string_view end) {
        return lower.size() > end.size() &&
               lower.compare(lower.size() - end.size(), end.size(), end) == 0;
    };
    static constexpr std::string_view kNotData[] = {
        ".json", ".jsonl", ".log",  ".txt", ".md",    ".yaml", ".yml",  ".toml",
        ".ini",  ".csv",   ".out",  ".err", ".png",   ".jpg",  ".jpeg", ".gif",
        ".svg",  ".pdf",   ".html", ".py",  ".ipynb", ".sh",   ".lock", ".tmp",
    };
    if (std::any_of(std::begin(kNotData), std::end(kNotData), endsWith) ||
        lower.rfind("events.out.tfevents", 0) == 0)
        return true;
    const auto digit = [&](std::size_t at) {
        return at < lower.size() && std::isdigit(static_cast<unsigned char>(lower[at]));
    };
    const std::size_t of = lower.rfind("-of-");
    return of != std::string::npos && of > 0 && digit(of - 1) && digit(of + 4) &&
           (endsWith(".safetensors") || endsWith(".bin"));
}

// Names alike but for their numbers: "checkpoint-#", "step-#.pt".
std::string numbersAsHash(const std::string& name) {
    std::string out;
    for (std::size_t i = 0; i < name.size(); ++i)
        if (!std::isdigit(static_cast<unsigned char>(name[i])))
            out += name[i];
        else if (i == 0 || !std::isdigit(static_cast<unsigned char>(name[i - 1])))
            out += '#';
    return out;
}

}  // namespace

std::vector<std::string> seriesInFolder(const std::string& folder) {
    std::vector<std::string> names;
    for (std::string& n : namesInNaturalOrder(folder))
        if (!isBesideTheSteps(n))
            names.push_back(std::move(n));
    std::map<std::string, std::vector<std::string>> groups;  // each in natural order
    for (const std::string& n : names)
        groups[numbersAsHash(n)].push_back(n);
    const std::vector<std::string>* steps = &names;
    std::size_t largest = 1;
    std::vector<std::string> tied;  // the patterns of the largest groups
    for (const auto& [pattern, members] : groups) {
        if (members.size() > largest)
            largest = members.size(), steps = &members, tied.clear();
        if (members.size() == largest && largest > 1)
            tied.push_back(pattern);
    }
    if (tied.size() > 1) {
        std::string named;
        for (const std::string& pattern : tied)
            named += (named.empty() ? "" : ", ") + pattern;
        throw Error::invalid(folder, "the folder holds " + std::to_string(largest) +
                                         " steps each of " + std::to_string(tied.size()) +
                                         " runs (" + named +
                                         ", # for the step): give the checkpoints of one");
    }
    if (steps->empty())
        throw Error::invalid(folder, "no checkpoint in the folder");
    std::vector<std::string> out;
    for (const std::string& n : *steps)
        out.push_back(folder + (folder.empty() || folder.back() == '/' ? "" : "/") + n);
    return out;
}

}  // namespace tensordict
