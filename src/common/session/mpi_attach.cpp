#include "common/session/mpi_attach.hpp"

#include <dlfcn.h>

#include "common/record/clock.hpp"
#include "common/support/log.hpp"
#include "common/session/mpi_bridge.hpp"
#include "common/record/record_fields.hpp"
#include "common/record/recorder.hpp"
#include "common/session/session.hpp"

namespace kob::mpi_attach {

namespace {

void clock_sync(std::int32_t phase, std::int32_t rank, std::int32_t size, std::int64_t local_ns, std::int64_t offset_ns,
                std::int64_t rtt_ns) {
  session::mpi_clock_sync(phase == kob_mpi_clock_end, rank, size, local_ns, offset_ns, rtt_ns);
}

void finalizing() { session::mpi_finalizing(); }

// The hot path, around every wrapped MPI call: one record each in this thread's buffer, as the
// Kokkos and OMPT hooks do (no lock, no allocation, no system call once the thread has its buffer).
void mpi_begin(std::uint32_t call) {
  const std::uint64_t t = clock::now();
  this_thread().emit([&](Record& r) {
    r.tick = t;
    r.type = Ev::MpiBegin;
    fields::Mpi::call.set(r, static_cast<std::uint16_t>(call));
  });
}

void mpi_end(std::uint32_t call, std::uint64_t bytes, std::int32_t peer) {
  const std::uint64_t t = clock::now();
  this_thread().emit([&](Record& r) {
    r.tick = t;
    r.type = Ev::MpiEnd;
    fields::Mpi::call.set(r, static_cast<std::uint16_t>(call));
    fields::Mpi::peer.set(r, peer);
    fields::Mpi::bytes.set(r, bytes);
  });
}

// Static: the layer keeps the pointer to the end of the process.
const kob_mpi_tool g_table = {1, sizeof(kob_mpi_tool), clock_sync, finalizing, mpi_begin, mpi_end};

}  // namespace

bool attach() {
  // The layer is LD_PRELOADed, so in the global scope even when we were dlopen'ed RTLD_LOCAL.
  auto fn = reinterpret_cast<kob_mpi_layer_attach_fn>(dlsym(RTLD_DEFAULT, "kob_mpi_layer_attach"));
  if (fn == nullptr) return false;
  const bool ok = fn(&g_table) == 1;
  log::debug(ok ? "attached to the PMPI layer (libkob_mpi_<family>.so)" : "the PMPI layer refused the tool's table");
  return ok;
}

}  // namespace kob::mpi_attach
