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
  // The entry (by event, in the same table) registered instead when the runtime answers never,
  // impossible or error for this one: the OpenMP 5.0 form of an EMI callback. 0: none.
  int fallback = 0;
  // Registered only as another entry's fallback, never on its own.
  bool fallback_only = false;
};

std::span<const CallbackEntry> host_callbacks();
std::span<const CallbackEntry> target_callbacks();

}  // namespace kob::omp
