// Temporaries beside the dataset (temporaries.h).

#include "check/temporaries.h"

#include "check/checker.h"

#include <dirent.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "writing/atomic_file.h"

namespace tensordict::checking {

namespace fs = std::filesystem;

bool heldOpen(const std::string& location) {
    std::error_code ec;
    const fs::path resolved = fs::weakly_canonical(location, ec);
    const std::string path = ec ? location : resolved.string();
    const auto under = [&path](std::string_view t) {
        return t == path || (t.size() > path.size() && t.compare(0, path.size(), path) == 0 &&
                             t[path.size()] == '/');
    };
    const std::string self = std::to_string(::getpid());
    DIR* proc = ::opendir("/proc");
    if (!proc)
        return true;
    bool held = false;
    while (dirent* p = ::readdir(proc)) {
        if (held)
            break;
        if (!std::isdigit(static_cast<unsigned char>(p->d_name[0])) || self == p->d_name)
            continue;
        const std::string base = std::string("/proc/") + p->d_name;
        DIR* fds = ::opendir((base + "/fd").c_str());
        if (!fds) {
            held = errno != ENOENT;  // not ours to see: it might hold it
            continue;
        }
        while (dirent* f = ::readdir(fds)) {
            char target[4096];
            const std::string link = base + "/fd/" + f->d_name;
            const ssize_t n = ::readlink(link.c_str(), target, sizeof target - 1);
            if (n > 0 && under(std::string_view(target, static_cast<std::size_t>(n)))) {
                held = true;
                break;
            }
        }
        ::closedir(fds);
        if (held)
            break;
        std::ifstream maps(base + "/maps");
        for (std::string line; std::getline(maps, line);) {
            const std::size_t slash = line.find('/');
            if (slash != std::string::npos && under(std::string_view(line).substr(slash))) {
                held = true;
                break;
            }
        }
    }
    ::closedir(proc);
    return held;
}

std::optional<std::chrono::seconds> ageOf(const fs::path& path) {
    std::error_code ec;
    const fs::file_time_type when = fs::last_write_time(path, ec);
    if (ec)
        return std::nullopt;
    const auto now = fs::file_time_type::clock::now();
    return now > when ? std::chrono::duration_cast<std::chrono::seconds>(now - when)
                      : std::chrono::seconds(0);
}

std::string ageText(std::optional<std::chrono::seconds> age) {
    if (!age)
        return "of unknown age";
    const long long s = age->count();
    if (s < 120)
        return std::to_string(s) + " s old";
    if (s < 7200)
        return std::to_string(s / 60) + " min old";
    if (s < 172800)
        return std::to_string(s / 3600) + " h old";
    return std::to_string(s / 86400) + " days old";
}

void Checker::checkTemporaries() {
    fs::path target = fs::absolute(path_).lexically_normal();
    if (!target.has_filename())
        target = target.parent_path();
    const std::string name = target.filename().string();
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(target.parent_path(), ec)) {
        const std::string leaf = entry.path().filename().string();
        std::error_code kindError;
        const bool isOurs = isTemporaryOf(leaf, name);
        // tensordict's staging is a directory of meta.json files; a hidden
        // folder of the same form without one is someone else's.
        const bool isPython = !isOurs && isTensordictStagingOf(leaf, name) &&
                              entry.is_directory(kindError) &&
                              fs::exists(entry.path() / "meta.json", kindError);
        if (!isOurs && !isPython)
            continue;
        const std::string full = entry.path().string();
        const bool inUse = heldOpen(full);
        const std::optional<std::chrono::seconds> age = ageOf(entry.path());
        const bool stale = !inUse && age && *age >= kStaleAfter;
        std::string state;
        if (inUse)
            state = ", still open in a running process: the save may still be going on.";
        else if (!stale)
            state =
                ", too recent to tell from a save that is still going on; check again "
                "later.";
        else
            state = ", that no process holds: the save was interrupted. --repair deletes it.";
        warning("stale_temporary", full,
                std::string("a temporary of ") +
                    (isOurs ? "an atomic tdstudio save" : "a tensordict archive save") + " of " +
                    name + ", " + ageText(age) + state,
                {}, stale);
    }
}

}  // namespace tensordict::checking
