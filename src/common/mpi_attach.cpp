#include "common/mpi_attach.hpp"

#include <dlfcn.h>

#include "common/log.hpp"
#include "common/mpi_bridge.hpp"
#include "common/session.hpp"

namespace kob::mpi_attach {

namespace {

void clock_sync(std::int32_t phase, std::int32_t rank, std::int32_t size, std::int64_t local_ns, std::int64_t offset_ns,
                std::int64_t rtt_ns) {
  session::mpi_clock_sync(phase == kob_mpi_clock_end, rank, size, local_ns, offset_ns, rtt_ns);
}

void finalizing() { session::mpi_finalizing(); }

// Static: the layer keeps the pointer to the end of the process.
const kob_mpi_tool g_table = {1, sizeof(kob_mpi_tool), clock_sync, finalizing, nullptr, nullptr};

}  // namespace

bool attach() {
  // The layer is LD_PRELOADed, so in the global scope even when we were dlopen'ed RTLD_LOCAL.
  auto fn = reinterpret_cast<kob_mpi_layer_attach_fn>(dlsym(RTLD_DEFAULT, "kob_mpi_layer_attach"));
  if (fn == nullptr) return false;
  const bool ok = fn(&g_table) == 1;
  log::debug(ok ? "attached to the PMPI layer (libkob_mpi.so)" : "the PMPI layer refused the tool's table");
  return ok;
}

}  // namespace kob::mpi_attach
