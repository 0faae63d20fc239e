#pragma once

// The tree of a decoded torch pickle (python_objects.h): dicts and
// OrderedDicts, lists and tuples become containers (items keyed "0", "1",
// ...), tensors leaves over their storage, tensordict's TensorDicts
// TensorDicts with their batch size, scalars and strings non-tensor values,
// and objects that are never rebuilt Object nodes that name their class and
// hold what was found inside them.

#include <functional>
#include <memory>
#include <string>

#include "tensordict/node.h"
#include "values/python_objects.h"

namespace tensordict {

class Store;

// Where a storage's bytes are (its entry or its place in the file); throws
// Error when the format has no such storage.
using StorageLocator = std::function<StorageInfo(const python::Object& storage)>;

// The tree of `pickle`'s root. Storages that no part of the tree uses,
// among those the pickle loads and `storedKeys` (the keys of those the file
// holds), are named by one ErrorKind::Unplaced node under the root: kept
// by torch where nothing here looks, left over, or swallowed by damage.
std::unique_ptr<Node> buildPythonTree(const python::Pickle& pickle,
                                      const std::shared_ptr<const Store>& store,
                                      const StorageLocator& locate,
                                      const std::vector<std::string>& storedKeys = {});

}  // namespace tensordict
