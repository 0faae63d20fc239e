#include "statistics/float32_sums.h"

#include <algorithm>
#include <cmath>

#if defined(__x86_64__) && defined(__GNUC__)
// GCC 12's AVX-512 intrinsics start from self-initialized "undefined"
// vectors, which its own warnings flag once inlined (GCC bug 105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#ifndef __clang__
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#pragma GCC diagnostic pop
#define TENSORDICT_X86_KERNELS 1
#endif

namespace tensordict {
namespace {

// Independent lanes, so that the compiler can keep them in vector registers.
template <bool Compare>
struct PortableLanes {
    static constexpr std::size_t kLanes = 8;
    double sum[kLanes] = {}, sumsq[kLanes] = {}, dot[kLanes] = {};
    float maxAbs[kLanes] = {}, lo[kLanes], hi[kLanes];
    std::int64_t changed[kLanes] = {};

    void add(std::size_t l, float bValue, float aValue, double shift) {
        const double y = bValue, d = y - shift;
        sum[l] += d, sumsq[l] += d * d;
        lo[l] = bValue < lo[l] ? bValue : lo[l];
        hi[l] = bValue > hi[l] ? bValue : hi[l];
        if constexpr (Compare) {
            const float delta = std::fabs(bValue - aValue);
            changed[l] += aValue != bValue;
            maxAbs[l] = delta > maxAbs[l] ? delta : maxAbs[l];
            dot[l] += double(aValue) * y;
        }
    }
    Float32Sums run(const float* b, const float* a, std::size_t n, float shift) {
        for (std::size_t l = 0; l < kLanes; ++l)
            lo[l] = hi[l] = shift;
        std::size_t i = 0;
        for (; i + kLanes <= n; i += kLanes)
            for (std::size_t l = 0; l < kLanes; ++l)
                add(l, b[i + l], Compare ? a[i + l] : 0.0f, shift);
        for (; i < n; ++i)  // the tail, in lane 0
            add(0, b[i], Compare ? a[i] : 0.0f, shift);
        Float32Sums s;
        s.lo = s.hi = shift;
        for (std::size_t l = 0; l < kLanes; ++l)
            s = merged(s, sum[l], sumsq[l], dot[l], maxAbs[l], lo[l], hi[l], changed[l]);
        return s;
    }
    static Float32Sums merged(Float32Sums s, double sum, double sumsq, double dot, float maxAbs,
                              float lo, float hi, std::int64_t changed) {
        s.sum += sum, s.sumsq += sumsq, s.dot += dot;
        s.maxAbs = maxAbs > s.maxAbs ? maxAbs : s.maxAbs;
        s.lo = lo < s.lo ? lo : s.lo;
        s.hi = hi > s.hi ? hi : s.hi;
        s.changed += changed;
        return s;
    }
};

Float32Sums portableSums(const float* b, const float* a, std::size_t n, float shift) {
    return a ? PortableLanes<true>().run(b, a, n, shift)
             : PortableLanes<false>().run(b, nullptr, n, shift);
}

// What a vector version leaves over (fewer values than a vector), added the portable way.
Float32Sums withTail(Float32Sums s, const float* b, const float* a, std::size_t n, float shift) {
    if (n == 0)
        return s;
    const Float32Sums t = portableSums(b, a, n, shift);
    return PortableLanes<true>::merged(s, t.sum, t.sumsq, t.dot, t.maxAbs, t.lo, t.hi, t.changed);
}

#ifdef TENSORDICT_X86_KERNELS

// Eight floats a step: min, max, |b - a| and the changed count in float32,
// the sums in two vectors of four doubles each.
template <bool Compare>
__attribute__((target("avx2,fma"))) Float32Sums avx2Sums(const float* b, const float* a,
                                                         std::size_t n, float shift) {
    const __m256d shiftV = _mm256_set1_pd(shift);
    const __m256 absMask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    __m256d sum0 = _mm256_setzero_pd(), sum1 = sum0, sq0 = sum0, sq1 = sum0, dot0 = sum0,
            dot1 = sum0;
    __m256 lo = _mm256_set1_ps(shift), hi = lo, maxAbs = _mm256_setzero_ps();
    __m256i changed = _mm256_setzero_si256();  // up to 2^31 a lane: pieces are far smaller
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 bv = _mm256_loadu_ps(b + i);
        const __m256d y0 = _mm256_cvtps_pd(_mm256_castps256_ps128(bv));
        const __m256d y1 = _mm256_cvtps_pd(_mm256_extractf128_ps(bv, 1));
        const __m256d d0 = _mm256_sub_pd(y0, shiftV), d1 = _mm256_sub_pd(y1, shiftV);
        sum0 = _mm256_add_pd(sum0, d0), sum1 = _mm256_add_pd(sum1, d1);
        sq0 = _mm256_fmadd_pd(d0, d0, sq0), sq1 = _mm256_fmadd_pd(d1, d1, sq1);
        lo = _mm256_min_ps(lo, bv), hi = _mm256_max_ps(hi, bv);
        if constexpr (Compare) {
            const __m256 av = _mm256_loadu_ps(a + i);
            const __m256d x0 = _mm256_cvtps_pd(_mm256_castps256_ps128(av));
            const __m256d x1 = _mm256_cvtps_pd(_mm256_extractf128_ps(av, 1));
            dot0 = _mm256_fmadd_pd(x0, y0, dot0), dot1 = _mm256_fmadd_pd(x1, y1, dot1);
            maxAbs = _mm256_max_ps(maxAbs, _mm256_and_ps(_mm256_sub_ps(bv, av), absMask));
            // A true compare is all ones: -1 as an integer.
            changed =
                _mm256_sub_epi32(changed, _mm256_castps_si256(_mm256_cmp_ps(av, bv, _CMP_NEQ_UQ)));
        }
    }
    alignas(32) double d[3][4];
    alignas(32) float f[3][8];
    alignas(32) std::int32_t c[8];
    _mm256_store_pd(d[0], _mm256_add_pd(sum0, sum1));
    _mm256_store_pd(d[1], _mm256_add_pd(sq0, sq1));
    _mm256_store_pd(d[2], _mm256_add_pd(dot0, dot1));
    _mm256_store_ps(f[0], maxAbs);
    _mm256_store_ps(f[1], lo);
    _mm256_store_ps(f[2], hi);
    _mm256_store_si256(reinterpret_cast<__m256i*>(c), changed);
    Float32Sums s;
    s.lo = s.hi = shift;
    for (int l = 0; l < 8; ++l)
        s = PortableLanes<true>::merged(s, l < 4 ? d[0][l] : 0, l < 4 ? d[1][l] : 0,
                                        l < 4 ? d[2][l] : 0, f[0][l], f[1][l], f[2][l], c[l]);
    return withTail(s, b + i, Compare ? a + i : nullptr, n - i, shift);
}

// The same sixteen floats a step.
template <bool Compare>
__attribute__((target("avx512f,avx512dq"))) Float32Sums avx512Sums(const float* b, const float* a,
                                                                   std::size_t n, float shift) {
    const __m512d shiftV = _mm512_set1_pd(shift);
    __m512d sum0 = _mm512_setzero_pd(), sum1 = sum0, sq0 = sum0, sq1 = sum0, dot0 = sum0,
            dot1 = sum0;
    __m512 lo = _mm512_set1_ps(shift), hi = lo, maxAbs = _mm512_setzero_ps();
    __m512i changed = _mm512_setzero_si512();
    const __m512i one = _mm512_set1_epi32(1);
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 bv = _mm512_loadu_ps(b + i);
        const __m512d y0 = _mm512_cvtps_pd(_mm512_castps512_ps256(bv));
        const __m512d y1 =
            _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(bv), 1)));
        const __m512d d0 = _mm512_sub_pd(y0, shiftV), d1 = _mm512_sub_pd(y1, shiftV);
        sum0 = _mm512_add_pd(sum0, d0), sum1 = _mm512_add_pd(sum1, d1);
        sq0 = _mm512_fmadd_pd(d0, d0, sq0), sq1 = _mm512_fmadd_pd(d1, d1, sq1);
        lo = _mm512_min_ps(lo, bv), hi = _mm512_max_ps(hi, bv);
        if constexpr (Compare) {
            const __m512 av = _mm512_loadu_ps(a + i);
            const __m512d x0 = _mm512_cvtps_pd(_mm512_castps512_ps256(av));
            const __m512d x1 =
                _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(av), 1)));
            dot0 = _mm512_fmadd_pd(x0, y0, dot0), dot1 = _mm512_fmadd_pd(x1, y1, dot1);
            maxAbs = _mm512_max_ps(maxAbs, _mm512_abs_ps(_mm512_sub_ps(bv, av)));
            changed = _mm512_mask_add_epi32(changed, _mm512_cmp_ps_mask(av, bv, _CMP_NEQ_UQ),
                                            changed, one);
        }
    }
    Float32Sums s;
    s.sum = _mm512_reduce_add_pd(_mm512_add_pd(sum0, sum1));
    s.sumsq = _mm512_reduce_add_pd(_mm512_add_pd(sq0, sq1));
    s.dot = _mm512_reduce_add_pd(_mm512_add_pd(dot0, dot1));
    s.maxAbs = _mm512_reduce_max_ps(maxAbs);
    s.lo = _mm512_reduce_min_ps(lo);
    s.hi = _mm512_reduce_max_ps(hi);
    s.changed = _mm512_reduce_add_epi32(changed);
    return withTail(s, b + i, Compare ? a + i : nullptr, n - i, shift);
}

std::vector<Float32Kernel> kernelsOfThisCpu() {
    __builtin_cpu_init();
    std::vector<Float32Kernel> out{Float32Kernel::Portable};
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        out.push_back(Float32Kernel::Avx2);
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq"))
        out.push_back(Float32Kernel::Avx512);
    return out;
}

#else

std::vector<Float32Kernel> kernelsOfThisCpu() {
    return {Float32Kernel::Portable};
}

#endif

}  // namespace

bool Float32Sums::allFinite() const {
    return std::isfinite(sum) && std::isfinite(sumsq) && std::isfinite(dot) &&
           std::isfinite(maxAbs);
}

const std::vector<Float32Kernel>& float32KernelsOnThisCpu() {
    static const std::vector<Float32Kernel> kernels = kernelsOfThisCpu();
    return kernels;
}

Float32Sums float32Sums(const float* b, const float* a, std::size_t n, float shift,
                        Float32Kernel kernel) {
    const std::vector<Float32Kernel>& runs = float32KernelsOnThisCpu();
    if (std::find(runs.begin(), runs.end(), kernel) == runs.end())
        kernel = Float32Kernel::Portable;  // never an instruction this CPU lacks
#ifdef TENSORDICT_X86_KERNELS
    if (kernel == Float32Kernel::Avx512)
        return a ? avx512Sums<true>(b, a, n, shift) : avx512Sums<false>(b, nullptr, n, shift);
    if (kernel == Float32Kernel::Avx2)
        return a ? avx2Sums<true>(b, a, n, shift) : avx2Sums<false>(b, nullptr, n, shift);
#endif
    return portableSums(b, a, n, shift);
}

Float32Sums float32Sums(const float* b, const float* a, std::size_t n, float shift) {
    static const Float32Kernel fastest = float32KernelsOnThisCpu().back();
    return float32Sums(b, a, n, shift, fastest);
}

}  // namespace tensordict
