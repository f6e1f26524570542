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

// Per-thread cache keyed by the caller's pointer. A hit is confirmed with strcmp against the
// interned text, because callers (Kokkos) often hand us a temporary buffer at a reused address.
struct InternCache {
  static constexpr std::size_t kSlots = 256;
  struct Slot {
    const char* key = nullptr;
    const char* text = nullptr;
    std::uint32_t id = 0;
  };
  Slot slots[kSlots];

  __attribute__((always_inline)) std::uint32_t lookup(const char* s) {
    if (s == nullptr) return null_name();
    Slot& slot = slots[(reinterpret_cast<std::uintptr_t>(s) >> 4) & (kSlots - 1)];
    if (slot.key == s && same_text(slot.text, s)) return slot.id;
    return miss(s, slot);
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
