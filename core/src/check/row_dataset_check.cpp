// TorchRL replay buffer dumps and stacks of chunks (datasets.h): each
// tensordict in them checked as one, and their files against each other.

#include "check/checker.h"

#include <set>

#include "formats/file_stores.h"
#include "tensordict/datasets.h"
#include "tree/loader.h"

namespace tensordict::checking {

void Checker::checkRowDataset(const std::shared_ptr<const Store>& store,
                              const std::vector<std::string>& files) {
    report_.format = std::string(store->format());
    tensordictLayout_ = true;  // chunks, each a tensordict
    const std::string root = store->container().location();
    checkDirectoryFiles(root, files);
    readData();
    if (report_.cancelled)
        return;
    // Each tensordict of the folder (the storage, each chunk) as a dataset of its own.
    std::vector<std::string> folders;
    if (const auto facts = stackFacts(*store))
        for (const StackChunk& chunk : facts->chunks)
            folders.push_back(chunk.name);
    const std::optional<TensorDict> td = loadForCheck(store);
    if (!td)
        return;
    if (const auto facts = replayBufferFacts(*store)) {
        folders = {facts->storageFolder};
        for (const auto& d : facts->disagreements) {
            if (d.error)
                error(d.kind, store->container().describe(d.file), d.what);
            else
                warning(d.kind, store->container().describe(d.file), d.what);
        }
    } else if (const auto facts = stackFacts(*store)) {
        folders.clear();
        for (const StackChunk& chunk : facts->chunks)
            folders.push_back(chunk.name);
    }
    const auto transport = transportFor(root, options_.transport);
    for (const std::string& folder : folders) {
        std::vector<std::string> inside;
        for (const std::string& rel : files)
            if (rel.compare(0, folder.size() + 1, folder + "/") == 0 &&
                rel != folder + "/storage_metadata.json")  // the buffer's, read above
                inside.push_back(rel.substr(folder.size() + 1));
        const std::size_t counted = report_.files;
        checkTree(openDirectoryStore(transport, transport->join(root, folder), {}), true, inside);
        report_.files = counted;
    }
    // Keys the chunks do not agree on: the stack's error nodes (a chunk's
    // own unreadable part is said once, by its chunk's check above).
    if (stackFacts(*store)) {
        std::set<std::string> said;
        for (const Problem& p : report_.problems)
            said.insert(p.file);
        const std::function<void(const Node&)> visit = [&](const Node& node) {
            if (node.isError() && node.failure() && !said.count(node.failure()->where))
                cannotRead(*node.failure(), node.failure()->reason + ": the chunks do not stack",
                           node.keyPath());
            for (const Node* child : node.children())
                visit(*child);
        };
        visit(td->root());
    }
}

}  // namespace tensordict::checking
