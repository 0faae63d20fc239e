#pragma once

// Comparing two tensordicts key by key.
//
// Keys only one side has are listed; for every key in both, what differs:
// class, batch size, device, dtype, shape, values and non-tensor values.
// Where the data lives is not compared: a directory, its stored archive and
// its deflated archive are equal.
//
// Values compare as torch.testing.assert_close does: elements a and b are
// close when a == b or |a - b| <= atol + rtol * |b|; NaN equals NaN only
// with equalNan. Leaves of different dtypes compare after promotion (the
// dtype is still reported). Leaf bytes are compared straight from their
// mappings, in parallel chunks, at memory speed where they are identical;
// compressed entries are streamed.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tensordict/cancel.h"
#include "tensordict/dtype.h"
#include "tensordict/tensordict.h"

namespace tensordict {

// What can differ between the two nodes at one key (flags).
enum class Difference : unsigned {
    Class = 1u << 0,      // node kind or class name (tensor vs TensorDict, tensorclass type)
    BatchSize = 1u << 1,  // batch size (and a lazy stack's stack dim)
    Device = 1u << 2,     // a collection's device, or the device a tensor was saved from
    DType = 1u << 3,
    Shape = 1u << 4,  // tensor shape (and a nested tensor's component shapes)
    Values = 1u << 5,
    NonTensor = 1u << 6,  // a non-tensor value or stack, a tensorclass's non-tensor fields,
                          // a view's parameters
};
constexpr unsigned operator|(Difference a, Difference b) {
    return static_cast<unsigned>(a) | static_cast<unsigned>(b);
}
constexpr unsigned operator|(unsigned a, Difference b) {
    return a | static_cast<unsigned>(b);
}
constexpr bool hasDifference(unsigned flags, Difference d) {
    return (flags & static_cast<unsigned>(d)) != 0;
}
// "class", "batch_size", "device", "dtype", "shape", "values", "non_tensor"
std::string_view differenceName(Difference d);
// Every flag of `flags`, in the order above.
std::vector<Difference> differencesOf(unsigned flags);

struct Tolerance {
    double rtol = 0;
    double atol = 0;
    bool equalNan = false;
};

// Whether two elements are equal within `tolerance` (any dtypes: promoted).
bool elementsClose(const std::byte* a, DType aType, const std::byte* b, DType bType,
                   const Tolerance& tolerance);

// How the values of two leaves of the same shape differ.
struct ValueDifference {
    std::uint64_t differing = 0;  // elements not close
    // Over the differing elements, as assert_close reports them: the largest
    // |a - b| and |a - b| / |b| (infinite where b is 0). An element with a
    // NaN counts as differing (nanDiffering) but not in these maxima.
    double maxAbsDiff = 0;
    double maxRelDiff = 0;
    std::int64_t firstIndex = -1;    // flat C-order index of the first differing element
    std::uint64_t nanDiffering = 0;  // of `differing`, those with a NaN on one side or both
};

enum class KeyStatus {
    Same,     // in both, nothing differs (values: once KeyComparison::pending is false)
    Changed,  // in both, something differs
    OnlyInA,
    OnlyInB,
    Error,  // in both, but a side could not be read
};
std::string_view keyStatusName(KeyStatus status);  // "same", "changed", "only_in_a", ...

// The comparison of one key. Every node of the union of both trees under
// the compared roots gets one, in tree order (A's order, then B's extra keys),
// except the descendants of a key only one side has.
struct KeyComparison {
    std::vector<std::string> key;  // path from the compared roots ([] for the roots)
    KeyStatus status = KeyStatus::Same;
    unsigned differences = 0;  // Difference flags
    const Node* a = nullptr;   // nullptr when only in B
    const Node* b = nullptr;   // nullptr when only in A
    // Tensor leaves of the same shape whose values were compared.
    std::optional<ValueDifference> values;
    // values->firstIndex over the leaf's shape (a nested leaf: the flat index)
    std::vector<std::int64_t> firstIndex;
    std::string error;  // why a side could not be read (status Error), in words
    ErrorKind errorKind = ErrorKind::Corrupt;  // and what kind of failure that is
    // Values still to be compared: reported again through onKey when they
    // are; still true after a cancelled comparison.
    bool pending = false;
};

struct CompareProgress {
    std::uint64_t bytesDone = 0;   // leaf bytes compared so far (both sides)
    std::uint64_t bytesTotal = 0;  // leaf bytes to compare (both sides)
    std::size_t keysDone = 0;
    std::size_t keysTotal = 0;
};

struct CompareOptions {
    Tolerance tolerance;
    // Compare only these subtrees (key paths present in A or B); empty: all.
    std::vector<std::vector<std::string>> keys;
    int numThreads = 0;  // 0: one per core
    // Each key's comparison as soon as it is known, keys whose values need
    // no reading first. Called from the comparing threads, one at a time
    // (but possibly while `progress` runs on another). An exception from
    // either callback cancels the comparison and leaves compare().
    std::function<void(const KeyComparison&)> onKey;
    // Called as bytes are compared, one call at a time, from the comparing threads.
    std::function<void(const CompareProgress&)> progress;
    // Cancelled (from any thread): compare() returns what it has, with
    // CompareResult::cancelled set.
    CancelToken cancel;
};

struct CompareResult {
    std::vector<KeyComparison> keys;  // tree order, see KeyComparison
    bool cancelled = false;

    bool equal() const;  // no key differs, none is on one side only, no errors
    std::vector<const KeyComparison*> onlyInA() const;
    std::vector<const KeyComparison*> onlyInB() const;
    std::vector<const KeyComparison*> changed() const;
    std::vector<const KeyComparison*> errors() const;
};

// Compares `a` with `b` (their roots, or the subtrees at options.keys).
// Throws Error if a key of options.keys is in neither. Read failures of a
// leaf (a file that changed, a corrupt entry) do not throw: the key gets
// status Error and the message.
CompareResult compare(const TensorDict& a, const TensorDict& b, const CompareOptions& options = {});
CompareResult compare(const Node& a, const Node& b, const CompareOptions& options = {});

// The values of two tensor leaves with the same number of elements, from
// flat index `from` on: the differing elements' count and maxima, and the
// first of them. Stops early after the first difference when `firstOnly`
// (to step to the next difference). Throws Error naming the file on a read
// failure.
ValueDifference compareValues(const Node& a, const Node& b, const Tolerance& tolerance,
                              std::int64_t from = 0, bool firstOnly = false);

// The children of two nodes matched by key: A's in their order (with B's
// child of the same key, or nullptr), then B's keys that A lacks (with
// nullptr). Either node may be nullptr. The union of keys that compare()
// walks, for views that show it.
struct ChildPair {
    const Node* a = nullptr;
    const Node* b = nullptr;
    const std::string& key() const { return a ? a->key() : b->key(); }
};
std::vector<ChildPair> matchChildren(const Node* a, const Node* b);

// Flat C-order index -> per-dimension index.
std::vector<std::int64_t> unflattenIndex(std::int64_t flat, const std::vector<std::int64_t>& shape);

}  // namespace tensordict
