#include "common/support/wide_zero.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

namespace kob {

namespace {
bool avx2() {
  __builtin_cpu_init();  // a static initializer may run before the compiler runtime's own
  return __builtin_cpu_supports("avx2");
}
}  // namespace

// False until this initializer runs: the 16-byte stores, which are as correct.
const bool g_avx2_zero = avx2();

// Four records (256 bytes) a turn, then one at a time; pointer loops, so a turn's overhead is an
// add, a compare and a branch.
__attribute__((target("avx2"))) void wide_zero_avx2(void* p, std::size_t bytes) {
  auto* q = static_cast<__m256i*>(p);
  auto* const end = q + bytes / 32;
  auto* const whole_turns = q + bytes / 256 * 8;  // where the last whole turn ends
  const __m256i z = _mm256_setzero_si256();
  for (; q != whole_turns; q += 8) {
    _mm256_storeu_si256(q, z);
    _mm256_storeu_si256(q + 1, z);
    _mm256_storeu_si256(q + 2, z);
    _mm256_storeu_si256(q + 3, z);
    _mm256_storeu_si256(q + 4, z);
    _mm256_storeu_si256(q + 5, z);
    _mm256_storeu_si256(q + 6, z);
    _mm256_storeu_si256(q + 7, z);
    asm volatile("" : "+r"(q) : : "memory");  // stays stores, never a memset call
  }
  for (; q < end; q += 2) {
    _mm256_storeu_si256(q, z);
    _mm256_storeu_si256(q + 1, z);
    asm volatile("" : "+r"(q) : : "memory");
  }
}

}  // namespace kob
#endif
