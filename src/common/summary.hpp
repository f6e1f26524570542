// End-of-run figures computed from the timeline; printed as text and written as JSON.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/timeline.hpp"

namespace kob {

struct KernelStats {
  std::string name;
  std::string kind;
  std::string device;
  std::uint64_t calls = 0, total = 0, min = 0, max = 0;
  std::uint64_t mean() const { return calls ? total / calls : 0; }
};

struct RegionStats {
  std::string path, name;
  std::uint32_t depth = 0;
  std::uint64_t calls = 0;
  std::uint64_t inclusive = 0;  // ns in the region
  std::uint64_t exclusive = 0;  // inclusive minus time in its child regions
};

struct MemoryStats {
  std::string space;
  std::uint64_t allocations = 0, deallocations = 0;
  std::uint64_t bytes_allocated = 0;  // sum over allocations
  std::uint64_t high_water = 0;       // most bytes allocated at once
  std::uint64_t final_level = 0;      // still allocated at the end
};

struct CopyStats {
  std::string dst_space, src_space;
  std::uint64_t calls = 0, bytes = 0, time = 0;
  double gb_per_s() const { return time ? double(bytes) / double(time) : 0.0; }  // bytes/ns = GB/s
};

struct NamedStats {
  std::string name;
  std::uint64_t calls = 0, total = 0;
};

struct Summary {
  std::uint64_t run_time = 0;  // first to last event, ns
  std::vector<KernelStats> kernels;  // by total time, largest first
  std::vector<RegionStats> regions;  // tree order (by path)
  std::vector<MemoryStats> memory;
  std::vector<CopyStats> copies;
  std::vector<NamedStats> fences;
  std::vector<NamedStats> sections;  // calls = intervals
  std::uint64_t profile_events = 0, dual_view_syncs = 0, dual_view_modifies = 0;
  std::uint64_t dropped = 0;
  std::uint64_t filtered_kernels = 0, filtered_regions = 0;
  std::vector<std::string> problems;
};

const char* kernel_kind_name(KernelKind k);

Summary summarize(const Timeline& t);

// Human-readable tables.
std::string summary_text(const Summary& s, const std::string& title);
// The same figures as a JSON document.
std::string summary_json(const Summary& s, const std::string& other_data_json);

}  // namespace kob
