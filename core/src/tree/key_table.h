#pragma once

// Items found by key in constant time where their owner keeps them in order
// (a node's children, a shard's leaves): an open-addressing table of their
// positions, at most half full. Each slot carries a tag of its key's hash,
// so that a probe reads no item but the one it finds.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace tensordict {

class KeyTable {
public:
    static constexpr std::size_t npos = ~std::size_t(0);

    // `keyAt(i)` gives item i's key, or nullptr for an item taken away
    // since it was added, which is never found again.
    template <class KeyAt>
    std::size_t find(std::string_view key, const KeyAt& keyAt) const {
        if (slots_.empty())
            return npos;
        const std::size_t hash = hashOf(key);
        const std::size_t mask = slots_.size() - 1;
        for (std::size_t i = hash & mask; slots_[i] != 0; i = (i + 1) & mask)
            if (tagOf(slots_[i]) == tagOfHash(hash)) {
                const std::size_t at = positionOf(slots_[i]);
                const std::string* k = keyAt(at);
                if (k && *k == key)
                    return at;
            }
        return npos;
    }

    // Item `at`, the last of `at + 1`, was just added; a repeated key keeps
    // the first.
    template <class KeyAt>
    void added(std::size_t at, const KeyAt& keyAt) {
        if (2 * (used_ + 1) > slots_.size())
            rebuild(at + 1, std::max<std::size_t>(16, 2 * slots_.size()), keyAt);
        else
            insert(at, keyAt);
    }

    // Room for `count` items in all without growing again; `size` are indexed now.
    template <class KeyAt>
    void reserve(std::size_t size, std::size_t count, const KeyAt& keyAt) {
        if (2 * count > slots_.size())
            rebuild(size, 2 * count, keyAt);
    }

    void clear() { slots_.clear(), used_ = 0; }

private:
    // A slot: the item's position + 1 in the low half (0 is empty), the
    // high half of its key's hash in the high half.
    static std::size_t hashOf(std::string_view key) { return std::hash<std::string_view>()(key); }
    static std::uint32_t tagOfHash(std::size_t hash) {
        return static_cast<std::uint32_t>(std::uint64_t(hash) >> 32);
    }
    static std::uint32_t tagOf(std::uint64_t slot) {
        return static_cast<std::uint32_t>(slot >> 32);
    }
    static std::size_t positionOf(std::uint64_t slot) {
        return static_cast<std::size_t>(static_cast<std::uint32_t>(slot) - 1);
    }

    template <class KeyAt>
    void insert(std::size_t at, const KeyAt& keyAt) {
        const std::string* key = keyAt(at);
        if (!key)
            return;
        const std::size_t hash = hashOf(*key);
        const std::size_t mask = slots_.size() - 1;
        std::size_t i = hash & mask;
        for (; slots_[i] != 0; i = (i + 1) & mask)
            if (tagOf(slots_[i]) == tagOfHash(hash)) {
                const std::string* k = keyAt(positionOf(slots_[i]));
                if (k && *k == *key)
                    return;
            }
        slots_[i] = std::uint64_t(tagOfHash(hash)) << 32 | std::uint64_t(at + 1);
        ++used_;
    }

    // A table of a power of two slots, at least `capacity`, over the first
    // `size` items.
    template <class KeyAt>
    void rebuild(std::size_t size, std::size_t capacity, const KeyAt& keyAt) {
        std::size_t slots = 16;
        while (slots < std::max(capacity, 2 * size))
            slots *= 2;
        slots_.assign(slots, 0);
        used_ = 0;
        for (std::size_t at = 0; at < size; ++at)
            insert(at, keyAt);
    }

    std::vector<std::uint64_t> slots_;
    std::size_t used_ = 0;
};

}  // namespace tensordict
