#pragma once

// Reading the pickles of torch.save without running them, as
// torch.load(weights_only=True) does: the opcodes are decoded into plain
// objects, and the few callables torch and tensordict need are recognised by
// name and rebuilt as data (a tensor, an OrderedDict, a torch.Size). Any
// other callable or class becomes an Instance that names it; nothing is
// ever imported or called.

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tensordict/dtype.h"
#include "tensordict/error.h"

namespace tensordict::python {

struct Object {
    enum class Type {
        None,
        Bool,
        Int,
        BigInt,  // beyond int64: `text` holds its decimal digits, as Python's str()
        Float,
        Str,
        Bytes,
        List,
        Tuple,
        Dict,
        Set,
        Global,    // a class or function by name: `text` is "module.name"
        Instance,  // a call or object never made: `text` names the class, `items` the arguments
        Storage,   // a tensor storage (persistent id): `text` is its key
        Tensor,
        TensorDict,  // tensordict's _make_td: `text` is the class, `state` the state dict
    };
    Type type = Type::None;
    bool flag = false;  // Bool; Tensor: requires_grad; Storage: a type no reader knows
                        // (`state` is then a Str naming it)
    std::int64_t integer = 0;
    double real = 0;
    std::string text;  // Str, Bytes, BigInt, Global, Instance, Storage, TensorDict
    // Dict: "dict" or "OrderedDict"; Tuple: "tuple" or "torch.Size"; Tensor:
    // "Tensor" or "Parameter"; Str: "torch.device" for a device. (Literals
    // only: an object stays small, for pickles of millions of them.)
    std::string_view className;
    std::vector<Object*> items;                        // List, Tuple, Set; Instance's arguments
    std::vector<std::pair<Object*, Object*>> entries;  // Dict, in order
    Object* state = nullptr;                           // Instance, TensorDict: what BUILD set
    // Storage: its element type and element count.
    DType dtype = DType::UInt8;
    std::int64_t numel = 0;
    // Tensor: a view of `storage`, in elements.
    const Object* storage = nullptr;
    std::int64_t offset = 0;
    std::vector<std::int64_t> shape, stride;
};

// A decoded pickle: every object lives in `objects` (so shared and cyclic
// references need no ownership, and freeing is flat); `root` is the result.
struct Pickle {
    std::deque<Object> objects;
    Object* root = nullptr;
};

// The input ended before the pickle did (a reader that reads a prefix of a
// file may try a longer one).
class Truncated : public Error {
public:
    Truncated(std::string where, std::string reason)
        : Error({ErrorKind::Truncated, std::move(where), std::move(reason)}) {}
};

// Resolves a persistent id (BINPERSID) into a Storage, allocated with
// `make`; throws Error when the id is not one the format knows.
using PersistentLoad =
    std::function<Object*(const Object& pid, const std::function<Object*()>& make)>;

// Decodes one pickle that starts at `bytes[*pos]`, and advances `*pos`
// past its STOP. Throws Error naming `where` for malformed or truncated
// input, unsupported opcodes, or more than the limits allow.
Pickle decode(std::string_view bytes, std::size_t* pos, const std::string& where,
              const PersistentLoad& persistentLoad);

// The storage class names of torch ("FloatStorage") as dtypes.
std::optional<DType> storageDType(std::string_view qualifiedName);

// A value for a key: str as is, others as Python's str() shows them.
std::string keyText(const Object& key);

}  // namespace tensordict::python
