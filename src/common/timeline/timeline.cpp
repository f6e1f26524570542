#include "common/timeline/timeline.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "common/timeline/name_filter.hpp"
#include "common/timeline/thread_merge.hpp"
#include "common/timeline/timeline_builder.hpp"

namespace kob {

CodeRange parse_code_range(const std::string& range) {
  CodeRange r;
  const std::size_t dash = range.find('-');
  if (dash != std::string::npos && dash > 0 && dash + 1 < range.size() &&
      range.find_first_not_of("0123456789abcdefABCDEF-") == std::string::npos && range.find('-', dash + 1) == std::string::npos) {
    try {
      r.start = std::stoull(range.substr(0, dash), nullptr, 16);
      r.end = std::stoull(range.substr(dash + 1), nullptr, 16);
    } catch (...) {
      r = {};
    }
  }
  if (r.empty()) r = {};
  return r;
}

std::string format_code_range(const CodeRange& range) {
  if (range.empty()) return "";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%llx-%llx", static_cast<unsigned long long>(range.start), static_cast<unsigned long long>(range.end));
  return buf;
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

Timeline build_timeline(const std::vector<const ThreadSource*>& threads, int initial_device_num, bool ended_cleanly,
                        CodeRange omp_runtime_code) {
  TimelineCollector collected;
  TimelineBuilder builder(collected, initial_device_num, omp_runtime_code);
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
