#include "sources/folder_listing.h"

#include <dirent.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include "tensordict/error.h"

namespace tensordict {

// Natural order: runs of digits compare as numbers.
bool naturalLess(const std::string& a, const std::string& b) {
    std::size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        if (std::isdigit(static_cast<unsigned char>(a[i])) &&
            std::isdigit(static_cast<unsigned char>(b[j]))) {
            std::size_t ie = i, je = j;
            while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie])))
                ++ie;
            while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je])))
                ++je;
            // Without leading zeros, the longer run is the larger number.
            std::size_t is = i, js = j;
            while (is + 1 < ie && a[is] == '0')
                ++is;
            while (js + 1 < je && b[js] == '0')
                ++js;
            if (ie - is != je - js)
                return ie - is < je - js;
            if (const int c = a.compare(is, ie - is, b, js, je - js); c != 0)
                return c < 0;
            i = ie, j = je;
        } else {
            if (a[i] != b[j])
                return a[i] < b[j];
            ++i, ++j;
        }
    }
    return a.size() - i < b.size() - j;
}

std::vector<std::string> namesInNaturalOrder(const std::string& folder) {
    std::vector<std::string> names;
    DIR* dir = opendir(folder.c_str());
    if (!dir)
        throw Error::notFound(folder,
                              "cannot list the folder: " + std::string(std::strerror(errno)));
    while (const dirent* e = readdir(dir))
        if (e->d_name[0] != '.')
            names.emplace_back(e->d_name);
    closedir(dir);
    std::sort(names.begin(), names.end(), naturalLess);
    return names;
}

}  // namespace tensordict
