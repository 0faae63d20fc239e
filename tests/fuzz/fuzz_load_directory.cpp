// libFuzzer target: tensordict::load of a memmap directory, then every leaf
// read and every non-tensor value written as JSON, then checked as --check
// does and its repair planned (load_support.h).
//
// The input is a directory tree in a simple serialized form, unpacked for
// each input into a fresh directory "root" inside one temporary directory per
// process (under $TMPDIR, else /tmp; removed at exit). tests/fuzz/
// pack_directory.py writes it from a real directory, for seeds.
//
// Format: records, one after the other until the input ends; integers are
// little-endian:
//
//   u8   kind      0 regular file, 1 directory, 2 symbolic link;
//                  any other value ends the input
//   u16  pathLen
//   path           pathLen bytes: relative to the root, components joined by '/'
//   u32  dataLen
//   data           dataLen bytes: the file's contents, or the link's target;
//                  nothing for a directory (dataLen is normally 0)
//
// A length running past the end of the input is cut to what is left, so
// that every input means something. Parent directories are made as needed.
//
// The unpacker never writes outside its temporary directory: a record is
// skipped when its path is absolute, empty or too long, has an empty, "." or
// ".." component or a NUL byte, or goes through anything but a real
// directory (a link, a file); files are opened with O_NOFOLLOW, so an
// existing link is never written through. Link targets must be relative
// without ".." components (and without NUL): every link then resolves inside
// the tree, and loading reads nothing outside it. At most kMaxRecords
// records and kMaxTotalBytes bytes of file data are unpacked.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "load_support.h"

namespace {

constexpr std::size_t kMaxRecords = 1024;
constexpr std::size_t kMaxTotalBytes = 16u << 20;
constexpr std::size_t kMaxPathBytes = 1024;
constexpr std::size_t kMaxComponents = 64;

enum Kind : std::uint8_t { kFile = 0, kDirectory = 1, kSymlink = 2 };

class Reader {
public:
    Reader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
    bool atEnd() const { return pos_ >= size_; }
    std::uint64_t number(std::size_t bytes) {
        std::uint64_t v = 0;
        for (std::size_t i = 0; i < bytes && pos_ < size_; ++i)
            v |= std::uint64_t{data_[pos_++]} << (8 * i);
        return v;
    }
    std::string_view bytes(std::uint64_t n) {
        const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(n, size_ - pos_));
        const std::string_view out(reinterpret_cast<const char*>(data_) + pos_, take);
        pos_ += take;
        return out;
    }

private:
    const std::uint8_t* data_;
    std::size_t size_;
    std::size_t pos_ = 0;
};

// Splits a safe relative path into `parts`; false for anything else.
bool splitRelative(std::string_view path, bool allowDot, std::vector<std::string>& parts) {
    parts.clear();
    if (path.empty() || path.size() > kMaxPathBytes || path.front() == '/' ||
        path.find('\0') != std::string_view::npos)
        return false;
    std::size_t start = 0;
    while (start <= path.size()) {
        const std::size_t end = std::min(path.find('/', start), path.size());
        const std::string_view part = path.substr(start, end - start);
        if (part.empty() || part == ".." || (part == "." && !allowDot))
            return false;
        parts.emplace_back(part);
        start = end + 1;
    }
    return parts.size() <= kMaxComponents;
}

// Makes the directories leading to the last of `parts` under `root` (real
// directories only: a link or a file on the way refuses the record).
bool makeParents(const std::string& root, const std::vector<std::string>& parts,
                 std::string& path) {
    path = root;
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
        path += "/" + parts[i];
        struct stat st {};
        if (::lstat(path.c_str(), &st) == 0) {
            if (!S_ISDIR(st.st_mode))
                return false;
        } else if (errno != ENOENT || ::mkdir(path.c_str(), 0755) != 0) {
            return false;
        }
    }
    path += "/" + parts.back();
    return true;
}

bool writeFile(const std::string& path, std::string_view data) {
    const int fd =
        ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return false;
    std::size_t done = 0;
    while (done < data.size()) {
        const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        done += static_cast<std::size_t>(n);
    }
    ::close(fd);
    return done == data.size();
}

void unpack(const std::uint8_t* data, std::size_t size, const std::string& root) {
    Reader in(data, size);
    std::size_t total = 0;
    std::vector<std::string> parts, targetParts;
    std::string path;
    for (std::size_t records = 0; records < kMaxRecords && !in.atEnd(); ++records) {
        const auto kind = static_cast<std::uint8_t>(in.number(1));
        if (kind > kSymlink)
            return;
        const std::string_view name = in.bytes(in.number(2));
        const std::string_view payload = in.bytes(in.number(4));
        if (!splitRelative(name, false, parts) || !makeParents(root, parts, path))
            continue;
        // A record the file system refuses (the path exists, a name is too
        // long, ...) is skipped.
        bool made = false;
        switch (kind) {
            case kFile:
                if (total + payload.size() > kMaxTotalBytes)
                    return;
                total += payload.size();
                made = writeFile(path, payload);
                break;
            case kDirectory:
                made = ::mkdir(path.c_str(), 0755) == 0;
                break;
            case kSymlink:
                made = splitRelative(payload, true, targetParts) &&
                       ::symlink(std::string(payload).c_str(), path.c_str()) == 0;
                break;
        }
        (void)made;
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string root = fuzz::workDirectory("fuzz_load_directory") + "/root";
    if (::mkdir(root.c_str(), 0755) != 0) {
        std::fprintf(stderr, "mkdir %s: %s\n", root.c_str(), std::strerror(errno));
        std::abort();
    }
    unpack(data, size, root);
    fuzz::loadAndRead(root);
    fuzz::checkAndPlanRepair(root);
    std::error_code ec;
    std::filesystem::remove_all(root, ec);  // never follows links
    if (ec) {
        std::fprintf(stderr, "cannot remove %s: %s\n", root.c_str(), ec.message().c_str());
        std::abort();
    }
    return 0;
}
