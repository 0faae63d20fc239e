#include "tensordict/worker_threads.h"

namespace tensordict {
namespace {
std::atomic<WorkerThreadStart> threadStart{nullptr};
}  // namespace

void setWorkerThreadStart(WorkerThreadStart start) {
    threadStart.store(start, std::memory_order_release);
}

WorkerThreadStart workerThreadStart() {
    return threadStart.load(std::memory_order_acquire);
}

}  // namespace tensordict
