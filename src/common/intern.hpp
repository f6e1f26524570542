// Interned strings: every name in a record is a 32-bit id into one process-wide table.
#pragma once

#include <cstdint>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <string>
#include <string_view>
#include <vector>

namespace kob {

class InternTable {
 public:
  static constexpr std::uint32_t kNullName = 0;  // id of the text used for a null name

  // Thread-safe; takes a lock. Callers on the hot path go through a per-thread cache first.
  std::uint32_t intern(std::string_view s, const char** stable = nullptr);
  // The text of an id; valid for the life of the process. Unknown ids give "".
  const char* str(std::uint32_t id) const;
  std::size_t size() const;
  // Snapshot of all strings by id, for writers.
  std::vector<std::string_view> snapshot() const;
};

InternTable& names();

// fork(): the table's lock is taken before and released after (in parent and child), so that a
// child never inherits it held by a thread it does not have.
void intern_before_fork();
void intern_after_fork();

// Per-thread cache keyed by the caller's pointer. A hit is confirmed with strcmp against the
// interned text, because callers (Kokkos) often hand us a temporary buffer at a reused address.
struct InternCache {
  static constexpr std::size_t kSlots = 256;
  struct Slot {
    const char* key = nullptr;
    const char* text = nullptr;
    std::uint32_t id = 0;
    std::uint32_t len = 0;  // strlen(text)
  };
  Slot slots[kSlots];

  __attribute__((always_inline)) std::uint32_t lookup(const char* s) {
    if (s == nullptr) return null_name();
    Slot& slot = slots[(reinterpret_cast<std::uintptr_t>(s) >> 4) & (kSlots - 1)];
    if (slot.key == s && same_text(slot.text, s, slot.len)) return slot.id;
    return miss(s, slot);
  }

  // strcmp(text, s) == 0 for a text of known length, 16 bytes at a time. A vector load may read
  // past the end of s (or text) but never into another page, so it cannot fault; near a page end
  // it falls back to strcmp. Much cheaper than a strcmp call for the short names Kokkos passes.
  static bool same_text(const char* text, const char* s, std::size_t len) {
#if defined(__SSE2__)
    const std::size_t total = len + 1;  // the terminating NUL must match too
    for (std::size_t i = 0; i < total; i += 16) {
      if (((reinterpret_cast<std::uintptr_t>(s + i) | reinterpret_cast<std::uintptr_t>(text + i)) & 4095) > 4080)
        return std::strcmp(text + i, s + i) == 0;
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text + i));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
      unsigned diff = ~static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(a, b))) & 0xffffu;
      const std::size_t left = total - i;
      if (left < 16) diff &= (1u << left) - 1;
      if (diff != 0) return false;
    }
    return true;
#else
    return std::strcmp(text, s) == 0;
#endif
  }

 private:
  static std::uint32_t null_name();
  std::uint32_t miss(const char* s, Slot& slot);
};

}  // namespace kob
