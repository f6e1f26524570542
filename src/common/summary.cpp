#include "common/summary.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

#include "common/devid.hpp"
#include "common/intern.hpp"
#include "common/json.hpp"

namespace kob {

const char* kernel_kind_name(KernelKind k) {
  switch (k) {
    case KernelKind::ParallelFor: return "parallel_for";
    case KernelKind::ParallelReduce: return "parallel_reduce";
    case KernelKind::ParallelScan: return "parallel_scan";
  }
  return "unknown";
}

Summary summarize(const Timeline& t) {
  const InternTable& names = kob::names();
  Summary s;
  s.run_time = t.t_end - t.t0;
  s.dropped = t.dropped;
  s.problems = t.problems;
  s.filtered_kernels = t.filtered_kernels;
  s.filtered_regions = t.filtered_regions;

  std::map<std::pair<std::uint32_t, KernelKind>, KernelStats> kernels;
  for (const KernelSpan& k : t.kernels) {
    KernelStats& st = kernels[{k.name, k.kind}];
    if (st.calls == 0) {
      st.name = names.str(k.name);
      st.kind = kernel_kind_name(k.kind);
      st.device = device_label(k.devid);
      st.min = k.dur();
    }
    ++st.calls;
    st.total += k.dur();
    st.min = std::min(st.min, k.dur());
    st.max = std::max(st.max, k.dur());
  }
  for (auto& [key, st] : kernels) s.kernels.push_back(st);
  std::stable_sort(s.kernels.begin(), s.kernels.end(), [](const KernelStats& a, const KernelStats& b) { return a.total > b.total; });

  // Exclusive time: walk each track's regions in start order with a stack of open ones.
  std::vector<const RegionSpan*> regs;
  for (const RegionSpan& r : t.regions) regs.push_back(&r);
  std::stable_sort(regs.begin(), regs.end(), [](const RegionSpan* a, const RegionSpan* b) {
    return std::tie(a->track, a->start) < std::tie(b->track, b->start) ||
           (a->track == b->track && a->start == b->start && a->end > b->end);
  });
  std::map<std::string, RegionStats> regions;
  std::vector<std::pair<const RegionSpan*, std::uint64_t>> stack;  // region, time in children
  auto close_top = [&] {
    const auto [r, child] = stack.back();
    stack.pop_back();
    RegionStats& st = regions[r->path];
    st.path = r->path;
    st.name = names.str(r->name);
    st.depth = r->depth;
    ++st.calls;
    st.inclusive += r->dur();
    st.exclusive += r->dur() - std::min(child, r->dur());
    if (!stack.empty()) stack.back().second += r->dur();
  };
  for (std::size_t i = 0; i < regs.size(); ++i) {
    const RegionSpan* r = regs[i];
    while (!stack.empty() && (stack.back().first->track != r->track || stack.back().first->end <= r->start)) close_top();
    stack.emplace_back(r, 0);
  }
  while (!stack.empty()) close_top();
  for (auto& [path, st] : regions) s.regions.push_back(st);

  std::map<std::uint32_t, MemoryStats> memory;
  for (const MemoryEvent& m : t.memory) {
    MemoryStats& st = memory[m.space];
    st.space = names.str(m.space);
    if (m.alloc) {
      ++st.allocations;
      st.bytes_allocated += m.bytes;
    } else {
      ++st.deallocations;
    }
    st.high_water = std::max(st.high_water, m.space_level);
    st.final_level = m.space_level;
  }
  for (auto& [space, st] : memory) s.memory.push_back(st);

  std::map<std::pair<std::uint32_t, std::uint32_t>, CopyStats> copies;
  for (const DeepCopySpan& d : t.deep_copies) {
    CopyStats& st = copies[{d.dst_space, d.src_space}];
    st.dst_space = names.str(d.dst_space);
    st.src_space = names.str(d.src_space);
    ++st.calls;
    st.bytes += d.bytes;
    st.time += d.dur();
  }
  for (auto& [key, st] : copies) s.copies.push_back(st);

  std::map<std::uint32_t, NamedStats> fences, sections;
  for (const FenceSpan& f : t.fences) {
    NamedStats& st = fences[f.name];
    st.name = names.str(f.name);
    ++st.calls;
    st.total += f.dur();
  }
  for (const SectionSpan& sec : t.sections) {
    NamedStats& st = sections[sec.name];
    st.name = names.str(sec.name);
    ++st.calls;
    st.total += sec.dur();
  }
  for (auto& [n, st] : fences) s.fences.push_back(st);
  for (auto& [n, st] : sections) s.sections.push_back(st);

  s.profile_events = t.events.size();
  for (const DualViewEvent& d : t.dual_views) ++(d.modify ? s.dual_view_modifies : s.dual_view_syncs);
  return s;
}

namespace {

std::string fmt_time(std::uint64_t ns) {
  char buf[32];
  if (ns < 10'000) {
    std::snprintf(buf, sizeof buf, "%llu ns", static_cast<unsigned long long>(ns));
  } else if (ns < 10'000'000) {
    std::snprintf(buf, sizeof buf, "%.1f us", double(ns) / 1e3);
  } else if (ns < 10'000'000'000ull) {
    std::snprintf(buf, sizeof buf, "%.1f ms", double(ns) / 1e6);
  } else {
    std::snprintf(buf, sizeof buf, "%.2f s", double(ns) / 1e9);
  }
  return buf;
}

std::string fmt_bytes(std::uint64_t b) {
  char buf[32];
  if (b < 10 * 1024) {
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(b));
  } else if (b < 10ull * 1024 * 1024) {
    std::snprintf(buf, sizeof buf, "%.1f KiB", double(b) / 1024);
  } else if (b < 10ull * 1024 * 1024 * 1024) {
    std::snprintf(buf, sizeof buf, "%.1f MiB", double(b) / (1024.0 * 1024));
  } else {
    std::snprintf(buf, sizeof buf, "%.2f GiB", double(b) / (1024.0 * 1024 * 1024));
  }
  return buf;
}

// Left-aligns the first column, right-aligns the others.
std::string table(const std::vector<std::vector<std::string>>& rows) {
  if (rows.empty()) return "";
  std::vector<std::size_t> width(rows[0].size(), 0);
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  std::string out;
  for (const auto& r : rows) {
    out += "  ";
    for (std::size_t i = 0; i < r.size(); ++i) {
      const std::string pad(width[i] - r[i].size(), ' ');
      out += i == 0 ? r[i] + pad : pad + r[i];
      out += i + 1 < r.size() ? "  " : "";
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += '\n';
  }
  return out;
}

}  // namespace

std::string summary_text(const Summary& s, const std::string& title) {
  std::string out = "== kokkos-ompt-bridge summary: " + title + " ==\n";
  out += "run time (first to last event): " + fmt_time(s.run_time) + "\n";
  if (!s.kernels.empty()) {
    out += "\nKokkos kernels\n";
    std::vector<std::vector<std::string>> rows{{"name", "kind", "device", "calls", "total", "mean", "min", "max"}};
    for (const auto& k : s.kernels)
      rows.push_back({k.name, k.kind, k.device, std::to_string(k.calls), fmt_time(k.total), fmt_time(k.mean()),
                      fmt_time(k.min), fmt_time(k.max)});
    out += table(rows);
  }
  if (!s.regions.empty()) {
    out += "\nKokkos regions (exclusive = inclusive minus child regions)\n";
    std::vector<std::vector<std::string>> rows{{"region", "calls", "inclusive", "exclusive"}};
    for (const auto& r : s.regions)
      rows.push_back({std::string(2 * r.depth, ' ') + r.name, std::to_string(r.calls), fmt_time(r.inclusive), fmt_time(r.exclusive)});
    out += table(rows);
  }
  if (!s.fences.empty()) {
    out += "\nKokkos fences\n";
    std::vector<std::vector<std::string>> rows{{"name", "calls", "total"}};
    for (const auto& f : s.fences) rows.push_back({f.name, std::to_string(f.calls), fmt_time(f.total)});
    out += table(rows);
  }
  if (!s.sections.empty()) {
    out += "\nKokkos profile sections\n";
    std::vector<std::vector<std::string>> rows{{"name", "intervals", "total"}};
    for (const auto& f : s.sections) rows.push_back({f.name, std::to_string(f.calls), fmt_time(f.total)});
    out += table(rows);
  }
  if (!s.memory.empty()) {
    out += "\nMemory spaces\n";
    std::vector<std::vector<std::string>> rows{{"space", "allocations", "deallocations", "allocated", "high-water", "at end"}};
    for (const auto& m : s.memory)
      rows.push_back({m.space, std::to_string(m.allocations), std::to_string(m.deallocations), fmt_bytes(m.bytes_allocated),
                      fmt_bytes(m.high_water), fmt_bytes(m.final_level)});
    out += table(rows);
  }
  if (!s.copies.empty()) {
    out += "\nDeep copies\n";
    std::vector<std::vector<std::string>> rows{{"dst <- src", "calls", "bytes", "time", "bandwidth"}};
    for (const auto& c : s.copies) {
      char bw[32];
      std::snprintf(bw, sizeof bw, "%.2f GB/s", c.gb_per_s());
      rows.push_back({c.dst_space + " <- " + c.src_space, std::to_string(c.calls), fmt_bytes(c.bytes), fmt_time(c.time), bw});
    }
    out += table(rows);
  }
  if (s.profile_events || s.dual_view_syncs || s.dual_view_modifies) {
    out += "\nprofile events: " + std::to_string(s.profile_events) + ", dual view syncs: " + std::to_string(s.dual_view_syncs) +
           ", dual view modifies: " + std::to_string(s.dual_view_modifies) + "\n";
  }
  if (s.filtered_kernels || s.filtered_regions) {
    out += "left out by --include/--exclude: " + std::to_string(s.filtered_kernels) + " kernel calls, " +
           std::to_string(s.filtered_regions) + " region entries\n";
  }
  out += "\ndropped events: " + std::to_string(s.dropped) + (s.dropped ? " (raise --memory-limit)" : "") + "\n";
  for (const auto& p : s.problems) out += "note: " + p + "\n";
  return out;
}

std::string summary_json(const Summary& s, const std::string& other_data_json) {
  using json::append_string;
  using json::append_uint;
  std::string o = "{\n\"otherData\": " + other_data_json + ",\n\"run_time_ns\": ";
  append_uint(o, s.run_time);
  o += ",\n\"kernels\": [";
  for (std::size_t i = 0; i < s.kernels.size(); ++i) {
    const auto& k = s.kernels[i];
    o += i ? ",\n  {" : "\n  {";
    o += "\"name\": ";
    append_string(o, k.name);
    o += ", \"kind\": \"" + k.kind + "\", \"device\": ";
    append_string(o, k.device);
    o += ", \"calls\": " + std::to_string(k.calls) + ", \"total_ns\": " + std::to_string(k.total) +
         ", \"mean_ns\": " + std::to_string(k.mean()) + ", \"min_ns\": " + std::to_string(k.min) +
         ", \"max_ns\": " + std::to_string(k.max) + "}";
  }
  o += "],\n\"regions\": [";
  for (std::size_t i = 0; i < s.regions.size(); ++i) {
    const auto& r = s.regions[i];
    o += i ? ",\n  {" : "\n  {";
    o += "\"path\": ";
    append_string(o, r.path);
    o += ", \"name\": ";
    append_string(o, r.name);
    o += ", \"depth\": " + std::to_string(r.depth) + ", \"calls\": " + std::to_string(r.calls) +
         ", \"inclusive_ns\": " + std::to_string(r.inclusive) + ", \"exclusive_ns\": " + std::to_string(r.exclusive) + "}";
  }
  o += "],\n\"memory\": [";
  for (std::size_t i = 0; i < s.memory.size(); ++i) {
    const auto& m = s.memory[i];
    o += i ? ",\n  {" : "\n  {";
    o += "\"space\": ";
    append_string(o, m.space);
    o += ", \"allocations\": " + std::to_string(m.allocations) + ", \"deallocations\": " + std::to_string(m.deallocations) +
         ", \"bytes_allocated\": " + std::to_string(m.bytes_allocated) + ", \"high_water_bytes\": " + std::to_string(m.high_water) +
         ", \"final_bytes\": " + std::to_string(m.final_level) + "}";
  }
  o += "],\n\"deep_copies\": [";
  for (std::size_t i = 0; i < s.copies.size(); ++i) {
    const auto& c = s.copies[i];
    o += i ? ",\n  {" : "\n  {";
    o += "\"dst_space\": ";
    append_string(o, c.dst_space);
    o += ", \"src_space\": ";
    append_string(o, c.src_space);
    o += ", \"calls\": " + std::to_string(c.calls) + ", \"bytes\": " + std::to_string(c.bytes) + ", \"time_ns\": " +
         std::to_string(c.time) + ", \"bandwidth_gb_per_s\": ";
    json::append_double(o, c.gb_per_s());
    o += "}";
  }
  auto named = [&](const char* key, const std::vector<NamedStats>& v, const char* calls_key) {
    o += "],\n\"" + std::string(key) + "\": [";
    for (std::size_t i = 0; i < v.size(); ++i) {
      o += i ? ",\n  {" : "\n  {";
      o += "\"name\": ";
      append_string(o, v[i].name);
      o += ", \"" + std::string(calls_key) + "\": " + std::to_string(v[i].calls) + ", \"total_ns\": " + std::to_string(v[i].total) + "}";
    }
  };
  named("fences", s.fences, "calls");
  named("sections", s.sections, "intervals");
  o += "],\n\"profile_events\": " + std::to_string(s.profile_events) + ",\n\"dual_view_syncs\": " + std::to_string(s.dual_view_syncs) +
       ",\n\"dual_view_modifies\": " + std::to_string(s.dual_view_modifies) + ",\n\"filtered_kernel_calls\": " +
       std::to_string(s.filtered_kernels) + ",\n\"filtered_region_entries\": " + std::to_string(s.filtered_regions) +
       ",\n\"dropped_events\": " + std::to_string(s.dropped) + ",\n\"problems\": [";
  for (std::size_t i = 0; i < s.problems.size(); ++i) {
    o += i ? ", " : "";
    append_string(o, s.problems[i]);
  }
  o += "]\n}\n";
  return o;
}

}  // namespace kob
