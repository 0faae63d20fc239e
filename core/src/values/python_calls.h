#pragma once

// The calls a pickle makes (REDUCE), read as data: the few callables
// torch, tensordict and Python's own types need are recognised by name and
// rebuilt as the objects they stand for (a tensor, an OrderedDict, a
// torch.Size, an enum member); any other becomes an Instance that names it.
// Nothing is called. (NEWOBJ, INST and OBJ make Instances in the decoder.)

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "values/python_objects.h"

namespace tensordict::python {

// What rebuilding makes its objects with: the decoder's arena, under the
// pickle's limits.
class ObjectMaker {
public:
    virtual ~ObjectMaker() = default;
    virtual Object* make(Object::Type type) = 0;
    virtual Object* makeText(Object::Type type, std::string_view text) = 0;
    virtual Object* tuple(std::vector<Object*> items) = 0;
    // A set ("set") or frozenset ("frozenset") of `items`.
    virtual Object* set(std::string_view className, std::vector<Object*> items) = 0;
    // dict[key] = value; throws, as Python does, for a key it cannot hash.
    virtual void setItem(Object* dict, Object* key, Object* value) = 0;
    // Charges `n` copied items or bytes to the pickle's budget (throws past it).
    virtual void charge(std::size_t n) = 0;
    // Throws Error (corrupt) naming the pickle and where in it.
    [[noreturn]] virtual void fail(const std::string& why) const = 0;
};

// What a call of `callee` (a class or function) with `args` (a tuple) is,
// made with `maker`.
Object* rebuildCall(ObjectMaker& maker, Object* callee, Object* args);

}  // namespace tensordict::python
