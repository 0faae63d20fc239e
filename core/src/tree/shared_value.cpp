#include "tree/shared_value.h"

#include <pthread.h>
#include <sys/mman.h>

#include <cstring>

#include "tensordict/error.h"
#include "tensordict/node.h"
#include "values/pickle.h"

namespace tensordict {

struct SharedValue::Header {
    pthread_mutex_t mutex;
    std::size_t capacity;
    std::size_t length;
    // encoded bytes follow
    char* bytes() { return reinterpret_cast<char*>(this + 1); }
};

SharedValue::SharedValue(const Value& initial) {
    const std::string encoded = encodePlainPickle(initial);
    // Room to grow: updates in place must not need a new mapping (other
    // processes would not see it).
    const std::size_t capacity = std::max<std::size_t>(64 * 1024, encoded.size() * 4);
    size_ = sizeof(Header) + capacity;
    void* p = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        throw Error::io("share_non_tensor",
                        std::string("cannot map shared memory: ") + std::strerror(errno));
    header_ = static_cast<Header*>(p);
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
    pthread_mutex_init(&header_->mutex, &attr);
    pthread_mutexattr_destroy(&attr);
    header_->capacity = capacity;
    header_->length = encoded.size();
    std::memcpy(header_->bytes(), encoded.data(), encoded.size());
}

SharedValue::~SharedValue() {
    if (header_)
        ::munmap(header_, size_);
}

Value SharedValue::get() const {
    pthread_mutex_lock(&header_->mutex);
    const std::string encoded(header_->bytes(), header_->length);
    pthread_mutex_unlock(&header_->mutex);
    std::optional<Value> v = decodePlainPickle(encoded);
    return v ? *v : Value();
}

void SharedValue::set(const Value& value) {
    const std::string encoded = encodePlainPickle(value);
    if (encoded.size() > header_->capacity)
        throw Error::invalid("share_non_tensor", "value of " + std::to_string(encoded.size()) +
                                                     " bytes exceeds the shared segment of " +
                                                     std::to_string(header_->capacity));
    pthread_mutex_lock(&header_->mutex);
    std::memcpy(header_->bytes(), encoded.data(), encoded.size());
    header_->length = encoded.size();
    pthread_mutex_unlock(&header_->mutex);
}

Value Node::value() const {
    const Described& d = described();
    return d.sharedValue ? d.sharedValue->get() : d.value;
}

void Node::setSharedValue(Value v) const {
    const std::shared_ptr<SharedValue>& shared = described().sharedValue;
    if (!shared)
        throw Error::invalid(where(), isLocked()
                                          ? "the tensordict is locked and the value is not shared"
                                          : "the value is not shared (setValue() changes it)");
    shared->set(v);
}

void Node::setValue(Value v) {
    checkUnlocked();
    if (!isNonTensor())
        throw Error::invalid(where(), "not a non-tensor value");
    describe().value = std::move(v);
}

}  // namespace tensordict
