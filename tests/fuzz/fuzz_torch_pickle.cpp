// libFuzzer target: the safe unpickler of torch checkpoints
// (values/python_objects.h) on one pickle, every persistent id taken as a
// storage of the size it names (a quantized one, of the type it names, is
// kept by name as torch_format.cpp keeps it), then the tree built from what it decoded
// (formats/python_tree.h): containers, tensors over their storages, objects
// never rebuilt. Nothing may crash, hang or run away in memory; bad input
// throws tensordict::Error.

#include <cstdint>
#include <string>

#include "formats/python_tree.h"
#include "load_support.h"
#include "values/python_objects.h"

using tensordict::python::Object;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    try {
        std::size_t pos = 0;
        const tensordict::python::Pickle pickle = tensordict::python::decode(
            bytes, &pos, "fuzz.pkl", [](const Object& pid, const std::function<Object*()>& make) {
                Object* storage = make();
                storage->tensor().dtype = tensordict::DType::Float32;
                if (pid.type == Object::Type::Tuple && pid.items.size() > 4 &&
                    pid.items[4]->type == Object::Type::Int && pid.items[4]->integer >= 0)
                    storage->tensor().numel = pid.items[4]->integer % (1 << 20);
                const auto quantized =
                    pid.type == Object::Type::Tuple && pid.items.size() > 1 &&
                            pid.items[1]->type == Object::Type::Global
                        ? tensordict::python::quantizedStorage(pid.items[1]->text)
                        : std::nullopt;
                if (quantized) {
                    storage->tensor().dtype = quantized->held;
                    storage->flag = true;
                    storage->state = make();
                    storage->state->type = Object::Type::Str;
                    storage->state->text = pid.items[1]->text;
                }
                return storage;
            });
        const tensordict::StorageLocator locate = [](const Object& storage) {
            tensordict::StorageInfo info;
            info.kind = tensordict::StorageKind::StoredEntry;
            info.path = "data/" + storage.text;
            info.size = std::uint64_t(storage.tensor().numel) * 4;
            return info;
        };
        const auto root = tensordict::buildPythonTree(pickle, nullptr, locate);
        fuzz::readNode(*root);
    } catch (const tensordict::Error&) {
    }
    return 0;
}
