#pragma once

#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "tensordict/bytes.h"

namespace tensordict {

// Leaf bytes kept for reuse under a cap, least recently used dropped first.
// Each entry costs `cost(bytes)`: 1 for a mapping (the kernel limits how
// many a process may hold), its size for inflated memory. An entry is
// freed once the cache has dropped it and its last user lets it go.
// Thread-safe.
class LruBytesCache {
public:
    enum class Cost { Count, Bytes };
    LruBytesCache(std::uint64_t cap, Cost cost) : cap_(cap), costKind_(cost) {}

    // The bytes kept for `key` if they hold at least `minSize` bytes.
    std::optional<LeafBytes> find(const std::string& key, std::uint64_t minSize = 0) {
        std::lock_guard<std::mutex> lock(mutex_);
        const auto it = entries_.find(key);
        if (it == entries_.end() || it->second.bytes.size < minSize)
            return std::nullopt;
        order_.splice(order_.begin(), order_, it->second.position);
        return it->second.bytes;
    }

    bool contains(const std::string& key) const {
        std::lock_guard<std::mutex> lock(mutex_);
        return entries_.count(key) != 0;
    }

    // Keeps `bytes` for `key` (replacing what was kept), then drops the
    // least recently used entries until the cache is within its cap; the
    // newest entry stays even alone over the cap.
    void insert(const std::string& key, const LeafBytes& bytes) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (const auto it = entries_.find(key); it != entries_.end())
            erase(it);
        order_.push_front(key);
        entries_[key] = {bytes, order_.begin()};
        used_ += costOf(bytes);
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
        LeafBytes bytes;
        std::list<std::string>::iterator position;
    };
    using Map = std::unordered_map<std::string, Entry>;

    std::uint64_t costOf(const LeafBytes& bytes) const {
        return costKind_ == Cost::Count ? 1 : bytes.size;
    }
    void erase(Map::iterator it) {
        used_ -= costOf(it->second.bytes);
        order_.erase(it->second.position);
        entries_.erase(it);
    }

    const std::uint64_t cap_;
    const Cost costKind_;
    mutable std::mutex mutex_;
    std::list<std::string> order_;  // most recently used first
    Map entries_;
    std::uint64_t used_ = 0;
};

}  // namespace tensordict
