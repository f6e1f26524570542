#include "common/support/idle_cores.hpp"

#include <sched.h>

#include <cstdlib>
#include <thread>

namespace kob {

namespace {
unsigned positive_env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return 0;
  char* end = nullptr;
  const unsigned long n = std::strtoul(v, &end, 10);
  return end != nullptr && *end == '\0' && n > 0 && n < 1u << 20 ? static_cast<unsigned>(n) : 0;
}
}  // namespace

unsigned idle_cores() {
  unsigned cores = 0;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) cores = static_cast<unsigned>(CPU_COUNT(&set));
  if (cores == 0) cores = std::thread::hardware_concurrency();
  if (cores == 0) cores = 1;
  unsigned ranks = 0;
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"})
    if ((ranks = positive_env(name)) != 0) break;
  if (ranks > 1) cores = cores / ranks;
  return cores == 0 ? 1 : cores;
}

}  // namespace kob
