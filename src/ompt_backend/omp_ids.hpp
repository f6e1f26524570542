// What we keep in the runtime's ompt_data_t words. 64 bits must carry both our id and the
// Kokkos kernel the region or task belongs to, so that worker threads can name it without a
// lookup: kernel id in the high 32 bits, our id in the low 31, bit 31 marks explicit tasks.
#pragma once

#include <cstdint>

#include <omp-tools.h>

namespace kob::omp {

constexpr std::uint64_t kExplicitTaskBit = 1ull << 31;
constexpr std::uint64_t kIdMask = kExplicitTaskBit - 1;

inline std::uint64_t pack(std::uint64_t kernel, std::uint64_t id) { return (kernel << 32) | (id & kIdMask); }
inline std::uint64_t pack_task(std::uint64_t kernel, std::uint64_t id) { return pack(kernel, id) | kExplicitTaskBit; }

inline std::uint64_t kernel_of(const ompt_data_t* d) { return d ? d->value >> 32 : 0; }
inline std::uint64_t id_of(const ompt_data_t* d) { return d ? d->value & kIdMask : 0; }
// Our explicit-task id, or 0 when d is an implicit or initial task.
inline std::uint64_t task_id_of(const ompt_data_t* d) {
  return d && (d->value & kExplicitTaskBit) ? d->value & kIdMask : 0;
}

}  // namespace kob::omp
