// Interned strings: every name in a record is a 32-bit id into one process-wide table.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "common/support/hot_path.hpp"

namespace kob {

class InternTable {
 public:
  static constexpr std::uint32_t kNullName = 0;  // id of the text used for a null name

  // Thread-safe; takes a lock. Callers on the hot path go through a per-thread cache first.
  std::uint32_t intern(std::string_view s, const char** stable = nullptr);
  // Gives id this text (a raw trace's names, read by another process than the one that interned
  // them): ids below it that nothing defines read as "<name N not in the raw trace>". An id
  // already holding other text is redefined. Not for the recording process.
  void define(std::uint32_t id, std::string_view text);
  // The text of an id; valid for the life of the process. Unknown ids give "".
  const char* str(std::uint32_t id) const;
  std::size_t size() const;
  // How many intern() calls the table has answered (tests: what the per-thread caches kept off it).
  std::uint64_t lookups() const;
  // Snapshot of all strings by id, for writers.
  std::vector<std::string_view> snapshot() const;
};

InternTable& names();

// Called for every new name, under the table's lock, before its id is handed out (the raw trace
// writes the NAME entry there, so that it reaches the file before any record using the id).
void set_intern_listener(void (*fn)(std::uint32_t id, std::string_view text));

// fork(): the table's lock is taken before and released after (in parent and child), so that a
// child never inherits it held by a thread it does not have.
void intern_before_fork();
void intern_after_fork();

// Per-thread cache keyed by the caller's pointer and the text's first two characters. A hit is
// confirmed with strcmp against the interned text, because callers (Kokkos) often hand us a
// temporary buffer at a reused address: Kokkos 3.x builds each kernel's label in a stack
// temporary, so that the five kernels of an MD step's loop body come by turns at one address.
// The characters spread those over slots; texts that share them and the address ("integrate_v",
// "integrate_x") share a slot, which keeps the last kWays of them (the latest first). Only a text
// new to its slot goes to the process-wide table (a lock and a hash lookup, on lines the
// kernel's data has evicted).
struct InternCache {
  static constexpr std::size_t kSlots = 128;
  static constexpr std::size_t kWays = 3;
  struct alignas(64) Slot {
    const char* key = nullptr;
    const char* text[kWays] = {};
    std::uint32_t id[kWays] = {};
  };
  Slot slots[kSlots];
  __attribute__((always_inline)) std::uint32_t lookup(const char* s) {
    if (s == nullptr) return null_name();
    Slot& slot = slots[slot_of(s)];
    if (slot.key == s && same_text(slot.text[0], s)) return slot.id[0];
    return miss(s, slot);
  }
  // s[1] is read only when s[0] is not the end.
  __attribute__((always_inline)) static std::size_t slot_of(const char* s) {
    const auto c0 = static_cast<unsigned char>(s[0]);
    const unsigned c1 = c0 != 0 ? static_cast<unsigned char>(s[1]) : 0u;
    return ((reinterpret_cast<std::uintptr_t>(s) >> 4) ^ (c0 * 7u) ^ (c1 * 43u)) & (kSlots - 1);
  }
  // Whether the caller's string s still holds the interned text. strcmp reads s only up to its
  // NUL or the first difference: a caller's buffer may be shorter than our text, end at the edge
  // of a page or of an allocation, or have been reused for other text. (A wider hand-made compare
  // reads past the NUL of s: harmless on hardware within a page, but out of bounds for the
  // language and for ASan/TSan.) glibc's vectorised strcmp is cheap for the short names Kokkos
  // passes.
  static bool same_text(const char* text, const char* s) { return std::strcmp(text, s) == 0; }

 private:
  KOB_SLOW_PATH static std::uint32_t null_name();
  KOB_SLOW_PATH std::uint32_t miss(const char* s, Slot& slot);
};

}  // namespace kob
