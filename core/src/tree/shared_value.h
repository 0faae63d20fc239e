#pragma once

#include <cstddef>

#include "tensordict/value.h"

namespace tensordict {

// A non-tensor value in anonymous shared memory (share_non_tensor): a
// process that forks after save() sees the parent's updates and vice versa.
// The value is kept pickled (plain data) behind a process-shared mutex.
class SharedValue {
public:
    explicit SharedValue(const Value& initial);
    ~SharedValue();
    SharedValue(const SharedValue&) = delete;
    SharedValue& operator=(const SharedValue&) = delete;

    Value get() const;
    // Throws Error when the encoded value outgrows the segment.
    void set(const Value& value);

private:
    struct Header;
    Header* header_ = nullptr;
    std::size_t size_ = 0;
};

}  // namespace tensordict
