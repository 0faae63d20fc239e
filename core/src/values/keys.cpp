#include "tensordict/keys.h"

namespace tensordict {

bool isLeafFileName(std::string_view name) {
    constexpr std::string_view suffix = ".memmap";
    return name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix;
}

std::string encodeKey(std::string_view key) {
    if (key.empty())
        return "%";
    if (key == ".")
        return "%2E";
    if (key == "..")
        return "%2E%2E";
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(key.size());
    for (char ch : key) {
        const auto c = static_cast<unsigned char>(ch);
        const bool unsafe = c < 0x20 || c == 0x7F || c == ' ' || c == '%' || c == '/' ||
                            c == '\\' || c == '<' || c == '>' || c == ':' || c == '"' || c == '|' ||
                            c == '?' || c == '*';
        if (unsafe) {
            out += '%';
            out += kHex[c >> 4];
            out += kHex[c & 0xF];
        } else {
            out += ch;
        }
    }
    return out;
}

bool isSafeLegacyKey(std::string_view key, bool isCollection) {
    if (key.find('/') != std::string_view::npos || key.find('\\') != std::string_view::npos ||
        key.find('\0') != std::string_view::npos) {
        return false;
    }
    const bool drivePrefix = key.size() >= 2 && key[1] == ':' &&
                             ((key[0] >= 'a' && key[0] <= 'z') || (key[0] >= 'A' && key[0] <= 'Z'));
    if (drivePrefix)
        return false;
    if (isCollection && (key.empty() || key == "." || key == ".."))
        return false;
    return true;
}

std::string formatShape(const std::vector<std::int64_t>& shape) {
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i)
        s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

std::string formatKeyPath(const std::vector<std::string>& path) {
    if (path.empty())
        return "<root>";
    std::string out;
    for (std::size_t i = 0; i < path.size(); ++i) {
        if (i)
            out += '/';
        const std::string& k = path[i];
        const bool quote =
            k.empty() || k.find('/') != std::string::npos || k.find('"') != std::string::npos;
        if (quote) {
            out += '"';
            for (char c : k) {
                if (c == '"' || c == '\\')
                    out += '\\';
                out += c;
            }
            out += '"';
        } else {
            out += k;
        }
    }
    return out;
}

}  // namespace tensordict
