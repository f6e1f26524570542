// The process's one recorder session: configuration, who is attached (Kokkos, the OpenMP
// runtime), and the single moment the output is written.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/record/hot_flags.hpp"
#include "common/session/config.hpp"

namespace kob {

// Whether an event group (Config::events) is being recorded; read on the hot path.
inline bool recording(std::uint32_t group) { return (g_hot.events.load(std::memory_order_relaxed) & group) != 0; }

static_assert((kGroupAll & kHotKokkosDirect) == 0, "the direct bit is not a group");
// The Kokkos hooks' test (hot_flags.hpp, kHotKokkosDirect).
inline bool kokkos_direct() { return (g_hot.events.load(std::memory_order_relaxed) & kHotKokkosDirect) != 0; }

// True when --device-trace-region is set.
extern std::atomic<bool> g_device_trace_region_set;

// Follows Kokkos regions on every thread (device tracing's --device-trace-region): registered by
// the component that needs it, so that the Kokkos hooks call it without knowing it. The hooks read
// g_region_listener, the registered listener while --device-trace-region is set and null
// otherwise (one predictable branch per region hook when it is null).
struct RegionListener {
  void (*push)(const char* name);
  void (*pop)();
};
extern std::atomic<const RegionListener*> g_region_listener;
namespace session {
// Registers the listener (once, before the program runs: from a static initialiser). Safe before
// the session has started.
void set_region_listener(const RegionListener* listener);
}  // namespace session

struct KokkosInfo {
  bool initialised = false;
  bool finalised = false;
  int load_sequence = 0;
  std::uint64_t interface_version = 0;
  std::vector<std::uint64_t> device_ids;
};

namespace session {

// Reads KOB_ARGS and KOKKOS_TOOLS_ARGS, starts the clock, arranges the write at exit. Idempotent
// and thread-safe; every entry point of the library calls it first.
void ensure_started();
const Config& config();

// For callbacks that a runtime's own fork handler may call in the child (OMPT thread_begin):
// when that handler runs before ours, does our child-side fork work first. Nothing otherwise.
void after_fork_check();

// Options from the program's command line (kokkosp_parse_args): applied over the environment.
void apply_command_line(const std::vector<std::string>& args);

void kokkos_initialised(int load_sequence, std::uint64_t interface_version, std::vector<std::uint64_t> device_ids);
void kokkos_finalised();
// Whether a Kokkos tool runs beside this library (kokkos_hooks/kokkos_chain): the Kokkos hooks then
// take their slow way.
void set_kokkos_chained(bool chained);
const KokkosInfo& kokkos();

// The OpenMP runtime side: started in ompt_start_tool, finalised by the runtime.
void ompt_started(const std::string& runtime_version);
void ompt_finalised();
bool ompt_active();
// The OpenMP runtime's code range (timeline.hpp CodeRange's text): a fact of the run, in the raw
// trace too.
void set_omp_runtime_code(const std::string& range);
// The host's device number given to the OMPT initializer (-1 until then), for the timeline.
void set_omp_initial_device(int device_num);
int omp_initial_device();

// The PMPI layer (libkob_mpi_<family>.so, mpi_attach.hpp), when preloaded: this rank's clock against rank
// 0's measured after MPI_Init (end false) or before MPI_Finalize (end true); then MPI_Finalize is
// under way. While the layer is attached and MPI is not finalising yet, the files are written at
// mpi_finalizing (or at exit) instead of at Kokkos or OMPT finalize, so that they hold the end
// offsets. Neither starts the session (the layer may call them from inside its start).
void mpi_clock_sync(bool end, int rank, int size, std::int64_t local_ns, std::int64_t offset_ns, std::int64_t rtt_ns);
void mpi_finalizing();

// Key/value facts for otherData (Kokkos metadata, OMPT registration results...). Thread-safe.
void add_metadata(const std::string& key, const std::string& value);
void add_other_data(const std::string& section, const std::string& key, const std::string& value);
std::vector<std::pair<std::string, std::string>> metadata();
std::vector<std::pair<std::string, std::string>> other_data(const std::string& section);

// Called once, first thing in write_outputs: lets a backend add late facts (runtime queries that
// only answer once the runtime is fully up).
void set_before_write(void (*fn)());

// Writes the configured files exactly once per process; later calls do nothing.
void write_outputs();
// Kokkos' --kokkos-tools-help: the help was printed and Kokkos ends the program; there is no
// run to report, so write_outputs writes no file and prints nothing.
void help_run();
bool outputs_written();

// The prefix the files get: --output with its placeholders expanded (and -r<rank> / -<pid> added
// when it cannot tell this process from others), else kob-<exe>-<pid>[-r<rank>] (output_name.hpp).
std::string output_prefix();
// MPI rank from the launcher's environment, or -1.
int mpi_rank();
// Absolute path of this library, for hints.
std::string library_path();
// Wall-clock time at start, ISO 8601 UTC.
std::string start_time_iso();

}  // namespace session
}  // namespace kob
