#include "compare_tree.h"

#include <algorithm>

using tensordict::KeyComparison;
using tensordict::KeyStatus;
using tensordict::Node;
using tensordict::NodeKind;

namespace {

CompareTree::Status statusOf(KeyStatus status) {
    switch (status) {
        case KeyStatus::Same:
            return CompareTree::Status::Same;
        case KeyStatus::Changed:
            return CompareTree::Status::Changed;
        case KeyStatus::OnlyInA:
            return CompareTree::Status::OnlyInA;
        case KeyStatus::OnlyInB:
            return CompareTree::Status::OnlyInB;
        case KeyStatus::Error:
            return CompareTree::Status::Error;
    }
    return CompareTree::Status::Pending;
}

}  // namespace

std::vector<std::string> CompareTree::Item::keyPath() const {
    std::vector<std::string> path;
    for (const Item* i = this; i->parent; i = i->parent)
        path.push_back(i->key);
    std::reverse(path.begin(), path.end());
    return path;
}

bool CompareTree::Item::differs() const {
    return status == Status::Changed || status == Status::OnlyInA || status == Status::OnlyInB ||
           status == Status::Error;
}

bool CompareTree::Item::comparableLeaves() const {
    return a && b && a->isTensor() && b->isTensor() && !a->leaf().isNested && !b->leaf().isNested &&
           a->leaf().shape == b->leaf().shape && a->leaf().numel > 0;
}

CompareTree::CompareTree(const Node& a, const Node& b) {
    root_.a = &a;
    root_.b = &b;
    build(root_);
}

void CompareTree::build(Item& item) {
    if (item.a)
        byNode_.emplace(item.a, &item);
    if (item.b)
        byNode_.emplace(item.b, &item);
    if (!item.a || !item.b)
        item.status = item.a ? Status::OnlyInA : Status::OnlyInB;
    const std::vector<tensordict::ChildPair> pairs = tensordict::matchChildren(item.a, item.b);
    item.children.reserve(pairs.size());
    for (const tensordict::ChildPair& pair : pairs) {
        auto child = std::make_unique<Item>();
        child->key = pair.key();
        child->a = pair.a;
        child->b = pair.b;
        child->parent = &item;
        child->row = static_cast<int>(item.children.size());
        item.children.push_back(std::move(child));
    }
    for (auto& c : item.children)
        build(*c);
}

CompareTree::Item* CompareTree::find(const Node* node) const {
    const auto it = byNode_.find(node);
    return it == byNode_.end() ? nullptr : it->second;
}

const CompareTree::Item* CompareTree::find(const std::vector<std::string>& path) const {
    const Item* item = &root_;
    for (const std::string& key : path) {
        const auto it = std::find_if(item->children.begin(), item->children.end(),
                                     [&key](const auto& c) { return c->key == key; });
        if (it == item->children.end())
            return nullptr;
        item = it->get();
    }
    return item;
}

void CompareTree::count(const Item& item, int sign) {
    if (!item.reported)
        return;
    auto bump = [sign](std::size_t& n) { n = static_cast<std::size_t>(std::int64_t(n) + sign); };
    switch (item.status) {
        case Status::Same:
            bump(counts_.same);
            break;
        case Status::Changed:
            bump(counts_.changed);
            break;
        case Status::OnlyInA:
            bump(counts_.onlyInA);
            break;
        case Status::OnlyInB:
            bump(counts_.onlyInB);
            break;
        case Status::Error:
            bump(counts_.errors);
            break;
        case Status::Pending:
        case Status::NotCompared:
            break;
    }
}

CompareTree::Item* CompareTree::apply(const KeyComparison& k, std::vector<Item*>* touched) {
    Item* item = find(k.a ? k.a : k.b);
    if (!item)
        return nullptr;
    const bool differed = item->reported && item->differs();
    count(*item, -1);
    item->reported = true;
    item->status = k.pending && k.status == KeyStatus::Same ? Status::Pending : statusOf(k.status);
    item->differences = k.differences;
    item->values = k.values;
    item->firstIndex = k.firstIndex;
    item->error = k.error;
    count(*item, +1);
    if (touched)
        touched->push_back(item);
    const bool differs = item->differs();
    if (differs != differed)
        for (Item* p = item->parent; p; p = p->parent) {
            p->differingBelow += differs ? 1 : -1;
            if (touched)
                touched->push_back(p);
        }
    return item;
}

void CompareTree::markNotCompared(std::vector<Item*>* touched) {
    std::vector<Item*> stack{&root_};
    while (!stack.empty()) {
        Item* item = stack.back();
        stack.pop_back();
        if (item->status == Status::Pending) {
            item->status = Status::NotCompared;
            ++counts_.notCompared;
            if (touched)
                touched->push_back(item);
        }
        for (auto& c : item->children)
            stack.push_back(c.get());
    }
}
