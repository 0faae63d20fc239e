#pragma once

#include <QString>
#include <cstdint>
#include <string>
#include <vector>

#include "tensordict/tensordict.h"

// Nodes of a tensordict as people read them, the same in the window and on
// the command line.
namespace nodetext {

// Translated in the "nodetext" context.
QString tr(const char* text);

// A key as shown: control characters escaped (\t, \x01), the empty key as "".
QString displayKey(const std::string& key);
// [3, 4]
QString shapeText(const std::vector<std::int64_t>& shape);
// "float32" (the dtype without "torch.").
QString dtypeText(tensordict::DType dtype);
// "torch.float32", as Python prints it.
QString torchDtypeText(tensordict::DType dtype);
// 512 B, 1.50 KiB, 12.3 MiB
QString byteSizeText(std::uint64_t bytes);
// A Python index of the key path: "a", or ("a", "b").
QString keyPathText(const std::vector<std::string>& path);
// tensor, TensorDict, lazy stack, ...
QString kindText(const tensordict::Node& node);
// Where a leaf's bytes live: file, stored entry, compressed entry (deflate), ...
QString storageText(const tensordict::Node& node);
// Bytes of all tensors under `node`, counted afresh.
std::uint64_t totalBytesOf(const tensordict::Node& node);

}  // namespace nodetext
