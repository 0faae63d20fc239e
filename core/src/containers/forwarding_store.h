#pragma once

#include <memory>
#include <string>

#include "tensordict/store.h"

namespace tensordict {

// A store over another that forwards every read of files and entries to it:
// the base of stores that add to one by overriding only what they change
// (a format read from a zip's entries; the integrity check's record of what
// the loader looked at). The tree and the reading note stay the Store's own.
class ForwardingStore : public Store {
public:
    explicit ForwardingStore(std::shared_ptr<const Store> inner) : inner_(std::move(inner)) {}

    std::string_view format() const override { return inner_->format(); }
    OwnContainer ownContainer() const override { return inner_->ownContainer(); }
    WholeCheck wholeCheck() const override { return inner_->wholeCheck(); }
    const std::string& location() const override { return inner_->location(); }
    std::string describe(const std::string& rel) const override { return inner_->describe(rel); }
    std::optional<StorageInfo> stat(const std::string& rel) const override {
        return inner_->stat(rel);
    }
    bool hasDirectory(const std::string& rel) const override { return inner_->hasDirectory(rel); }
    std::string read(const std::string& rel, std::uint64_t cap) const override {
        return inner_->read(rel, cap);
    }
    LeafBytes leafBytes(const StorageInfo& info, std::uint64_t nbytes,
                        std::size_t alignment) const override {
        return inner_->leafBytes(info, nbytes, alignment);
    }
    bool readsInPlace(const StorageInfo& info) const override { return inner_->readsInPlace(info); }
    void readLeafRange(const StorageInfo& info, std::uint64_t offset, std::byte* out,
                       std::size_t n) const override {
        inner_->readLeafRange(info, offset, out, n);
    }
    LeafBytes leafBytesRange(const StorageInfo& info, std::uint64_t offset, std::uint64_t length,
                             std::size_t alignment) const override {
        return inner_->leafBytesRange(info, offset, length, alignment);
    }
    std::optional<std::uint64_t> payloadOffset(const StorageInfo& info) const override {
        return inner_->payloadOffset(info);
    }
    const CompressedRecords* compressedRecords() const override {
        return inner_->compressedRecords();
    }
    bool isResident(const StorageInfo& info) const override { return inner_->isResident(info); }
    std::string integrityProblem(const StorageInfo& info) const override {
        return inner_->integrityProblem(info);
    }

protected:
    const std::shared_ptr<const Store>& inner() const { return inner_; }

private:
    std::shared_ptr<const Store> inner_;
};

}  // namespace tensordict
