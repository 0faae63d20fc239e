#pragma once

#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "tensordict/bytes.h"

namespace tensordict {

// Values kept for reuse under a cap, least recently used dropped first.
// Each value costs what its inserter says (memory, or a count of mappings).
// A value is freed once the cache has dropped it and its last user lets
// it go (values are handles: LeafBytes, shared pointers). Thread-safe.
template <typename Value>
class LruCache {
public:
    explicit LruCache(std::uint64_t cap) : cap_(cap) {}

    // The value kept for `key` if `accept(value)`, then the most recently used.
    template <typename Accept>
    std::optional<Value> find(const std::string& key, Accept accept) {
        std::lock_guard<std::mutex> lock(mutex_);
        const auto it = entries_.find(key);
        if (it == entries_.end() || !accept(it->second.value))
            return std::nullopt;
        order_.splice(order_.begin(), order_, it->second.position);
        return it->second.value;
    }

    bool contains(const std::string& key) const {
        std::lock_guard<std::mutex> lock(mutex_);
        return entries_.count(key) != 0;
    }

    // Keeps `value` for `key` (replacing what was kept), then drops the
    // least recently used entries until the cache is within its cap; the
    // newest entry stays even alone over the cap.
    void insert(const std::string& key, Value value, std::uint64_t cost) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (const auto it = entries_.find(key); it != entries_.end())
            erase(it);
        order_.push_front(key);
        entries_[key] = {std::move(value), cost, order_.begin()};
        used_ += cost;
        while (used_ > cap_ && order_.size() > 1)
            erase(entries_.find(order_.back()));
    }

    void erase(const std::string& key) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (const auto it = entries_.find(key); it != entries_.end())
            erase(it);
    }

    std::uint64_t used() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return used_;
    }
    std::uint64_t cap() const { return cap_; }

private:
    struct Entry {
        Value value;
        std::uint64_t cost = 0;
        typename std::list<std::string>::iterator position;
    };
    using Map = std::unordered_map<std::string, Entry>;

    void erase(typename Map::iterator it) {
        used_ -= it->second.cost;
        order_.erase(it->second.position);
        entries_.erase(it);
    }

    const std::uint64_t cap_;
    mutable std::mutex mutex_;
    std::list<std::string> order_;  // most recently used first
    Map entries_;
    std::uint64_t used_ = 0;
};

// Leaf bytes kept under a cap: each costs 1 for a mapping (the kernel
// limits how many a process may hold) or its size for memory.
class LruBytesCache {
public:
    enum class Cost { Count, Bytes };
    LruBytesCache(std::uint64_t cap, Cost cost) : cache_(cap), costKind_(cost) {}

    // The bytes kept for `key` if they hold at least `minSize` bytes.
    std::optional<LeafBytes> find(const std::string& key, std::uint64_t minSize = 0) {
        return cache_.find(key, [minSize](const LeafBytes& b) { return b.size >= minSize; });
    }
    bool contains(const std::string& key) const { return cache_.contains(key); }
    void insert(const std::string& key, const LeafBytes& bytes) {
        cache_.insert(key, bytes, costKind_ == Cost::Count ? 1 : bytes.size);
    }
    void erase(const std::string& key) { cache_.erase(key); }
    std::uint64_t used() const { return cache_.used(); }
    std::uint64_t cap() const { return cache_.cap(); }

private:
    LruCache<LeafBytes> cache_;
    const Cost costKind_;
};

}  // namespace tensordict
