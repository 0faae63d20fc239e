// groupKeysByDots(): a display tree where dotted keys nest by their dots.

#include <map>

#include "tensordict/tensordict.h"
#include "tree/node_builder.h"

namespace tensordict {
namespace {

std::unique_ptr<Node> grouped(const Node& node);

// Adds `items` (children of one collection whose keys all start with
// `prefix`) to `target`: a key with a further dot joins the group of its
// next component, placed where its first key was; the others as they are.
// Keys with more dots nest no deeper: the rest of the key stays in it.
constexpr int kMaxGroupDepth = 32;

void addGrouped(Node& target, const std::vector<const Node*>& items, const std::string& prefix,
                int depth) {
    std::vector<std::pair<std::string, std::vector<const Node*>>> groups;
    std::map<std::string, std::size_t> groupAt;
    std::vector<std::pair<const Node*, std::size_t>> order;  // an item, or a group's index
    for (const Node* item : items) {
        const std::string_view rest = std::string_view(item->key()).substr(prefix.size());
        const std::size_t dot = rest.find('.');
        if (dot == std::string_view::npos || dot == 0 || dot + 1 == rest.size() ||
            depth >= kMaxGroupDepth) {
            order.emplace_back(item, 0);
            continue;
        }
        const std::string group = prefix + std::string(rest.substr(0, dot + 1));
        auto [it, isNew] = groupAt.emplace(group, groups.size());
        if (isNew) {
            groups.emplace_back(group, std::vector<const Node*>{});
            order.emplace_back(nullptr, it->second);
        }
        groups[it->second].second.push_back(item);
    }
    for (const auto& [item, index] : order) {
        if (item) {
            NodeBuilder(target).append(grouped(*item));
            continue;
        }
        const auto& [group, members] = groups[index];
        auto node = NodeBuilder::create(NodeKind::Container, group);
        NodeBuilder b(*node);
        b.setClass("key group", {});
        b.collection().keyGroup = group;
        b.setStore(target.store());
        addGrouped(*node, members, group, depth + 1);
        NodeBuilder(target).append(std::move(node));
    }
}

std::unique_ptr<Node> grouped(const Node& node) {
    auto copy = NodeBuilder::shallowCopy(node);
    std::vector<const Node*> children(node.children().begin(), node.children().end());
    addGrouped(*copy, children, {}, 0);
    return copy;
}

}  // namespace

TensorDict groupKeysByDots(const TensorDict& td) {
    return TensorDict::adopt(grouped(td.root()), td.path(), td.format(), td.store());
}

}  // namespace tensordict
