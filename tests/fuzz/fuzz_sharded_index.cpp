// libFuzzer target: a Hugging Face model folder's model.safetensors.index.json.
// The input is the index; the folder around it holds two fixed, sound shards
// (model-00001-of-00002.safetensors with "embed.weight" and "norm.weight",
// model-00002-of-00002.safetensors with "head.weight"), written once per
// process. The folder is loaded (errors as error nodes), every leaf read,
// then checked as --check does (load_support.h).

#include <cstring>
#include <string>

#include "load_support.h"

namespace {

std::string safetensorsFile(const std::string& header, const std::string& data) {
    std::string json = header;
    json.append((8 - json.size() % 8) % 8, ' ');
    std::string out(8, '\0');
    std::uint64_t n = json.size();
    std::memcpy(out.data(), &n, 8);  // little-endian hosts only, as the project
    return out + json + data;
}

const std::string& folder() {
    static const std::string dir = [] {
        const std::string d = fuzz::workDirectory("fuzz_sharded_index");
        const std::string one = safetensorsFile(
            R"({"__metadata__":{"format":"pt"},"norm.weight":{"dtype":"BF16","shape":[2],)"
            R"("data_offsets":[0,4]},"embed.weight":{"dtype":"F32","shape":[2,3],)"
            R"("data_offsets":[4,28]}})",
            std::string("\x80\x3f\x00\x40", 4) + std::string(24, '\x01'));
        const std::string two = safetensorsFile(
            R"({"__metadata__":{"format":"pt"},"head.weight":{"dtype":"F16","shape":[3],)"
            R"("data_offsets":[0,6]}})",
            std::string("\x00\x3c\x00\x40\x00\x42", 6));
        fuzz::writeWhole(d + "/model-00001-of-00002.safetensors", one.data(), one.size());
        fuzz::writeWhole(d + "/model-00002-of-00002.safetensors", two.data(), two.size());
        return d;
    }();
    return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz::writeWhole(folder() + "/model.safetensors.index.json", data, size);
    fuzz::loadAndRead(folder());
    fuzz::checkAndPlanRepair(folder());
    return 0;
}
