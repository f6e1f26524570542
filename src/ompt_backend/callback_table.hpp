// One row per OMPT callback we register: which event, our function, the --events group that
// wants it. The registration code walks these tables; callbacks live next to their tables.
#pragma once

#include <cstdint>
#include <span>

#include <omp-tools.h>

namespace kob::omp {

struct CallbackEntry {
  ompt_callbacks_t event;
  const char* name;
  ompt_callback_t fn;
  std::uint32_t groups;  // registered when any of these groups is recorded
};

std::span<const CallbackEntry> host_callbacks();
std::span<const CallbackEntry> target_callbacks();

}  // namespace kob::omp
