#pragma once

#include <QString>
#include <cstdint>
#include <optional>
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
// Any text from a file (a message naming an entry) with its control
// characters escaped the same way: a name never writes to the terminal.
QString displayText(const std::string& text);
// "1 leaf", "1,228 leaves": English without a translation file says it
// right, where Qt's "%n leaf(s)" would show the "(s)".
QString countText(std::int64_t n, const QString& one, const QString& many);
// A name for files exported from `node`: its key with the characters file
// systems refuse replaced by '_', or "tensor" for a root.
QString exportStem(const tensordict::Node* node);
// [3, 4]
QString shapeText(const std::vector<std::int64_t>& shape);
// "float32" (the dtype without "torch.").
QString dtypeText(tensordict::DType dtype);
// "torch.float32", as Python prints it.
QString torchDtypeText(tensordict::DType dtype);
// A leaf's dtype as its file names it ("F8_E4M3" in a safetensors file),
// else as torch does.
QString leafDtypeText(const tensordict::Node& leaf);
// 512 B, 1.50 KiB, 12.3 MiB
QString byteSizeText(std::uint64_t bytes);
// A size as people write it for transformers' max_shard_size: "5GB" (10^9
// bytes each), "500MB", "2GiB" (2^30), "123" bytes; case and spaces aside.
// nullopt when it is not one.
std::optional<std::uint64_t> byteSizeFromText(const QString& text);
// A Python index of the key path: "a", or ("a", "b").
QString keyPathText(const std::vector<std::string>& path);
// tensor, TensorDict, lazy stack, ...
QString kindText(const tensordict::Node& node);
// Where a leaf's bytes live: file, stored entry, compressed entry (deflate), ...
QString storageText(const tensordict::Node& node);
// Bytes of all tensors under `node`, counted afresh.
std::uint64_t totalBytesOf(const tensordict::Node& node);

}  // namespace nodetext
