// The process-wide flags that every hook and callback reads, together in one cache line: between
// a region's events the kernel's data evicts ours, and each line an event touches is a miss.
#pragma once

#include <atomic>
#include <cstdint>

namespace kob {

struct alignas(64) HotFlags {
  // The event groups being recorded (the session sets them from Config::events before the program
  // runs; every group until then).
  std::atomic<std::uint32_t> events{~0u};
  // The clock (clock.hpp): set once before any event is recorded; true only when the TSC is
  // invariant (same rate on every core, through sleep states), so that ticks from different
  // threads are comparable.
  bool use_tsc = false;
  // A Kokkos tool runs beside this library (kokkos_hooks/kokkos_chain): the Kokkos hooks take their
  // slow way, which passes each hook on.
  bool kokkos_chained = false;
};

// In HotFlags::events beside the groups: Kokkos events are recorded and no Kokkos tool runs beside
// this library. The Kokkos hooks' one test; without it they take their slow way (kokkos_chain).
constexpr std::uint32_t kHotKokkosDirect = 1u << 31;

extern constinit HotFlags g_hot;

}  // namespace kob
