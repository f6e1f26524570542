#include "common/timeline.hpp"

#include <algorithm>
#include <limits>
#include <regex>
#include <unordered_map>

#include "common/clock.hpp"
#include "common/intern.hpp"

namespace kob {

namespace {

struct SectionMark {
  std::uint64_t time;
  std::uint32_t track;
  std::uint32_t section;
  bool start;
};

// Counts one kind of problem and turns it into one line at the end.
struct ProblemCounter {
  std::map<std::string, std::uint64_t> counts;
  void add(const std::string& what) { ++counts[what]; }
  void flush(std::vector<std::string>& out) {
    for (const auto& [what, n] : counts) out.push_back(what + " (" + std::to_string(n) + (n == 1 ? " time)" : " times)"));
  }
};

std::string join_path(const std::vector<std::uint32_t>& stack, const InternTable& names) {
  std::string p;
  for (std::uint32_t n : stack) {
    if (!p.empty()) p += '/';
    p += names.str(n);
  }
  return p;
}

}  // namespace

Timeline build_timeline(const std::vector<ThreadBuffer*>& threads) {
  Timeline t;
  InternTable& names = kob::names();
  ProblemCounter problems;
  std::uint64_t t_min = std::numeric_limits<std::uint64_t>::max(), t_max = 0;

  std::unordered_map<std::uint64_t, KernelSpan> open_kernels;
  std::unordered_map<std::uint64_t, FenceSpan> open_fences;
  std::unordered_map<std::uint64_t, DeepCopySpan> open_copies;
  std::unordered_map<std::uint32_t, std::uint32_t> section_names;
  std::vector<SectionMark> section_marks;
  std::vector<RegionSpan> open_regions_at_end;

  for (ThreadBuffer* b : threads) {
    const auto track = static_cast<std::uint32_t>(t.tracks.size());
    t.tracks.push_back(Track{b->index, b->os_tid, b->omp_thread_type.load(std::memory_order_relaxed)});
    t.dropped += b->dropped();

    std::vector<std::uint32_t> region_names;
    std::vector<std::uint64_t> region_starts;
    std::string path;

    b->for_each([&](const Record& r) {
      const std::uint64_t ns = clock::to_ns(r.tick);
      t_min = std::min(t_min, ns);
      t_max = std::max(t_max, ns);
      switch (r.type) {
        case Ev::KernelBegin: {
          KernelSpan k;
          k.start = ns;
          k.track = track;
          k.id = r.u[0];
          k.name = r.a;
          k.kind = static_cast<KernelKind>(r.sub);
          k.devid = static_cast<std::uint32_t>(r.u[1]);
          k.region = path;
          open_kernels[k.id] = std::move(k);
          break;
        }
        case Ev::KernelEnd: {
          auto it = open_kernels.find(r.u[0]);
          if (it == open_kernels.end()) {
            problems.add("kokkosp_end_parallel_* with an id that no begin hook returned: ignored");
            break;
          }
          it->second.end = ns;
          t.kernels.push_back(std::move(it->second));
          open_kernels.erase(it);
          break;
        }
        case Ev::FenceBegin: {
          FenceSpan f;
          f.start = ns;
          f.track = track;
          f.id = r.u[0];
          f.name = r.a;
          f.devid = static_cast<std::uint32_t>(r.u[1]);
          open_fences[f.id] = f;
          break;
        }
        case Ev::FenceEnd: {
          auto it = open_fences.find(r.u[0]);
          if (it == open_fences.end()) {
            problems.add("kokkosp_end_fence with an id that no begin hook returned: ignored");
            break;
          }
          it->second.end = ns;
          t.fences.push_back(it->second);
          open_fences.erase(it);
          break;
        }
        case Ev::RegionPush:
          region_names.push_back(r.a);
          region_starts.push_back(ns);
          path = join_path(region_names, names);
          break;
        case Ev::RegionPop: {
          if (region_names.empty()) {
            problems.add("kokkosp_pop_profile_region with no region open on that thread: ignored");
            break;
          }
          RegionSpan s;
          s.start = region_starts.back();
          s.end = ns;
          s.track = track;
          s.name = region_names.back();
          s.path = path;
          s.depth = static_cast<std::uint32_t>(region_names.size() - 1);
          t.regions.push_back(std::move(s));
          region_names.pop_back();
          region_starts.pop_back();
          path = join_path(region_names, names);
          break;
        }
        case Ev::SectionCreate:
          section_names[static_cast<std::uint32_t>(r.u[0])] = r.a;
          break;
        case Ev::SectionStart:
        case Ev::SectionStop:
          section_marks.push_back({ns, track, static_cast<std::uint32_t>(r.u[0]), r.type == Ev::SectionStart});
          break;
        case Ev::SectionDestroy:
          break;
        case Ev::Alloc:
        case Ev::Dealloc: {
          MemoryEvent m;
          m.time = ns;
          m.track = track;
          m.alloc = r.type == Ev::Alloc;
          m.space = r.a;
          m.name = static_cast<std::uint32_t>(r.u[0]);
          m.ptr = r.u[1];
          m.bytes = r.u[2];
          t.memory.push_back(m);
          break;
        }
        case Ev::DeepCopyBegin: {
          DeepCopySpan d;
          d.start = ns;
          d.track = track;
          d.id = r.u[0];
          d.dst_space = r.a;
          d.dst_name = static_cast<std::uint32_t>(r.u[1]);
          d.src_space = static_cast<std::uint32_t>(r.u[2]);
          d.src_name = static_cast<std::uint32_t>(r.u[3]);
          d.bytes = r.u[4];
          open_copies[d.id] = d;
          break;
        }
        case Ev::DeepCopyEnd: {
          auto it = open_copies.find(r.u[0]);
          if (it == open_copies.end()) {
            problems.add("kokkosp_end_deep_copy with no deep copy open on that thread: ignored");
            break;
          }
          it->second.end = ns;
          t.deep_copies.push_back(it->second);
          open_copies.erase(it);
          break;
        }
        case Ev::ProfileEvent:
          t.events.push_back({ns, track, r.a});
          break;
        case Ev::DualView: {
          DualViewEvent d;
          d.time = ns;
          d.track = track;
          d.name = r.a;
          d.modify = r.sub != 0;
          d.ptr = r.u[0];
          d.on_device = r.u[1] != 0;
          t.dual_views.push_back(d);
          break;
        }
        default:
          break;
      }
    });

    for (std::size_t i = region_names.size(); i-- > 0;) {
      RegionSpan s;
      s.start = region_starts[i];
      s.track = track;
      s.name = region_names[i];
      s.path = join_path(std::vector<std::uint32_t>(region_names.begin(), region_names.begin() + long(i) + 1), names);
      s.depth = static_cast<std::uint32_t>(i);
      open_regions_at_end.push_back(std::move(s));
    }
  }

  if (t_min > t_max) t_min = t_max = 0;
  t.t0 = t_min;
  t.t_end = t_max;

  // Whatever is still open ran until the end of the run, unless its end was dropped.
  const bool lost_ends = t.dropped > 0;
  auto close_open = [&](auto& open, auto& out, const char* what) {
    if (open.empty()) return;
    if (lost_ends) {
      problems.add(std::string(what) + " without an end, discarded (events were dropped)");
      return;
    }
    for (auto& [id, span] : open) {
      span.end = t_max;
      out.push_back(span);
      problems.add(std::string(what) + " never ended: shown until the end of the run");
    }
  };
  close_open(open_kernels, t.kernels, "a Kokkos kernel");
  close_open(open_fences, t.fences, "a Kokkos fence");
  close_open(open_copies, t.deep_copies, "a Kokkos deep copy");
  for (auto& r : open_regions_at_end) {
    r.end = t_max;
    t.regions.push_back(std::move(r));
    problems.add("a Kokkos profile region never popped: shown until the end of the run");
  }

  std::stable_sort(section_marks.begin(), section_marks.end(),
                   [](const SectionMark& a, const SectionMark& b) { return a.time < b.time; });
  std::unordered_map<std::uint32_t, SectionMark> open_sections;
  for (const SectionMark& m : section_marks) {
    auto it = open_sections.find(m.section);
    if (m.start) {
      if (it != open_sections.end()) {
        problems.add("kokkosp_start_profile_section on a section already started: ignored");
        continue;
      }
      open_sections.emplace(m.section, m);
    } else {
      if (it == open_sections.end()) {
        problems.add("kokkosp_stop_profile_section on a section not started: ignored");
        continue;
      }
      SectionSpan s;
      s.start = it->second.time;
      s.end = m.time;
      s.track = it->second.track;
      s.end_track = m.track;
      s.section = m.section;
      auto n = section_names.find(m.section);
      s.name = n == section_names.end() ? InternTable::kNullName : n->second;
      if (n == section_names.end()) problems.add("a profile section id that kokkosp_create_profile_section never returned");
      t.sections.push_back(s);
      open_sections.erase(it);
    }
  }
  for (auto& [id, m] : open_sections) {
    SectionSpan s;
    s.start = m.time;
    s.end = t_max;
    s.track = s.end_track = m.track;
    s.section = id;
    auto n = section_names.find(id);
    s.name = n == section_names.end() ? InternTable::kNullName : n->second;
    t.sections.push_back(s);
    problems.add("a profile section never stopped: shown until the end of the run");
  }

  auto by_start = [](const auto& a, const auto& b) { return a.start < b.start || (a.start == b.start && a.end > b.end); };
  std::sort(t.kernels.begin(), t.kernels.end(), by_start);
  std::sort(t.fences.begin(), t.fences.end(), by_start);
  std::sort(t.regions.begin(), t.regions.end(), by_start);
  std::sort(t.sections.begin(), t.sections.end(), by_start);
  std::sort(t.deep_copies.begin(), t.deep_copies.end(), by_start);

  std::stable_sort(t.memory.begin(), t.memory.end(), [](const MemoryEvent& a, const MemoryEvent& b) { return a.time < b.time; });
  std::unordered_map<std::uint32_t, std::uint64_t> level;
  for (MemoryEvent& m : t.memory) {
    std::uint64_t& l = level[m.space];
    if (m.alloc) {
      l += m.bytes;
    } else if (m.bytes > l) {
      problems.add("kokkosp_deallocate_data of more bytes than were allocated in that space");
      l = 0;
    } else {
      l -= m.bytes;
    }
    m.space_level = l;
  }

  problems.flush(t.problems);
  return t;
}

void filter_timeline(Timeline& t, const std::string& include, const std::string& exclude) {
  if (include.empty() && exclude.empty()) return;
  std::regex inc, exc;
  try {
    if (!include.empty()) inc = std::regex(include);
    if (!exclude.empty()) exc = std::regex(exclude);
  } catch (const std::regex_error&) {
    return;  // Config already rejected invalid expressions
  }
  const InternTable& names = kob::names();
  std::unordered_map<std::uint32_t, bool> keep_cache;
  auto keep = [&](std::uint32_t name) {
    auto it = keep_cache.find(name);
    if (it != keep_cache.end()) return it->second;
    const char* s = names.str(name);
    bool k = (include.empty() || std::regex_search(s, inc)) && (exclude.empty() || !std::regex_search(s, exc));
    keep_cache.emplace(name, k);
    return k;
  };
  const auto nk = t.kernels.size(), nr = t.regions.size();
  t.kernels.erase(std::remove_if(t.kernels.begin(), t.kernels.end(), [&](const KernelSpan& k) { return !keep(k.name); }),
                  t.kernels.end());
  t.regions.erase(std::remove_if(t.regions.begin(), t.regions.end(), [&](const RegionSpan& r) { return !keep(r.name); }),
                  t.regions.end());
  t.filtered_kernels = nk - t.kernels.size();
  t.filtered_regions = nr - t.regions.size();
}

}  // namespace kob
