// The summary made one program thread at a time (issue 42): each thread's chunks are decoded and
// matched on its own stacks into its own figures (thread_fold.hpp), with no merge of all threads'
// events by time; what crosses threads is joined by id: a parallel region's team (its implicit
// tasks, on other threads, cut at the region's end when libomp reports a worker's end late) by
// parallel id into a flat table indexed by id minus a base, a region's Kokkos kernel by the part
// its thread keeps. The few facts that need the order of all threads (the memory levels, the
// constructs table's first-seen order, whether a kernel ran during a parallel region) are merged
// by time alone, from small lists.
//
// The threads are read in epochs (time slices planned from the chunks' first ticks), so that what
// waits for a join is bounded by what an epoch holds open, not by the run. The figures go into a
// SummaryFold's state and come out of its finish(): the same Summary as the timeline builder's
// stream gives, for the runs the engine covers (ThreadFold). For the others it declines and the
// caller takes the builder's path.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/analysis/summary.hpp"
#include "common/timeline/thread_source.hpp"
#include "common/timeline/timeline.hpp"

namespace kob {

class SourceResolver;
struct CallTimes;
class NameFilter;

struct EngineRun {
  std::vector<const ThreadSource*> threads;
  bool ended_cleanly = true;
  std::uint64_t run_end = 0;     // ns; 0: the last event
  CodeRange omp_runtime_code;     // the OpenMP runtime's own code (its hidden-helper team)
  SourceResolver* sources = nullptr;  // the constructs table's locations (nullptr: no table)
  std::uint32_t available_threads = 0;
  std::size_t epoch_chunks = 0;   // chunks an epoch holds (over all threads); 0: the default
  unsigned jobs = 1;              // threads that fold an epoch's program threads side by side (the caller's included)
  CallTimes* calls = nullptr;     // every call's time too (kob diff), as SummaryFold::set_call_times; filled only when the engine covers the run
  NameFilter* filter = nullptr;   // --include/--exclude (FilterSink's): kernels and regions left out by name; nullptr: none
  int initial_device_num = -1;    // the host's device number as the OMPT initializer gave it (TargetMatcher)
  bool damaged = false;           // blocks lost to damage or a write cut short: a team may come short
};

// The run's summary, or nothing when the run holds what the engine does not cover (why, if
// given, says what): the caller then builds it through the timeline builder.
std::optional<Summary> summarize_per_thread(const EngineRun& run, std::string* why = nullptr);

// Which engine makes a summary, from KOB_ENGINE: unset, the per-thread engine where it covers the
// run, silently; "builder", the timeline builder always (the tests compare the two);
// "per-thread", as unset but a run it declines is said on stderr with why (the tests check
// that it covered a run).
enum class EngineChoice { Auto, Builder, PerThread };
EngineChoice engine_choice();

}  // namespace kob
