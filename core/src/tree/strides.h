#pragma once

// Element strides and the reach of a view: shared by the readers that
// build views (formats/) and by viewBytes(), which reads them.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

namespace tensordict {

inline std::vector<std::int64_t> cStrides(const std::vector<std::int64_t>& shape) {
    std::vector<std::int64_t> strides(shape.size());
    std::int64_t step = 1;
    for (std::size_t d = shape.size(); d-- > 0;) {
        strides[d] = step;
        step *= std::max<std::int64_t>(shape[d], 1);
    }
    return strides;
}

// Fortran order (NumPy's fortran_order): the first dimension steps fastest.
inline std::vector<std::int64_t> fStrides(const std::vector<std::int64_t>& shape) {
    std::vector<std::int64_t> strides(shape.size());
    std::int64_t step = 1;
    for (std::size_t d = 0; d < shape.size(); ++d) {
        strides[d] = step;
        step *= std::max<std::int64_t>(shape[d], 1);
    }
    return strides;
}

// Dimensions of size 1 may have any stride: they never step.
inline bool isCOrder(const std::vector<std::int64_t>& shape,
                     const std::vector<std::int64_t>& strides) {
    const std::vector<std::int64_t> c = cStrides(shape);
    for (std::size_t d = 0; d < shape.size(); ++d)
        if (shape[d] != 1 && strides[d] != c[d])
            return false;
    return true;
}

// How many elements a view has and the index of the last one it reaches,
// the arithmetic checked: nullopt for negative sizes or strides, mismatched
// lengths, or either figure past 2^62 (no hostile size or stride wraps them).
struct ViewReach {
    std::uint64_t numel = 1;
    std::uint64_t last = 0;
};
inline std::optional<ViewReach> viewReach(const std::vector<std::int64_t>& shape,
                                          const std::vector<std::int64_t>& strides) {
    constexpr std::uint64_t kLimit = std::uint64_t(1) << 62;
    if (shape.size() != strides.size())
        return std::nullopt;
    ViewReach r;
    for (std::size_t d = 0; d < shape.size(); ++d) {
        if (shape[d] < 0 || strides[d] < 0)
            return std::nullopt;
        std::uint64_t step = 0;
        if (__builtin_mul_overflow(r.numel, std::uint64_t(shape[d]), &r.numel) || r.numel > kLimit)
            return std::nullopt;
        if (shape[d] > 1 && (__builtin_mul_overflow(std::uint64_t(shape[d] - 1),
                                                    std::uint64_t(strides[d]), &step) ||
                             __builtin_add_overflow(r.last, step, &r.last) || r.last > kLimit))
            return std::nullopt;
    }
    return r;
}

}  // namespace tensordict
