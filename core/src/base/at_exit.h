#pragma once

namespace tensordict {

// Runs a cleanup however the scope is left (a cancel or bad_alloc throws):
// AtExit end{[&z] { inflateEnd(&z); }};
template <typename F>
struct AtExit {
    F f;
    ~AtExit() { f(); }
};
template <typename F>
AtExit(F) -> AtExit<F>;

}  // namespace tensordict
