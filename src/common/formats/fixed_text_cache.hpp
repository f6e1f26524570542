// Values the trace writers keep for texts that never change at their address while a process's
// trace is written (Event::name_fixed, Arg::fixed): found by address and length (and, for values
// that depend on it, a second address such as a category) without reading the text. Direct-mapped
// and hashed: the texts lie anywhere in memory, and an index of low address bits let a few of them
// evict each other at every event. A later process's texts may sit at the same addresses: clear()
// between processes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace kob::trace {

template <class V, unsigned Bits>
class FixedTextCache {
 public:
  struct Slot {
    const char* p = nullptr;
    std::size_t n = 0;
    const void* key = nullptr;
    V value{};
  };

  // s's slot; `had` says whether it holds s (with key): else the caller fills it through fill().
  Slot& slot(std::string_view s, bool& had, const void* key = nullptr) {
    const std::uint64_t h = (reinterpret_cast<std::uintptr_t>(s.data()) ^ s.size() ^ (reinterpret_cast<std::uintptr_t>(key) << 17)) *
                            0x9E3779B97F4A7C15ull;
    Slot& sl = slots_[h >> (64 - Bits)];
    had = sl.p == s.data() && sl.n == s.size() && sl.key == key && sl.p != nullptr;
    return sl;
  }
  static void fill(Slot& sl, std::string_view s, const void* key, V value) { sl = {s.data(), s.size(), key, std::move(value)}; }
  void clear() {
    for (Slot& sl : slots_) sl.p = nullptr;
  }

 private:
  std::vector<Slot> slots_ = std::vector<Slot>(std::size_t{1} << Bits);
};

}  // namespace kob::trace
