// main() for the fuzz targets outside libFuzzer: runs LLVMFuzzerTestOneInput
// once on every file named on the command line and every file of every
// directory named (sorted, not recursive; README.md and other *.md files,
// and hidden files, are skipped). ctest runs it over the corpora and the
// regression inputs: a crash fails the test, naming the last file printed.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

namespace fs = std::filesystem;

bool isInput(const fs::path& path) {
    const std::string name = path.filename().string();
    return !name.empty() && name.front() != '.' && path.extension() != ".md";
}

bool runFile(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        std::fprintf(stderr, "cannot read %s\n", path.c_str());
        return false;
    }
    const std::vector<char> bytes{std::istreambuf_iterator<char>(in),
                                  std::istreambuf_iterator<char>()};
    std::printf("Running %s (%zu bytes)\n", path.c_str(), bytes.size());
    std::fflush(stdout);
    // A heap copy of exactly the input's size (never null), as libFuzzer
    // passes it, so that over-reads hit a redzone in sanitizer builds.
    const std::unique_ptr<std::uint8_t[]> data(new std::uint8_t[bytes.size()]);
    std::copy(bytes.begin(), bytes.end(), data.get());
    LLVMFuzzerTestOneInput(data.get(), bytes.size());
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s FILE_OR_DIRECTORY...\n", argv[0]);
        return 2;
    }
    int failures = 0;
    std::size_t runs = 0;
    for (int i = 1; i < argc; ++i) {
        const fs::path arg(argv[i]);
        std::error_code ec;
        if (fs::is_directory(arg, ec)) {
            std::vector<fs::path> files;
            for (const auto& entry : fs::directory_iterator(arg, ec))
                if (entry.is_regular_file() && isInput(entry.path()))
                    files.push_back(entry.path());
            if (ec) {
                std::fprintf(stderr, "cannot list %s: %s\n", arg.c_str(), ec.message().c_str());
                ++failures;
            }
            std::sort(files.begin(), files.end());
            for (const auto& file : files) {
                failures += runFile(file) ? 0 : 1;
                ++runs;
            }
        } else if (fs::is_regular_file(arg, ec)) {
            failures += runFile(arg) ? 0 : 1;
            ++runs;
        } else {
            std::fprintf(stderr, "no such file or directory: %s\n", arg.c_str());
            ++failures;
        }
    }
    std::printf("%zu inputs run, %d unreadable\n", runs, failures);
    return failures ? 1 : 0;
}
