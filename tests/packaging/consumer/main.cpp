// Loads a tensordict with libtensordict's torch part and prints the sum of
// one leaf, computed by libtorch over the mapped bytes.
// usage: consumer PATH KEY...
#include <tensordict/torch.h>

#include <cstdio>

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: consumer PATH KEY...\n");
        return 2;
    }
    try {
        const tensordict::TensorDict td = tensordict::load(argv[1]);
        const tensordict::Node* leaf =
            td.root().find(std::vector<std::string>(argv + 2, argv + argc));
        if (!leaf) {
            std::fprintf(stderr, "no such key\n");
            return 1;
        }
        std::printf("sum %g\n", tensordict::torch::tensor(*leaf).sum().item<double>());
    } catch (const tensordict::Error& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
    return 0;
}
