// One fixed-size event record: the only thing the hot path writes.
#pragma once

#include <cstdint>

namespace kob {

// Record types. Begin/end pairs are matched at the end of the run, never on the hot path.
enum class Ev : std::uint16_t {
  None = 0,
  // Kokkos
  KernelBegin,     // sub=KernelKind a=name u0=id u1=devid
  KernelEnd,       // u0=id
  FenceBegin,      // a=name u0=id u1=devid
  FenceEnd,        // u0=id
  RegionPush,      // a=name
  RegionPop,       //
  SectionCreate,   // a=name u0=section id
  SectionStart,    // u0=section id
  SectionStop,     // u0=section id
  SectionDestroy,  // u0=section id
  Alloc,           // a=space u0=name u1=ptr u2=bytes u3=alloc id
  Dealloc,         // a=space u0=name u1=ptr u2=bytes
  DeepCopyBegin,   // a=dst space u0=id u1=dst name u2=src space u3=src name u4=bytes u5=dst ptr
  DeepCopyEnd,     // u0=id
  ProfileEvent,    // a=name
  DualView,        // sub=1 modify / 0 sync, a=name u0=ptr u1=on_device
  // OpenMP (OMPT); fields documented next to the callbacks that write them.
  OmpFirst = 64,
};

enum class KernelKind : std::uint16_t { ParallelFor = 0, ParallelReduce = 1, ParallelScan = 2 };

// 64 bytes, one cache line: wide enough for a deep copy in one record, so no event ever spans two.
struct alignas(64) Record {
  std::uint64_t tick;  // raw clock ticks; converted to ns at the end
  Ev type;
  std::uint16_t sub;
  std::uint32_t a;
  std::uint64_t u[6];
};
static_assert(sizeof(Record) == 64, "records must stay one cache line");

}  // namespace kob
