// The run, reconstructed from all threads' records at the end: matched begin/end pairs with
// nanosecond times, region paths, memory levels. Writers and the summary read only this.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/record.hpp"
#include "common/recorder.hpp"

namespace kob {

struct Track {
  std::uint32_t index = 0;
  std::uint64_t os_tid = 0;
  int omp_thread_type = 0;
};

struct Interval {
  std::uint64_t start = 0;  // ns on the CLOCK_MONOTONIC_RAW time line
  std::uint64_t end = 0;
  std::uint32_t track = 0;  // index into Timeline::tracks
  std::uint64_t dur() const { return end - start; }
};

struct KernelSpan : Interval {
  std::uint64_t id = 0;
  std::uint32_t name = 0;
  KernelKind kind = KernelKind::ParallelFor;
  std::uint32_t devid = 0;
  std::string region;  // path of the innermost open region on the launching thread, or ""
};

struct FenceSpan : Interval {
  std::uint64_t id = 0;
  std::uint32_t name = 0;
  std::uint32_t devid = 0;
};

struct RegionSpan : Interval {
  std::uint32_t name = 0;
  std::string path;  // "a/b/c", this region last
  std::uint32_t depth = 0;
};

struct SectionSpan : Interval {
  std::uint32_t section = 0;
  std::uint32_t name = 0;
  std::uint32_t end_track = 0;
};

struct DeepCopySpan : Interval {
  std::uint64_t id = 0;
  std::uint32_t dst_space = 0, dst_name = 0, src_space = 0, src_name = 0;
  std::uint64_t bytes = 0;
};

struct MemoryEvent {
  std::uint64_t time = 0;
  std::uint32_t track = 0;
  bool alloc = true;
  std::uint32_t space = 0, name = 0;
  std::uint64_t ptr = 0, bytes = 0;
  std::uint64_t space_level = 0;  // bytes allocated in that space after this event
};

struct InstantEvent {
  std::uint64_t time = 0;
  std::uint32_t track = 0;
  std::uint32_t name = 0;
};

struct DualViewEvent : InstantEvent {
  bool modify = false;
  bool on_device = false;
  std::uint64_t ptr = 0;
};

struct Timeline {
  std::vector<Track> tracks;
  std::vector<KernelSpan> kernels;
  std::vector<FenceSpan> fences;
  std::vector<RegionSpan> regions;
  std::vector<SectionSpan> sections;
  std::vector<DeepCopySpan> deep_copies;
  std::vector<MemoryEvent> memory;  // sorted by time
  std::vector<InstantEvent> events;
  std::vector<DualViewEvent> dual_views;
  std::uint64_t t0 = 0;        // earliest event, ns
  std::uint64_t t_end = 0;     // latest event, ns
  std::uint64_t dropped = 0;   // events lost to the memory cap
  std::vector<std::string> problems;  // odd hook orders, unknown ids...: one line each
  std::uint64_t filtered_kernels = 0, filtered_regions = 0;
};

// Reads the given threads' records (normally recorder::threads()).
Timeline build_timeline(const std::vector<ThreadBuffer*>& threads);

// Drops kernels and regions by name: keep those matching include (if set) and not exclude.
void filter_timeline(Timeline& t, const std::string& include, const std::string& exclude);

}  // namespace kob
