// Turning a run's threads and facts into the output files: shared by the library at its exit and
// by `kob convert`, so that both give the same files from the same raw trace.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/session/config.hpp"
#include "common/timeline/raw_reader.hpp"
#include "common/analysis/call_times.hpp"
#include "common/analysis/summary.hpp"
#include "common/timeline/thread_source.hpp"
#include "common/formats/trace_events.hpp"
#include "common/formats/trace_producer.hpp"

namespace kob {

namespace sqlite {
class DatabaseSink;
}

// Facts about the run as (section, key, value), the raw trace's KV entries (docs/raw-format.md):
// `meta` the Kokkos metadata, `other:NAME` an otherData section, `kob` the facts below. Later
// entries win over earlier ones of the same section and key; order of first appearance is kept.
using Facts = std::vector<raw::Kv>;

// Keys of section `kob`.
namespace fact {
constexpr std::string_view kSection = "kob";
constexpr std::string_view kToolVersion = "tool_version", kPid = "pid", kRank = "rank", kHost = "host", kExe = "exe",
                           kStartTime = "start_time", kClock = "clock", kEvents = "events", kFormats = "formats",
                           kInclude = "include", kExclude = "exclude", kMemoryLimit = "memory_limit_mib",
                           kKokkosInterface = "kokkos_interface_version", kKokkosLoadSequence = "kokkos_load_sequence",
                           kKokkosDevices = "kokkos_devices", kOmpRuntime = "openmp_runtime",
                           kOmpInitialDevice = "omp_initial_device", kHelpRun = "help_run", kArgs = "args",
                           kOmpRuntimeCode = "omp_runtime_code", kWallReference = "wall_reference";
// From the PMPI layer (libkob_mpi_<family>.so): MPI_COMM_WORLD rank and size, and this rank's clock against
// rank 0's after MPI_Init and before MPI_Finalize, each "LOCAL_NS OFFSET_NS RTT_NS".
constexpr std::string_view kMpiRank = "mpi_rank", kMpiSize = "mpi_size", kMpiClockStart = "mpi_clock_start",
                           kMpiClockEnd = "mpi_clock_end";
}  // namespace fact

// The value last given to section/key, or fallback.
std::string fact_value(const Facts& facts, std::string_view section, std::string_view key, const std::string& fallback = "");

// The configuration the conversion needs (formats, filters, memory cap, events) as `kob` facts, and
// back: a Config with the options of `args` (one per line, as given to the tool) and then those
// facts applied over the defaults.
void add_config_facts(const Config& c, Facts& out);
Config config_from_facts(const Facts& facts);

// The Chrome trace's and the summary's otherData object.
std::string other_data_json(const Facts& facts, const Summary& sum);
// The process as the trace names it: executable, and rank when known.
std::string process_name(const Facts& facts);

struct RunData {
  std::vector<const ThreadSource*> threads;
  bool ended_cleanly = true;  // false: spans still open are cut (build_timeline)
  std::uint64_t run_end = 0;  // ns; 0: the last event
  int initial_device_num = -1;
  // The raw trace had no damage when it was opened (no block lost, no write cut short): else the
  // per-thread engine declines the orders only lost records explain (EngineRun::damaged).
  bool intact = true;
};

struct OutputRequest {
  std::string prefix;     // files are PREFIX.trace.json, ...
  std::string directory;  // created first when not empty
  bool directory_reported = false;  // a failure to create it was already reported (no second line)
  std::uint32_t formats = kFormatDefault;
  bool print_summary = false;  // on stderr (the library, unless --quiet)
  bool print_written = true;   // the last line naming the files written
  bool next_step = false;      // that line says what to do next (next_step()): the library's
  std::string raw_trace;       // the raw trace beside them (the library's), for that next step
  std::size_t trace_window = 0;  // spans per trace window (trace_window.hpp); 0: the default
  // Threads making the trace events (TraceInfo::jobs); 0: idle_cores() - 1 (the thread reading the
  // records keeps one), at least 1, at most kMaxJobs.
  unsigned jobs = 0;
  static constexpr unsigned kMaxJobs = 16;
  std::string* summary_text_out = nullptr;  // receives the text summary (kob summary), formats or not
};

// kob merge: streams one run through the timeline builder into sink, as the trace files get it
// (the producer's process, tracks, windows and finish), and returns its summary, the figures its
// summary files would hold. Memory as for the trace files: a window at a time. With db, the run's
// spans are rows of that database too (its rank, times moved by align onto the merged time line).
Summary stream_run(const RunData& run, const Facts& facts, trace::TraceSink& sink, const TraceInfo& info,
                   sqlite::DatabaseSink* db = nullptr, std::function<std::uint64_t(std::uint64_t)> align = {});

// kob diff: the run's summary alone (the figures its summary files would hold), no trace built;
// with calls, every call's time too (its noise model).
Summary summarize_run(const RunData& run, const Facts& facts, CallTimes* calls = nullptr);

// Builds the timeline and writes the requested files, each whole or not at all; problems are one
// line each on stderr. Returns the paths written; *ok (if given) false when one could not be.
std::vector<std::string> write_run_outputs(const RunData& run, const Facts& facts, const OutputRequest& req, bool* ok = nullptr);

// What to do with the files written, for the line naming them: " (next: open PREFIX.html in a
// browser)", "... kob report PREFIX, or PREFIX.pftrace at https://ui.perfetto.dev", "" when the
// files hold neither a raw trace nor a trace.
std::string next_step(const std::vector<std::string>& written);

}  // namespace kob
