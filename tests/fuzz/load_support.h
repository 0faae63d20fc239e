#pragma once

// Shared by fuzz_load_archive and fuzz_load_directory: load a tensordict as
// tdstudio opens one (errors become error nodes) and read everything in it,
// as describe(td, {sha256, firstValues}) would, leaf by leaf so that one
// bad leaf does not hide the others, skipping leaves over kMaxLeafBytes to
// keep runs fast; then check it as --check does, and plan its repair.

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "tensordict/check.h"
#include "tensordict/error.h"
#include "tensordict/report.h"
#include "tensordict/tensordict.h"
#include "tensordict/value.h"

namespace fuzz {

constexpr std::uint64_t kMaxLeafBytes = 16u << 20;
constexpr std::uint64_t kMaxMetadataBytes = 1u << 20;

inline void readNode(const tensordict::Node& node) {
    using tensordict::NodeKind;
    switch (node.kind()) {
        case NodeKind::Tensor:
            try {
                (void)node.payloadOffset();
            } catch (const tensordict::Error&) {
            }
            if (node.leaf().nbytes <= kMaxLeafBytes) {
                try {
                    (void)tensordict::leafSha256(node);
                    (void)tensordict::firstValues(node, 4);
                } catch (const tensordict::Error&) {
                }
            }
            break;
        case NodeKind::NonTensorData:
        case NodeKind::NonTensorStack:
            (void)tensordict::toJson(node.value());
            break;
        default:
            break;
    }
    // The loader bounds the depth of the tree.
    for (const auto& child : node.children())
        readNode(*child);
}

inline void loadAndRead(const std::string& path) {
    tensordict::LoadOptions options;
    options.throwOnError = false;
    options.maxMetadataBytes = kMaxMetadataBytes;
    try {
        const tensordict::TensorDict td = tensordict::load(path, options);
        (void)td.errors();
        readNode(td.root());
        // Everything else describe() reports (it reads no leaf data without options).
        (void)tensordict::toJson(tensordict::describe(td));
    } catch (const tensordict::Error&) {
    }
}

// tdstudio --check of the input, and --repair --dry-run (which reads the
// archive again to plan its CRC re-stamps). Only Error may come out.
inline void checkAndPlanRepair(const std::string& path) {
    tensordict::CheckOptions options;
    options.threads = 1;
    try {
        const tensordict::CheckReport report = tensordict::check(path, options);
        (void)report.errorCount();
        tensordict::RepairOptions dry;
        dry.dryRun = true;
        (void)tensordict::repair(report, dry);
    } catch (const tensordict::Error&) {
    }
}

// One temporary directory per process (under $TMPDIR, else /tmp), named
// after the target, removed at exit. Plain storage: a std::string would be
// destroyed before the exit handler runs.
inline char workDirectoryPath[4096];

inline void removeWorkDirectory() {
    std::error_code ec;
    std::filesystem::remove_all(workDirectoryPath, ec);
}

inline std::string workDirectory(const char* target) {
    if (!workDirectoryPath[0]) {
        const char* tmp = std::getenv("TMPDIR");
        std::snprintf(workDirectoryPath, sizeof workDirectoryPath, "%s/%s.XXXXXX",
                      tmp && *tmp ? tmp : "/tmp", target);
        if (!::mkdtemp(workDirectoryPath)) {
            std::fprintf(stderr, "mkdtemp %s: %s\n", workDirectoryPath, std::strerror(errno));
            std::abort();
        }
        std::atexit(removeWorkDirectory);
    }
    return workDirectoryPath;
}

// Writes `size` bytes to `path` (replacing it); aborts on failure.
inline void writeWhole(const std::string& path, const void* data, std::size_t size) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f || std::fwrite(data, 1, size, f) != size || std::fclose(f) != 0) {
        std::fprintf(stderr, "cannot write %s\n", path.c_str());
        std::abort();
    }
}

// The input as a file: one memfd per process, rewritten for each input and
// opened as /proc/self/fd/N, so that nothing is written to disk.
inline std::string asFile(const char* name, const std::uint8_t* data, std::size_t size) {
    static const int fd = [name] {
        const int fd = ::memfd_create(name, MFD_CLOEXEC);
        if (fd < 0) {
            std::fprintf(stderr, "memfd_create: %s\n", std::strerror(errno));
            std::abort();
        }
        return fd;
    }();
    if (::ftruncate(fd, 0) != 0 || ::ftruncate(fd, static_cast<off_t>(size)) != 0) {
        std::fprintf(stderr, "ftruncate: %s\n", std::strerror(errno));
        std::abort();
    }
    std::size_t done = 0;
    while (done < size) {
        const ssize_t n = ::pwrite(fd, data + done, size - done, static_cast<off_t>(done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            std::fprintf(stderr, "pwrite: %s\n", std::strerror(errno));
            std::abort();
        }
        done += static_cast<std::size_t>(n);
    }
    return "/proc/self/fd/" + std::to_string(fd);
}

}  // namespace fuzz
