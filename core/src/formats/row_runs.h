#pragma once

// Leaves whose rows are runs of rows of other leaves, one after another: a
// replay buffer's valid rows oldest first (its storage's rows from the
// cursor on, then those before it), a stack of dataset chunks (each chunk's
// rows in turn). Each run is read from its own leaf's file where it is;
// nothing is copied until a view reads it.

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "formats/file_stores.h"
#include "tensordict/tensordict.h"

namespace tensordict {

// Rows [first, first + count) along the first dimension of a tensor leaf.
struct RowRun {
    const Node* leaf = nullptr;  // kept alive by the store (RowRunStore::keep)
    std::int64_t first = 0, count = 0;
};

// A folder's store whose leaves are gathered from runs of rows: the
// container of its own leaves. A format adds buildTree(), which keeps the trees it reads rows from
// and makes its leaves with rowLeaf().
class RowRunStore : public FolderContainer, public Store {
public:
    RowRunStore(std::shared_ptr<const Transport> transport, std::string folder)
        : FolderContainer(std::move(transport), std::move(folder)),
          Store(static_cast<const Container&>(*this)) {}

    // A gathered leaf is named by its key in the folder: "/buffer:obs/pixels".
    std::string describe(const std::string& rel) const override;
    std::optional<StorageInfo> stat(const std::string& rel) const override;
    LeafBytes leafBytes(const StorageInfo& info, std::uint64_t nbytes,
                        std::size_t alignment) const override;
    bool readsInPlace(const StorageInfo& info) const override;
    LeafBytes leafBytesRange(const StorageInfo& info, std::uint64_t offset, std::uint64_t length,
                             std::size_t alignment) const override;
    void readLeafRange(const StorageInfo& info, std::uint64_t offset, std::byte* out,
                       std::size_t n) const override;
    bool copyLeafRangeTo(const StorageInfo& info, std::uint64_t offset, std::size_t n, int fd,
                         std::uint64_t at) const override;
    // One part per run: {file, offset, length, offsets, sizes}, offsets and
    // sizes in elements of the gathered leaf (rows, then 0 and the row's shape).
    Value::List leafParts(const StorageInfo& info) const override;

protected:
    // Rows [first, first + count) of the tree `tree` (count < 0: all its rows).
    struct RowRange {
        std::size_t tree = 0;
        std::int64_t first = 0, count = -1;
    };
    // The tree of the first of `trees` (named `names` in messages), each
    // tensor gathered from `ranges` of the same key in the trees it names.
    // Collections keep their class and trailing batch dimensions, their
    // first the rows gathered; non-tensors are the first tree's. A key
    // missing from a tree, or whose tensors cannot be gathered, is an error
    // node that says why. The trees are kept (keep()).
    std::unique_ptr<Node> gatherTree(const std::shared_ptr<const Store>& self,
                                     const std::vector<TensorDict>& trees,
                                     const std::vector<std::string>& names,
                                     const std::vector<RowRange>& ranges) const;
    // Keeps a tree that runs read rows of alive as long as the store.
    void keep(TensorDict tree) const;
    // A tensor leaf `key`, stored as `rel`, whose rows are `runs` (leaves of
    // one dtype and one shape past the first dimension), read through `self`.
    // Throws Error naming `rel` when the runs do not agree, or when `rel`
    // is taken.
    std::unique_ptr<Node> rowLeaf(const std::shared_ptr<const Store>& self, const std::string& key,
                                  const std::string& rel, std::vector<RowRun> runs) const;

private:
    struct Gathered {
        std::vector<RowRun> runs;
        std::uint64_t rowBytes = 0;
        std::uint64_t size = 0;
    };
    std::shared_ptr<const Gathered> gatheredOf(const StorageInfo& info) const;
    // Bytes [offset, offset + n) of the gathered leaf, run by run, into `out`.
    void gather(const Gathered& g, std::uint64_t offset, std::byte* out, std::size_t n) const;

    mutable std::mutex mutex_;
    mutable std::vector<TensorDict> kept_;
    // Filled by rowLeaf() while the tree is built, read-only after.
    mutable std::map<std::string, std::shared_ptr<const Gathered>> gathered_;
};

}  // namespace tensordict
