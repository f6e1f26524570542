#include "common/timeline.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "common/name_filter.hpp"
#include "common/timeline_builder.hpp"

namespace kob {

namespace {

// The runtime's code range [start, end); 0, 0: unknown.
std::atomic<std::uint64_t> g_omp_code_start{0}, g_omp_code_end{0};

// The range spanned by the mappings of the file mapped at `address` (every segment of the loaded
// object); false when it is no file, or the executable itself (the runtime linked into it shares
// its object with the user's code).
bool loaded_object_range(std::uint64_t address, std::uint64_t& start, std::uint64_t& end) {
  struct Map {
    std::uint64_t lo, hi, inode;
    std::string dev, path;
  };
  std::vector<Map> maps;
  std::ifstream in("/proc/self/maps");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string range, perms, offset, dev, path;
    std::uint64_t inode = 0;
    if (!(ls >> range >> perms >> offset >> dev >> inode)) continue;
    std::getline(ls >> std::ws, path);
    const std::size_t dash = range.find('-');
    if (dash == std::string::npos) continue;
    maps.push_back({std::stoull(range.substr(0, dash), nullptr, 16), std::stoull(range.substr(dash + 1), nullptr, 16),
                    inode, dev, path});
  }
  const auto at = std::find_if(maps.begin(), maps.end(), [&](const Map& m) { return m.lo <= address && address < m.hi; });
  if (at == maps.end() || at->inode == 0) return false;
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0 && at->path == std::string(exe, static_cast<std::size_t>(n))) return false;
  start = at->lo;
  end = at->hi;
  for (const Map& m : maps)
    if (m.inode == at->inode && m.dev == at->dev) {
      start = std::min(start, m.lo);
      end = std::max(end, m.hi);
    }
  return true;
}

}  // namespace

void set_omp_runtime_function(const void* fn) {
  std::uint64_t start = 0, end = 0;
  try {
    if (fn == nullptr || !loaded_object_range(reinterpret_cast<std::uint64_t>(fn), start, end)) start = end = 0;
  } catch (...) {
    start = end = 0;
  }
  g_omp_code_start.store(start, std::memory_order_relaxed);
  g_omp_code_end.store(end, std::memory_order_relaxed);
}

std::string omp_runtime_code_range() {
  const std::uint64_t start = g_omp_code_start.load(std::memory_order_relaxed), end = g_omp_code_end.load(std::memory_order_relaxed);
  if (start >= end) return "";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%llx-%llx", static_cast<unsigned long long>(start), static_cast<unsigned long long>(end));
  return buf;
}

void set_omp_runtime_code_range(const std::string& range) {
  std::uint64_t start = 0, end = 0;
  const std::size_t dash = range.find('-');
  if (dash != std::string::npos && dash > 0 && dash + 1 < range.size() &&
      range.find_first_not_of("0123456789abcdefABCDEF-") == std::string::npos && range.find('-', dash + 1) == std::string::npos) {
    try {
      start = std::stoull(range.substr(0, dash), nullptr, 16);
      end = std::stoull(range.substr(dash + 1), nullptr, 16);
    } catch (...) {
      start = end = 0;
    }
  }
  if (start >= end) start = end = 0;
  g_omp_code_start.store(start, std::memory_order_relaxed);
  g_omp_code_end.store(end, std::memory_order_relaxed);
}

bool omp_runtime_code(std::uint64_t address) {
  return address != 0 && g_omp_code_start.load(std::memory_order_relaxed) <= address &&
         address < g_omp_code_end.load(std::memory_order_relaxed);
}

bool host_device(int device_num, int initial_device_num, const std::vector<int>& initialised_devices) {
  if (device_num == kHostDevice) return true;
  if (!initialised_devices.empty())
    return std::find(initialised_devices.begin(), initialised_devices.end(), device_num) == initialised_devices.end();
  return device_num == initial_device_num;
}

const char* loss_reason_name(LossReason r) {
  switch (r) {
    case LossReason::RingFull: return "ring full (the writer thread fell behind)";
    case LossReason::WriteFailed: return "write failed (disk full?)";
    case LossReason::TraceSizeCap: return "--max-trace-size reached";
    default: return "unknown";
  }
}

Timeline build_timeline(const std::vector<const ThreadSource*>& threads, int initial_device_num, bool ended_cleanly) {
  TimelineCollector collected;
  TimelineBuilder builder(collected, initial_device_num);
  read_threads(threads, builder);
  builder.finish(ended_cleanly);
  return collected.take();
}

void filter_timeline(Timeline& t, const std::string& include, const std::string& exclude) {
  NameFilter filter(include, exclude);
  if (!filter.active()) return;
  auto keep = [&](std::uint32_t name) { return filter.keep(name); };
  const auto nk = t.kernels.size(), nr = t.regions.size();
  t.kernels.erase(std::remove_if(t.kernels.begin(), t.kernels.end(), [&](const KernelSpan& k) { return !keep(k.name); }),
                  t.kernels.end());
  t.regions.erase(std::remove_if(t.regions.begin(), t.regions.end(), [&](const RegionSpan& r) { return !keep(r.name); }),
                  t.regions.end());
  t.filtered_kernels = nk - t.kernels.size();
  t.filtered_regions = nr - t.regions.size();
}

}  // namespace kob
