#include "writing/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

#include "tensordict/error.h"

namespace fs = std::filesystem;

namespace tensordict {
namespace {

constexpr char kOurs[] = ".tdstudio-";
constexpr std::size_t kSuffix = 8;

std::string sysError(const char* what) {
    return std::string(what) + ": " + std::strerror(errno);
}

// "." + name + "." and then `tail`, checked by `ok` character by character.
template <typename Ok>
bool hasForm(const std::string& entry, const std::string& name, const std::string& infix, Ok ok) {
    const std::string head = "." + name + infix;
    if (entry.size() != head.size() + kSuffix || entry.compare(0, head.size(), head) != 0)
        return false;
    for (std::size_t i = head.size(); i < entry.size(); ++i)
        if (!ok(entry[i]))
            return false;
    return true;
}

}  // namespace

std::string temporarySibling(const fs::path& path) {
    std::random_device rd;
    char suffix[16];
    std::snprintf(suffix, sizeof suffix, "%08x", rd());
    return (path.parent_path() / ("." + path.filename().string() + kOurs + suffix)).string();
}

bool isTemporaryOf(const std::string& entry, const std::string& name) {
    return hasForm(entry, name, kOurs,
                   [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool isTensordictStagingOf(const std::string& entry, const std::string& name) {
    return hasForm(entry, name, ".", [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '_';
    });
}

void syncDirectoryOf(const fs::path& path) {
    const std::string dir = path.parent_path().empty() ? "." : path.parent_path().string();
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        throw Error::io(dir, sysError("cannot open to flush"));
    const int rc = ::fsync(fd);
    const std::string why = rc != 0 ? sysError("cannot flush the directory") : std::string();
    ::close(fd);
    if (rc != 0)
        throw Error::io(dir, why + " (the save is in place but may not survive a power loss)");
}

void syncFile(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || ::fsync(fd) != 0) {
        const std::string why = sysError("cannot flush");
        if (fd >= 0)
            ::close(fd);
        throw Error::io(path, why);
    }
    ::close(fd);
}

}  // namespace tensordict
