// Loads a tensordict with libtensordict's core alone (no libtorch) and prints
// the sum of one float32 leaf, decoded from its raw bytes.
// usage: consumer_core PATH KEY...
#include <tensordict/element.h>
#include <tensordict/tensordict.h>

#include <cstdio>

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: consumer_core PATH KEY...\n");
        return 2;
    }
    try {
        const tensordict::TensorDict td = tensordict::load(argv[1]);
        const tensordict::Node* leaf =
            td.root().find(std::vector<std::string>(argv + 2, argv + argc));
        if (!leaf || !leaf->isTensor()) {
            std::fprintf(stderr, "no such tensor leaf\n");
            return 1;
        }
        const tensordict::LeafBytes bytes = leaf->bytes();
        const std::size_t item = tensordict::itemSize(leaf->leaf().dtype);
        double sum = 0;
        for (std::size_t i = 0; i < bytes.size; i += item)
            sum += tensordict::elementAsDouble(bytes.data.get() + i, leaf->leaf().dtype);
        std::printf("sum %g\n", sum);
    } catch (const tensordict::Error& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
    return 0;
}
