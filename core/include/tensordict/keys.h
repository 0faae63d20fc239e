#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tensordict {

// Robust key encoding (core/FORMAT.md 5.1): each key is one path component.
//   ""  -> "%",   "." -> "%2E",   ".." -> "%2E%2E"
//   otherwise / < > : " | ? * \ space % NUL, 0x01-0x1F and DEL become %XX
//   (uppercase hex of the byte); everything else, all non-ASCII included,
//   passes through as UTF-8.
std::string encodeKey(std::string_view key);

// Python's _is_safe_legacy_key: a raw key usable as a file name under the
// legacy (robust_key=False) scheme without escaping its directory.
bool isSafeLegacyKey(std::string_view key, bool isCollection);

// Whether a file name is a leaf's own file ("<encoded key>.memmap",
// FORMAT.md 5), the name a directory or archive keeps a tensor's bytes under.
bool isLeafFileName(std::string_view name);

// Renders a key path for messages: a/b/"key with/slash".
std::string formatKeyPath(const std::vector<std::string>& path);

// Renders a shape (or any index tuple) for messages: [3, 2].
std::string formatShape(const std::vector<std::int64_t>& shape);

}  // namespace tensordict
