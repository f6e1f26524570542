// Zeroes memory with wide stores in a loop the compiler may not turn back into memset: glibc's
// memset takes `rep stosb` past 2 KiB, which is cheap in cycles but which callgrind counts as one
// instruction per byte, and callgrind is how this project counts the writer's and the conversion's
// cost per record (benchmarks/pipeline_cost.py). A 64-byte record is four 16-byte stores, or two
// 32-byte ones where the processor has AVX2 (checked once, at load).
#pragma once

#include <cstddef>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace kob {

#if defined(__x86_64__)
// Out of line: the AVX2 stores, for large blocks (a ring slot's records, the codec's remembered
// fields). Only called where g_avx2_zero is true.
void wide_zero_avx2(void* p, std::size_t bytes);
extern const bool g_avx2_zero;
#endif

// p 16-byte aligned, bytes a multiple of 64.
inline void wide_zero(void* p, std::size_t bytes) {
#if defined(__x86_64__)
  if (g_avx2_zero && bytes >= 1024) {
    wide_zero_avx2(p, bytes);
    return;
  }
#endif
#if defined(__SSE2__)
  auto* q = static_cast<__m128i*>(p);
  const __m128i z = _mm_setzero_si128();
  for (std::size_t i = 0, n = bytes / 16; i < n; i += 4) {
    _mm_store_si128(q + i, z);
    _mm_store_si128(q + i + 1, z);
    _mm_store_si128(q + i + 2, z);
    _mm_store_si128(q + i + 3, z);
    asm volatile("" : : "r"(q + i) : "memory");  // no loop idiom: stays stores, never a memset call
  }
#else
  std::memset(p, 0, bytes);
#endif
}

}  // namespace kob
