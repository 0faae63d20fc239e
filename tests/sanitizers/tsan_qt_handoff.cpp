// ThreadSanitizer builds only (TDSTUDIO_SANITIZE_THREAD, preset "tsan").
//
// Debian's Qt is not built with -fsanitize=thread, so TSan cannot see how
// QtConcurrent::run() hands a task to a QThreadPool thread: the pool's queue
// is guarded by a QMutex whose slow path, inside libQt6Core, is not
// annotated. Every task then looked as if it raced with the code that made
// it (its callable, its captures, whatever they point to).
//
// QtConcurrent's task (RunFunctionTaskBase, inline in our code) calls
// promise.reportStarted() on the submitting thread after the task is built
// and before QThreadPool::start(), and promise.isCanceled() first thing in
// run() on the pool thread, on the same QFutureInterface object. These two
// functions are interposed here (every binary of a TSan build links this
// file): a release on the promise before the real reportStarted() and an
// acquire on it before the real isCanceled(). That is the ordering the pool
// really provides, and nothing more: what the task's body shares with other
// threads afterwards is checked as before.

#include <dlfcn.h>

extern "C" {
void __tsan_acquire(void* addr);
void __tsan_release(void* addr);

// void QFutureInterfaceBase::reportStarted()
void _ZN20QFutureInterfaceBase13reportStartedEv(void* self) {
    using Real = void (*)(void*);
    static const Real real =
        reinterpret_cast<Real>(dlsym(RTLD_NEXT, "_ZN20QFutureInterfaceBase13reportStartedEv"));
    __tsan_release(self);
    real(self);
}

// bool QFutureInterfaceBase::isCanceled() const
bool _ZNK20QFutureInterfaceBase10isCanceledEv(const void* self) {
    using Real = bool (*)(const void*);
    static const Real real =
        reinterpret_cast<Real>(dlsym(RTLD_NEXT, "_ZNK20QFutureInterfaceBase10isCanceledEv"));
    __tsan_acquire(const_cast<void*>(self));
    return real(self);
}
}
