#pragma once

// Reading the pickles of torch.save without running them, as
// torch.load(weights_only=True) does: the opcodes are decoded into plain
// objects, and the few callables torch and tensordict need are recognised by
// name and rebuilt as data (a tensor, an OrderedDict, a torch.Size). Any
// other callable or class becomes an Instance that names it; nothing is
// ever imported or called.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tensordict/dtype.h"
#include "tensordict/error.h"

namespace tensordict::python {

struct Object;

// What a storage or a tensor is beyond an Object's common fields.
struct TensorFields {
    // Storage: its element type and element count. Tensor: its dtype.
    DType dtype = DType::UInt8;
    std::int64_t numel = 0;
    // Tensor: a view of `storage`, in elements.
    const Object* storage = nullptr;
    std::int64_t offset = 0;
    std::vector<std::int64_t> shape, stride;
};

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
    // Dict: "dict" or "OrderedDict"; Tuple: "tuple" or "torch.Size"; Set:
    // "set" or "frozenset"; Tensor: "Tensor" or "Parameter"; Str:
    // "torch.device" for a device. (Literals only: an object stays small,
    // for pickles of millions of them.)
    std::string_view className;
    std::vector<Object*> items;  // List, Tuple, Set; Instance's arguments
    // Dict, in order; Instance: what SETITEM(S) gave it (a dict subclass's items).
    std::vector<std::pair<Object*, Object*>> entries;
    Object* state = nullptr;  // Instance, TensorDict: what BUILD set
    // Instance: a List of what APPEND(S) gave it (a list subclass's items), if any.
    Object* listItems = nullptr;

    // Storage and Tensor only: their fields, made when first set (most
    // objects of a large pickle are neither, and stay small).
    TensorFields& tensor() {
        if (!tensor_.fields)
            tensor_.fields = std::make_unique<TensorFields>();
        return *tensor_.fields;
    }
    const TensorFields& tensor() const {
        static const TensorFields none;
        return tensor_.fields ? *tensor_.fields : none;
    }

private:
    // Copied with its object (a Parameter is a copy of its tensor).
    struct OwnedFields {
        std::unique_ptr<TensorFields> fields;
        OwnedFields() = default;
        OwnedFields(const OwnedFields& o) { *this = o; }
        OwnedFields& operator=(const OwnedFields& o) {
            fields = o.fields ? std::make_unique<TensorFields>(*o.fields) : nullptr;
            return *this;
        }
    };
    OwnedFields tensor_;
};

// Objects that never move once made (pointers to them stay valid), held
// in blocks that double in size: a pickle of millions of objects (a DCP
// .metadata) costs a few dozen allocations, not one for every two objects.
class ObjectArena {
public:
    Object& emplace_back() {
        if (blocks_.empty() || blocks_.back().used == blocks_.back().capacity) {
            const std::size_t capacity =
                blocks_.empty() ? kFirstBlock : std::min(blocks_.back().capacity * 2, kLastBlock);
            blocks_.push_back({std::make_unique<Object[]>(capacity), capacity, 0});
        }
        Block& block = blocks_.back();
        ++size_;
        return block.objects[block.used++];
    }
    std::size_t size() const { return size_; }

    class const_iterator {
    public:
        const_iterator(const ObjectArena* arena, std::size_t block, std::size_t index)
            : arena_(arena), block_(block), index_(index) {}
        const Object& operator*() const { return arena_->blocks_[block_].objects[index_]; }
        const_iterator& operator++() {
            if (++index_ == arena_->blocks_[block_].used) {
                ++block_;
                index_ = 0;
            }
            return *this;
        }
        bool operator!=(const const_iterator& o) const {
            return block_ != o.block_ || index_ != o.index_;
        }

    private:
        const ObjectArena* arena_;
        std::size_t block_, index_;
    };
    const_iterator begin() const { return {this, 0, 0}; }
    const_iterator end() const { return {this, blocks_.size(), 0}; }

private:
    static constexpr std::size_t kFirstBlock = 16, kLastBlock = 16384;
    struct Block {
        std::unique_ptr<Object[]> objects;
        std::size_t capacity, used;
    };
    std::vector<Block> blocks_;  // every block but the last is full
    std::size_t size_ = 0;
};

// A decoded pickle: every object lives in `objects` (so shared and cyclic
// references need no ownership, and freeing is flat); `root` is the result.
struct Pickle {
    ObjectArena objects;
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

// A storage of quantized values ("torch.QInt8Storage"), which torch.load
// reads and tdstudio does not decode: the integer type its bytes hold, the
// torch dtype it stands for, and how many bits each value takes (4 and 2
// for the types that pack several values into a byte).
struct QuantizedStorage {
    DType held;
    std::string_view torchDType;
    int bitsPerValue;
};
std::optional<QuantizedStorage> quantizedStorage(std::string_view qualifiedName);

// A value for a key: str as is, others as Python's str() shows them.
std::string keyText(const Object& key);

// What it is, for messages: Python's type name ("dict", "OrderedDict",
// "torch.Size"), the class an Instance names, "global torch.float32".
std::string typeName(const Object& o);

// A pickled numpy.dtype(code, align, copy) with its BUILD state (version,
// byte order, subarray, names, fields, ...) as NumPy's dtype string with
// its byte order ("<f8", "|b1"; the writer's native "=" as "<"). None for
// any other object, and for a record or subarray dtype.
std::optional<std::string> numpyDTypeString(const Object& dtype);

}  // namespace tensordict::python
