// Interned strings: every name in a record is a 32-bit id into one process-wide table.
#pragma once

#include <cstdint>
#include <cstring>
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

  std::uint32_t lookup(const char* s) {
    if (s == nullptr) return null_name();
    Slot& slot = slots[(reinterpret_cast<std::uintptr_t>(s) >> 4) & (kSlots - 1)];
    if (slot.key == s && std::strcmp(slot.text, s) == 0) return slot.id;
    return miss(s, slot);
  }

 private:
  static std::uint32_t null_name();
  std::uint32_t miss(const char* s, Slot& slot);
};

}  // namespace kob
