#pragma once

// The sums the series takes of a piece of float32 values, in one pass: of
// the piece itself (b) and, when `a` is given, of how it moved from the
// same piece one step before. The hot loop of `--series`: the build targets
// plain x86-64, so the vector versions are picked at run time by what the
// CPU has.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tensordict {

struct Float32Sums {
    double sum = 0, sumsq = 0;  // of b - shift, in float64
    double dot = 0;             // of a * b, in float64
    float maxAbs = 0;           // of |b - a| as float32 subtraction gives it (as torch's would)
    float lo = 0, hi = 0;       // of b and the shift
    std::int64_t changed = 0;   // positions where a != b

    // True when every value was finite: a NaN or an Inf in a or b makes a
    // sum NaN or Inf, and the caller then takes the careful way.
    bool allFinite() const;
};

enum class Float32Kernel { Portable, Avx2, Avx512 };

// The kernels this CPU runs, the fastest last.
const std::vector<Float32Kernel>& float32KernelsOnThisCpu();

// `shift` is a value of b (the sums are taken about it, as momentsOf does);
// `a` may be null. Without a kernel, the fastest this CPU runs; one this
// CPU does not run is taken as Portable.
Float32Sums float32Sums(const float* b, const float* a, std::size_t n, float shift);
Float32Sums float32Sums(const float* b, const float* a, std::size_t n, float shift,
                        Float32Kernel kernel);

}  // namespace tensordict
