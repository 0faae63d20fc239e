#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tensordict/compare.h"

// The union of two key trees (A's keys in order, then B's extra ones) with
// each key's comparison as it arrives: the plain data under CompareTreeModel.
// Built from metadata only, so it exists before any value is compared.
class CompareTree {
public:
    enum class Status {
        Pending,  // in both; its comparison has not arrived yet
        Same,
        Changed,
        OnlyInA,
        OnlyInB,
        Error,
        NotCompared,  // the comparison was cancelled before its values were compared
    };

    struct Item {
        std::string key;                      // "" for the root
        const tensordict::Node* a = nullptr;  // nullptr when only in B
        const tensordict::Node* b = nullptr;  // nullptr when only in A
        Item* parent = nullptr;
        int row = 0;
        std::vector<std::unique_ptr<Item>> children;

        Status status = Status::Pending;
        // Its own KeyComparison arrived (keys below a key only one side has
        // get none: their status is derived and they are not counted).
        bool reported = false;
        unsigned differences = 0;  // tensordict::Difference flags
        std::optional<tensordict::ValueDifference> values;
        std::vector<std::int64_t> firstIndex;
        std::string error;
        int differingBelow = 0;  // reported descendants that differ

        std::vector<std::string> keyPath() const;
        // Changed, on one side only, or unreadable: what "differences only" keeps.
        bool differs() const;
        // Both sides are tensor leaves of the same shape: values can be compared.
        bool comparableLeaves() const;
    };

    struct Counts {
        std::size_t same = 0, changed = 0, onlyInA = 0, onlyInB = 0, errors = 0;
        std::size_t notCompared = 0;  // after a cancel
    };

    CompareTree(const tensordict::Node& a, const tensordict::Node& b);
    CompareTree(const CompareTree&) = delete;
    CompareTree& operator=(const CompareTree&) = delete;

    Item& root() { return root_; }
    const Item& root() const { return root_; }
    std::size_t size() const { return byNode_.size(); }
    // The item of a node of either tree, or of a key path from the roots.
    Item* find(const tensordict::Node* node) const;
    const Item* find(const std::vector<std::string>& path) const;

    // Records a key's comparison (again, if it is reported twice). Appends
    // to `touched` the items whose display changed: the key's and those of
    // ancestors whose differingBelow changed. Returns the key's item, or
    // nullptr for a key not in the tree.
    Item* apply(const tensordict::KeyComparison& comparison, std::vector<Item*>* touched);
    // After a cancelled comparison: keys still pending were not compared.
    void markNotCompared(std::vector<Item*>* touched);
    // Over reported keys only: a key dropped with its subtree counts once.
    const Counts& counts() const { return counts_; }

private:
    void build(Item& item);
    void count(const Item& item, int sign);

    Item root_;
    std::unordered_map<const tensordict::Node*, Item*> byNode_;
    Counts counts_;
};
