// The summary as a fold over the span stream (summary_fold.hpp): the same figures as the walk over
// a whole Timeline that it replaced (kept below, in this file only, as the reference), whatever
// the order the stream allows; bounded state; the --include/--exclude filter on the stream.
#include <doctest/doctest.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <unordered_map>

#include "common/timeline/devid.hpp"
#include "common/timeline/filter_sink.hpp"
#include "common/analysis/findings.hpp"
#include "common/record/intern.hpp"
#include "common/timeline/omp_names.hpp"
#include "common/timeline/span_sink.hpp"
#include "common/analysis/summary.hpp"
#include "common/analysis/summary_fold.hpp"
#include "common/analysis/summary_fold_constructs.hpp"
#include "common/record/module_map.hpp"
#include "common/timeline/source_resolver.hpp"
#include "helpers.hpp"

// The walk over a whole Timeline that summarize() did before the fold (verbatim but for its name).
namespace kob::old_walk {

void summarize_omp(const Timeline& t, Summary& s) {
  OmpSummary& o = s.openmp;
  o.records = t.omp_records;
  if (!o.present()) return;
  const InternTable& names = kob::names();

  // Implicit tasks by region; per thread.
  std::unordered_map<std::uint64_t, std::vector<const OmpImplicitTaskSpan*>> region_tasks;
  std::vector<OmpThreadStats> threads(t.tracks.size());
  // libomp's hidden-helper team is the runtime's own machinery (it runs `target nowait` tasks):
  // its region, implicit tasks, barriers and idle waits are not the program's and stay out of
  // the parallel figures; the explicit tasks it runs count as usual.
  auto helper = [&](std::uint32_t track) { return t.tracks[track].hidden_helper; };
  for (const Track& tr : t.tracks) o.hidden_helper_threads += tr.hidden_helper ? 1 : 0;
  for (const OmpImplicitTaskSpan& i : t.omp_implicit_tasks) {
    if (helper(i.track)) continue;
    if (i.initial) {
      ++o.initial_tasks;
      continue;
    }
    ++o.implicit_tasks;
    region_tasks[i.parallel_id].push_back(&i);
    OmpThreadStats& th = threads[i.track];
    ++th.implicit_tasks;
    if (i.level == 0) th.busy += i.busy();
  }
  for (std::size_t i = 0; i < t.tracks.size(); ++i) {
    const Track& tr = t.tracks[i];
    if (tr.hidden_helper) continue;
    switch (tr.omp_thread_type) {
      case 0: break;
      case 1: ++o.threads_initial; break;
      case 2: ++o.threads_worker; break;
      case 3: ++o.threads_other; break;
      default: ++o.threads_unknown; break;
    }
    OmpThreadStats& th = threads[i];
    th.index = tr.index;
    th.os_tid = tr.os_tid;
    th.type = omp_names::thread_type(tr.omp_thread_type);
    th.proc = tr.omp_proc;
    th.place = tr.omp_place;
    th.wait = tr.omp_wait_ns;
    if (tr.omp_thread_type != 0 || th.implicit_tasks != 0 || th.wait != 0) o.threads.push_back(th);
  }

  // Parallel regions: per Kokkos kernel (by name, kind and space, as in the kernel table), or outside.
  using Key = std::tuple<std::uint32_t, KernelKind, std::uint32_t>;
  std::unordered_map<std::uint64_t, Key> kernel_of_id;
  for (const KernelSpan& k : t.kernels) kernel_of_id.emplace(k.id, Key{k.name, k.kind, k.devid >> 17});
  std::map<Key, OmpKernelStats> per_kernel;
  for (const OmpParallelSpan& p : t.omp_parallels) {
    if (p.hidden_helper) continue;
    ++o.parallel_regions;
    if (p.kernel == 0) {
      ++o.outside_regions;
      if (p.level == 0) o.outside_time += p.dur();
      continue;
    }
    auto k = kernel_of_id.find(p.kernel);
    if (k == kernel_of_id.end()) continue;  // left out by --include/--exclude
    OmpKernelStats& st = per_kernel[k->second];
    ++st.parallel_regions;
    st.team_size_sum += p.team_size;
    auto r = region_tasks.find(p.id);
    if (r == region_tasks.end() || r->second.empty()) continue;
    std::uint64_t max_busy = 0, sum_busy = 0;
    for (const OmpImplicitTaskSpan* i : r->second) {
      max_busy = std::max(max_busy, i->busy());
      sum_busy += i->busy();
      st.task_time += i->dur();
      st.wait_time += std::min(i->wait_ns, i->dur());
    }
    const double mean = double(sum_busy) / double(r->second.size());
    st.imbalance_sum += max_busy ? (double(max_busy) - mean) / double(max_busy) : 0.0;
    ++st.imbalance_regions;
    st.busy_max += max_busy;
    st.busy_mean += sum_busy / r->second.size();
  }
  std::map<Key, std::uint64_t> calls;
  for (const KernelSpan& k : t.kernels) ++calls[{k.name, k.kind, k.devid >> 17}];
  for (auto& [key, st] : per_kernel) {
    st.name = names.str(std::get<0>(key));
    st.kind = kernel_kind_name(std::get<1>(key));
    st.calls = calls[key];
  }
  // A team's events come from all its threads: one that dropped events leaves every row short.
  bool lossy_team = false;
  for (const Track& tr : t.tracks) lossy_team = lossy_team || (tr.dropped != 0 && tr.omp_thread_type != 0);
  for (const KernelStats& ks : s.kernels)
    for (auto& [key, st] : per_kernel)
      if (st.name == ks.name && st.kind == ks.kind && std::get<2>(key) == ks.space) {
        st.partial = ks.partial || lossy_team;
        st.device = ks.device;
        o.kernels.push_back(st);
      }

  std::map<std::uint16_t, OmpCountStats> work, sync, dispatch;
  for (const OmpWorkSpan& w : t.omp_works) {
    if (helper(w.track)) continue;
    OmpCountStats& c = work[w.type];
    c.name = omp_names::work(w.type);
    ++c.count;
    c.total += w.dur();
  }
  for (const OmpSyncSpan& y : t.omp_syncs) {
    if (helper(y.track)) continue;
    OmpCountStats& c = sync[y.kind];
    c.name = omp_names::sync(y.kind);
    ++c.count;
    c.total += y.dur();
    c.wait += y.wait_ns;
  }
  for (const OmpInstant& e : t.omp_instants) {
    switch (e.type) {
      case Ev::OmpDispatch: {
        OmpCountStats& c = dispatch[e.sub];
        c.name = omp_names::dispatch(e.sub);
        ++c.count;
        break;
      }
      case Ev::OmpDependences:
        ++o.tasks_with_dependences;
        o.dependences += e.a;
        break;
      case Ev::OmpTaskDependence: ++o.task_dependences; break;
      case Ev::OmpLockInit: ++o.lock_inits; break;
      case Ev::OmpLockDestroy: ++o.lock_destroys; break;
      case Ev::OmpCancel: ++o.cancels; break;
      case Ev::OmpFlush: ++o.flushes; break;
      case Ev::OmpError: ++(e.sub == 2 ? o.errors_fatal : o.errors_warning); break;
      default: break;
    }
  }
  for (auto& [k, c] : work) o.work.push_back(c);
  for (auto& [k, c] : sync) o.sync.push_back(c);
  for (auto& [k, c] : dispatch) o.dispatch.push_back(c);

  o.tasks_created = t.omp_task_creates.size();
  // A taskwait-depend task (flag ompt_task_taskwait) never runs: its span is a wait, no stretch.
  o.task_stretches = static_cast<std::uint64_t>(
      std::count_if(t.omp_tasks.begin(), t.omp_tasks.end(), [](const OmpTaskSpan& k) { return (k.flags & 0x10) == 0; }));
  o.tasks_completed = t.omp_tasks_completed;
  o.tasks_cancelled = t.omp_tasks_cancelled;
  o.tasks_discarded = t.omp_tasks_discarded;

  std::map<std::uint16_t, OmpMutexStats> mutex;
  for (const OmpMutexSpan& m : t.omp_mutexes) {
    OmpMutexStats& st = mutex[m.kind];
    st.kind = omp_names::mutex(m.kind);
    if (!m.hold) {
      st.wait += m.dur();
      st.failed_tries += m.failed ? 1 : 0;
    } else if (m.nested) {
      ++st.nested_holds;
    } else {
      ++st.holds;
      st.hold += m.dur();
    }
  }
  for (auto& [k, st] : mutex) o.mutex.push_back(st);
}

std::string device_name(int device) { return device == kHostDevice ? "host" : std::to_string(device); }

void summarize_target(const Timeline& t, Summary& s) {
  TargetSummary& o = s.target;
  o.records = t.omp_target_records;
  if (!o.present()) return;
  const InternTable& names = kob::names();

  std::map<int, TargetDeviceStats> devs;
  auto dev = [&](int n) -> TargetDeviceStats& {
    TargetDeviceStats& d = devs[n];
    d.device = n;
    return d;
  };
  for (const OmpDevice& d : t.omp_devices) {
    TargetDeviceStats& x = dev(d.num);
    if (d.initialised) {
      x.type = names.str(d.type);
      x.path = d.traced ? "tracing" : "callbacks";
    }
  }

  std::map<int, std::map<std::uint16_t, OmpCountStats>> regions;
  std::unordered_map<std::uint64_t, int> target_device;
  for (const OmpTargetSpan& x : t.omp_targets) {
    target_device.emplace(x.id, x.device);
    dev(x.device);
    OmpCountStats& c = regions[x.device][x.kind];
    c.name = omp_names::target_kind(x.kind);
    ++c.count;
    c.total += x.dur();
    ++(x.kernel != 0 ? o.regions_in_kernels : o.regions_outside);
  }
  for (const OmpSubmitSpan& x : t.omp_submits) {
    auto it = target_device.find(x.target_id);
    TargetDeviceStats& d = dev(it == target_device.end() ? kHostDevice : it->second);
    ++d.submits;
    d.submit_time += x.dur();
  }

  std::map<int, std::map<std::uint16_t, TargetOpStats>> ops;
  std::map<int, std::map<int, TargetOpStats>> dirs;  // 0 host_to_device, 1 device_to_host, 2 device_to_device
  std::map<std::pair<int, std::uint64_t>, std::uint64_t> live;  // (device, address) -> bytes allocated there
  std::map<int, std::uint64_t> level;
  std::unordered_map<std::uint64_t, const DeepCopySpan*> copies;
  for (const DeepCopySpan& c : t.deep_copies) copies.emplace(c.id, &c);
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t>, TargetCopyStats> per_copy;
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t>, std::map<std::uint16_t, TargetOpStats>> copy_ops;
  std::unordered_map<std::uint64_t, bool> copy_seen;
  std::vector<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t>> copy_order;  // first seen first
  for (const OmpDataOpSpan& x : t.omp_data_ops) {
    const int device = x.device();
    TargetDeviceStats& d = dev(device);
    TargetOpStats& c = ops[device][x.optype];
    c.name = omp_names::data_op(x.optype);
    ++c.count;
    c.bytes += x.bytes;
    c.time += x.dur();
    const bool to = x.optype == 2 || x.optype == 18, from = x.optype == 3 || x.optype == 19;
    if (to || from) {
      const int dir = x.src_device == kHostDevice ? 0 : x.dst_device == kHostDevice ? 1 : 2;
      TargetOpStats& b = dirs[device][dir];
      b.name = dir == 0 ? "host_to_device" : dir == 1 ? "device_to_host" : "device_to_device";
      ++b.count;
      b.bytes += x.bytes;
      b.time += x.dur();
    } else if (x.optype == 1 || x.optype == 17) {
      ++d.allocations;
      d.alloc_bytes += x.bytes;
      std::uint64_t& l = level[device];
      if (x.address != 0) {
        auto [it, fresh] = live.emplace(std::make_pair(device, x.address), x.bytes);
        if (!fresh) {  // allocated again without a delete seen: replace
          l -= std::min(l, it->second);
          it->second = x.bytes;
        }
      }
      l += x.bytes;
      d.alloc_high_water = std::max(d.alloc_high_water, l);
    } else if (x.optype == 4 || x.optype == 20) {
      ++d.deletes;
      auto it = live.find({device, x.address});
      if (it != live.end()) {
        std::uint64_t& l = level[device];
        l -= std::min(l, it->second);
        live.erase(it);
      }
    }
    if (x.deep_copy == 0) continue;
    auto cp = copies.find(x.deep_copy);
    if (cp == copies.end()) continue;
    const DeepCopySpan& dc = *cp->second;
    const auto key = std::make_tuple(dc.dst_name, dc.src_name, dc.dst_space, dc.src_space);
    auto [pc, fresh] = per_copy.try_emplace(key);
    if (fresh) copy_order.push_back(key);
    TargetCopyStats& st = pc->second;
    if (!copy_seen[dc.id]) {
      copy_seen[dc.id] = true;
      st.name = std::string(names.str(dc.dst_name)) + " <- " + names.str(dc.src_name);
      st.dst_space = names.str(dc.dst_space);
      st.src_space = names.str(dc.src_space);
      ++st.calls;
      st.bytes += dc.bytes;
    }
    TargetOpStats& op = copy_ops[key][x.optype];
    op.name = omp_names::data_op(x.optype);
    ++op.count;
    op.bytes += x.bytes;
    op.time += x.dur();
  }
  for (const OmpDeviceOp& x : t.omp_device_ops) ++dev(x.device).device_records;

  for (auto& [num, d] : devs) {
    for (auto& [k, c] : regions[num]) d.regions.push_back(c);
    for (auto& [k, c] : ops[num]) d.data_ops.push_back(c);
    for (auto& [k, c] : dirs[num]) d.transfers.push_back(c);
    d.alloc_final = level[num];
    o.devices.push_back(d);
  }
  for (const auto& key : copy_order) {
    TargetCopyStats& st = per_copy[key];
    for (auto& [k, c] : copy_ops[key]) st.ops.push_back(c);
    o.deep_copies.push_back(st);
  }
}

// coverage: what the run's input says was lost (RandomRun::coverage), set as given, not worked out
// from the timeline as the fold does; a run with losses then lasts until its run_end.
Summary summarize_by_walk(const Timeline& t, const Coverage& coverage) {
  const InternTable& names = kob::names();
  Summary s;
  s.run_time = t.t_end - t.t0;
  s.coverage = coverage;
  if (!coverage.complete()) s.run_time = coverage.run_end;
  s.dropped = t.dropped;
  s.problems = t.problems;
  s.filtered_kernels = t.filtered_kernels;
  s.filtered_regions = t.filtered_regions;
  s.cut_short = t.cut_short;
  s.cut_spans = t.cut_spans;
  std::vector<bool> lossy(t.tracks.size());  // by track: dropped events
  for (std::size_t i = 0; i < t.tracks.size(); ++i) lossy[i] = t.tracks[i].dropped != 0;
  const auto on_lossy = [&](std::uint32_t track) { return track < lossy.size() && lossy[track]; };

  // A row per name, kind and execution space (the device id's type and device number).
  std::map<std::tuple<std::uint32_t, KernelKind, std::uint32_t>, KernelStats> kernels;
  for (const KernelSpan& k : t.kernels) {
    KernelStats& st = kernels[{k.name, k.kind, k.devid >> 17}];
    st.partial = st.partial || on_lossy(k.track);
    if (st.calls == 0) {
      st.name = names.str(k.name);
      st.kind = kernel_kind_name(k.kind);
      st.device = device_label(k.devid);
      st.space = k.devid >> 17;
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
    if (a->track != b->track || a->start != b->start) return std::tie(a->track, a->start) < std::tie(b->track, b->start);
    return a->end > b->end || (a->end == b->end && a->depth < b->depth);
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
    st.partial = st.partial || on_lossy(r->track);
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
      st.unmatched_frees += m.unmatched != 0 ? 1 : 0;
      st.unmatched_bytes += m.unmatched;
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

  // Copy and allocation sites (added with the findings; the walk is their reference too).
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t, std::uint64_t>, CopySiteStats> copy_sites;
  for (const DeepCopySpan& d : t.deep_copies) {
    CopySiteStats& st = copy_sites[{d.dst_name, d.src_name, d.dst_space, d.src_space, d.bytes}];
    st.dst_name = names.str(d.dst_name);
    st.src_name = names.str(d.src_name);
    st.dst_space = names.str(d.dst_space);
    st.src_space = names.str(d.src_space);
    st.bytes = d.bytes;
    ++st.calls;
    st.time += d.dur();
  }
  for (auto& [key, st] : copy_sites) s.copy_sites.push_back(st);
  std::stable_sort(s.copy_sites.begin(), s.copy_sites.end(),
                   [](const CopySiteStats& a, const CopySiteStats& b) { return a.time > b.time; });
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint64_t>, std::uint64_t> alloc_sites;
  for (const MemoryEvent& m : t.memory)
    if (m.alloc) ++alloc_sites[{m.name, m.space, m.bytes}];
  for (auto& [key, count] : alloc_sites)
    s.alloc_sites.push_back({names.str(std::get<0>(key)), names.str(std::get<1>(key)), std::get<2>(key), count});
  std::stable_sort(s.alloc_sites.begin(), s.alloc_sites.end(),
                   [](const AllocSiteStats& a, const AllocSiteStats& b) { return a.allocations > b.allocations; });

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
  summarize_omp(t, s);
  // A Serial-named kernel that opened OpenMP parallel regions ran on OpenMP (Kokkos 3's View
  // initialization reports device id 0).
  for (KernelStats& ks : s.kernels)
    for (kob::OmpKernelStats& ok : s.openmp.kernels)
      if (ok.name == ks.name && ok.kind == ks.kind && ok.device == ks.device && ok.parallel_regions != 0 && ks.device == "Serial")
        ks.device = ok.device = std::string(kob::kInferredOpenMP);
  summarize_target(t, s);
  s.findings = findings::find(s);
  return s;
}

}  // namespace kob::old_walk

namespace {

using kob_test::nm;

// A random but well-formed Timeline (as build_timeline makes them: spans of one thread nest,
// vectors sorted by start): nested regions with repeated names on several threads, kernels with
// OpenMP parallel regions and implicit tasks on other threads, regions outside kernels or naming
// a kernel that is not there, the hidden-helper team, memory, copies, target regions with
// submits and data ops (some caused by deep copies), dropped events.
struct RandomRun {
  std::mt19937_64 rng;
  kob::Timeline t;
  kob::Coverage coverage;  // what the summary must say was lost (make's own figures)
  bool helper = false;
  std::uint64_t next_kernel = 1, next_parallel = 1, next_copy = 1, next_target = 1;

  explicit RandomRun(std::uint64_t seed) : rng(seed) { make(); }

  std::uint64_t pick(std::uint64_t lo, std::uint64_t hi) { return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng); }
  bool coin(int percent) { return pick(0, 99) < static_cast<std::uint64_t>(percent); }

  template <class S>
  static S at(std::uint32_t track, std::uint64_t start, std::uint64_t end) {
    return kob_test::span<S>(track, start, end);
  }

  void regions(std::uint32_t track, std::uint64_t start, std::uint64_t end, std::uint32_t depth, const std::string& path) {
    static const char* kNames[] = {"fr_a", "fr_b", "fr_setup", "fr_c"};
    if (depth > 4 || end < start + 4) return;
    std::uint64_t cur = start;
    const std::uint64_t n = pick(0, 4);
    for (std::uint64_t i = 0; i < n && cur <= end; ++i) {
      const std::uint64_t s = coin(25) ? cur : pick(cur, end);
      const std::uint64_t e = coin(25) ? end : pick(s, end);
      const char* name = kNames[pick(0, 3)];
      kob::RegionSpan r = at<kob::RegionSpan>(track, s, e);
      r.name = nm(name);
      r.path = path.empty() ? std::string(name) : path + "/" + name;
      r.depth = depth;
      regions(track, s, e, depth + 1, r.path);
      t.regions.push_back(r);
      cur = e + (coin(30) ? 0 : 1);
    }
  }

  // An OpenMP parallel region on `track` inside [s, e] with its implicit tasks.
  void parallel(std::uint32_t track, std::uint64_t s, std::uint64_t e, std::uint64_t kernel) {
    kob::OmpParallelSpan p = at<kob::OmpParallelSpan>(track, s, e);
    p.id = next_parallel++;
    p.kernel = kernel;
    p.level = coin(80) ? 0 : 1;
    std::vector<std::uint32_t> team{track};
    if (coin(80)) team.push_back(2);
    if (!helper && coin(60)) team.push_back(3);
    if (coin(10)) team.clear();
    std::uint32_t num = 0;
    for (std::uint32_t tr : team) {
      kob::OmpImplicitTaskSpan i = at<kob::OmpImplicitTaskSpan>(tr, s + pick(0, 2), e - pick(0, 2));
      i.parallel_id = p.id;
      i.kernel = kernel;
      i.thread_num = num++;
      i.level = p.level;
      i.wait_ns = pick(0, i.dur() + 3);  // sometimes more than the task (clamped)
      t.omp_implicit_tasks.push_back(i);
      kob::OmpSyncSpan y = at<kob::OmpSyncSpan>(tr, i.end - pick(0, 2), i.end);
      y.kind = static_cast<std::uint16_t>(pick(1, 4));
      y.parallel_id = p.id;
      y.wait_ns = pick(0, 5);
      t.omp_syncs.push_back(y);
    }
    p.team_size = static_cast<std::uint32_t>(team.size());
    t.omp_parallels.push_back(p);
  }

  void kernels(std::uint32_t track, std::uint64_t from, std::uint64_t to) {
    static const char* kNames[] = {"fk_a", "fk_b", "fk_c"};
    std::uint64_t cur = from;
    while (cur + 40 < to) {
      const std::uint64_t s = cur + pick(0, 10), e = s + pick(20, 200);
      if (e >= to) break;
      const int what = static_cast<int>(pick(0, 9));
      if (what < 7) {
        const std::uint64_t n = pick(0, 3);
        kob::KernelSpan k = at<kob::KernelSpan>(track, s, e);
        k.id = next_kernel++;
        k.name = nm(kNames[n % 3]);
        k.kind = n == 3 ? kob::KernelKind::ParallelReduce : kob::KernelKind::ParallelFor;
        k.devid = n == 1 ? 0 : 0x01000000;
        t.kernels.push_back(k);
        const std::uint64_t regions = pick(0, 2);
        std::uint64_t ps = s + 1;
        for (std::uint64_t i = 0; i < regions && ps + 12 < e; ++i) {
          const std::uint64_t pe = pick(ps + 8, std::min(e - 1, ps + 60));
          parallel(track, ps, pe, k.id);
          ps = pe + 1;
        }
      } else if (what < 9) {
        parallel(track, s, e, 0);  // outside any kernel
      } else {
        parallel(track, s + 1, e - 1, 900000 + next_kernel++);  // its kernel never arrives (dropped before)
      }
      cur = e + pick(0, 5);
    }
  }

  void make() {
    helper = coin(30);
    for (std::uint32_t i = 0; i < 5; ++i) {
      kob::Track tr;
      tr.index = i;
      tr.os_tid = 100 + i;
      tr.omp_thread_type = i == 0 ? 1 : i == 4 ? 0 : 2;
      tr.omp_wait_ns = pick(0, 50);
      tr.omp_proc = static_cast<int>(i);
      t.tracks.push_back(tr);
    }
    if (helper) {
      t.tracks[3].hidden_helper = true;
      kob::OmpParallelSpan p = at<kob::OmpParallelSpan>(3, 5, 4000);
      p.id = next_parallel++;
      p.hidden_helper = true;
      p.team_size = 1;
      kob::OmpImplicitTaskSpan i = at<kob::OmpImplicitTaskSpan>(3, 6, 3990);
      i.parallel_id = p.id;
      t.omp_parallels.push_back(p);
      t.omp_implicit_tasks.push_back(i);
      kob::OmpWorkSpan w = at<kob::OmpWorkSpan>(3, 10, 20);
      t.omp_works.push_back(w);
    }
    // The run ends at 12500 (make's end); complete until then, or until the first event lost.
    coverage.run_end = coverage.complete_until = 12500;
    if (coin(30)) {
      // Track 1 (thread 101) dropped 7 events: 3 in a stretch from 1200 to 1300, the other 4
      // after its last recorded event, at 3000.
      t.tracks[1].dropped = 7;
      t.tracks[1].last_ns = 3000;
      t.lost.push_back({1, 1200, 1300, 3, kob::LossReason::RingFull});
      coverage.complete_until = 1200;
      coverage.threads.push_back({1, 101, 7, 3000});
      coverage.lost.push_back({1, 101, 1200, 1300, 3, "ring full (the writer thread fell behind)"});
    }
    for (std::uint32_t tr = 0; tr < 5; ++tr) {
      kob::OmpImplicitTaskSpan i = at<kob::OmpImplicitTaskSpan>(tr, 0, 5000);
      i.initial = true;
      if (tr != 4 || coin(50)) t.omp_implicit_tasks.push_back(i);
    }
    regions(0, 0, 4000, 0, "");
    regions(1, 100, 3000, 0, "");
    if (coin(50)) regions(2, 50, 2000, 1, "fr_outer");  // its outermost region never recorded
    kernels(0, 0, 4000);
    kernels(1, 0, 4000);

    for (int i = 0; i < 20; ++i) {
      const std::uint32_t tr = static_cast<std::uint32_t>(pick(0, 4));
      const std::uint64_t s = pick(0, 4000);
      // Work constructs and tasks on track 4, which runs no team's implicit task: placed at random
      // they would not nest in one, and a region's work figures (its threads' time in worksharing
      // constructs and tasks) assume they do; the tests below check those.
      kob::OmpWorkSpan w = at<kob::OmpWorkSpan>(4, s, s + pick(0, 30));
      w.type = static_cast<std::uint16_t>(pick(0, 5));
      t.omp_works.push_back(w);
      kob::OmpMutexSpan m = at<kob::OmpMutexSpan>(tr, s, s + pick(0, 30));
      m.kind = static_cast<std::uint16_t>(pick(1, 5));
      m.hold = coin(50);
      m.nested = m.hold && coin(20);
      m.failed = !m.hold && coin(20);
      t.omp_mutexes.push_back(m);
      kob::OmpTaskSpan k = at<kob::OmpTaskSpan>(4, s, s + pick(0, 30));
      k.flags = coin(20) ? 0x14 : 0x4;
      t.omp_tasks.push_back(k);
      kob::OmpTaskCreate c;
      c.time = s;
      c.track = 4;
      t.omp_task_creates.push_back(c);
      kob::OmpInstant e;
      e.time = s;
      e.track = tr;
      static const kob::Ev kTypes[] = {kob::Ev::OmpDispatch, kob::Ev::OmpDependences, kob::Ev::OmpTaskDependence, kob::Ev::OmpLockInit,
                                       kob::Ev::OmpLockDestroy, kob::Ev::OmpCancel, kob::Ev::OmpFlush, kob::Ev::OmpError};
      e.type = kTypes[pick(0, 7)];
      e.sub = static_cast<std::uint16_t>(pick(1, 2));
      e.a = static_cast<std::uint32_t>(pick(0, 4));
      t.omp_instants.push_back(e);
      kob::FenceSpan f = at<kob::FenceSpan>(tr, s, s + pick(0, 30));
      f.name = nm(coin(50) ? "ff_a" : "ff_b");
      t.fences.push_back(f);
      kob::SectionSpan sec = at<kob::SectionSpan>(tr, s, s + pick(0, 30));
      sec.name = nm(coin(50) ? "fs_a" : "fs_b");
      t.sections.push_back(sec);
      kob::InstantEvent ev;
      ev.time = s;
      ev.track = tr;
      t.events.push_back(ev);
      kob::DualViewEvent dv;
      dv.time = s;
      dv.modify = coin(50);
      t.dual_views.push_back(dv);
    }
    // Memory, in time order with its level.
    std::map<std::uint32_t, std::uint64_t> level;
    std::vector<std::pair<std::uint32_t, std::uint64_t>> live;
    for (std::uint64_t time = 10; time < 4000; time += pick(1, 200)) {
      kob::MemoryEvent m;
      m.time = time;
      m.track = static_cast<std::uint32_t>(pick(0, 1));
      m.alloc = live.empty() || coin(60);
      if (m.alloc) {
        m.space = nm(coin(50) ? "fm_Host" : "fm_Dev");
        m.bytes = pick(1, 1000);
        live.emplace_back(m.space, m.bytes);
        level[m.space] += m.bytes;
      } else {
        const std::size_t i = pick(0, live.size() - 1);
        m.space = live[i].first;
        m.bytes = live[i].second;
        level[m.space] -= m.bytes;
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
      }
      m.space_level = level[m.space];
      t.memory.push_back(m);
    }
    // Deep copies, some causing data ops (transfers).
    for (std::uint64_t s = 5000; s < 8000; s += pick(50, 300)) {
      kob::DeepCopySpan d = at<kob::DeepCopySpan>(0, s, s + 40);
      d.id = next_copy++;
      d.dst_space = nm(coin(50) ? "fm_Host" : "fm_Dev");
      d.src_space = nm("fm_Host");
      d.dst_name = nm(coin(50) ? "fv_x" : "fv_y");
      d.src_name = nm("fv_z");
      d.bytes = pick(1, 100);
      t.deep_copies.push_back(d);
      for (std::uint64_t i = 0, n = pick(0, 2); i < n; ++i) {
        kob::OmpDataOpSpan x = at<kob::OmpDataOpSpan>(0, s + 1 + 10 * i, s + 5 + 10 * i);
        x.optype = coin(50) ? 2 : 3;
        x.src_device = x.optype == 2 ? kob::kHostDevice : 0;
        x.dst_device = x.optype == 2 ? 0 : kob::kHostDevice;
        x.bytes = pick(1, 64);
        x.deep_copy = coin(90) ? d.id : 777777;  // a copy that never arrives: no row
        t.omp_data_ops.push_back(x);
      }
    }
    // Target regions with submits and data ops (allocations by address), one after another.
    std::vector<std::uint64_t> addresses;
    for (std::uint64_t s = 9000; s < 12000; s += 200) {
      kob::OmpTargetSpan x = at<kob::OmpTargetSpan>(1, s, s + 150);
      x.id = next_target++;
      x.device = static_cast<int>(pick(0, 2)) - 1;
      x.kind = static_cast<std::uint16_t>(pick(1, 4));
      x.kernel = coin(50) ? 1 : 0;
      t.omp_targets.push_back(x);
      std::uint64_t cur = s + 1;
      for (std::uint64_t i = 0, n = pick(0, 4); i < n; ++i) {
        kob::OmpDataOpSpan d = at<kob::OmpDataOpSpan>(1, cur, cur + pick(0, 5));
        cur = d.end + 1;
        const int dev = x.device == kob::kHostDevice ? 0 : x.device;
        d.src_device = kob::kHostDevice;
        d.dst_device = dev;
        const std::uint64_t what = pick(0, 3);
        d.optype = what == 0 ? 1 : what == 1 ? 4 : what == 2 ? 2 : 17;
        if (d.optype == 4 && !addresses.empty()) {
          d.address = addresses[pick(0, addresses.size() - 1)];
        } else {
          d.address = 0x1000 * pick(0, 6);  // 0: no address known
          if (d.address) addresses.push_back(d.address);
        }
        d.bytes = pick(1, 500);
        d.target_id = x.id;
        t.omp_data_ops.push_back(d);
      }
      kob::OmpSubmitSpan sub = at<kob::OmpSubmitSpan>(1, cur, cur + 3);
      sub.target_id = coin(85) ? x.id : 555555;  // a target region that never arrives: the host's
      t.omp_submits.push_back(sub);
      kob::OmpDeviceOp op = at<kob::OmpDeviceOp>(4, s, s + 10);
      op.device = static_cast<int>(pick(0, 1));
      if (coin(50)) t.omp_device_ops.push_back(op);
    }
    kob::OmpDevice d0, d1;
    d0.num = 0;
    d0.initialised = true;
    d0.type = nm("fd_cpu");
    d1.num = 1;
    d1.initialised = coin(50);
    d1.traced = true;
    t.omp_devices = {d0, d1};

    auto by_start = [](const auto& a, const auto& b) { return a.start < b.start; };
    std::stable_sort(t.kernels.begin(), t.kernels.end(), by_start);
    std::stable_sort(t.regions.begin(), t.regions.end(), by_start);
    std::stable_sort(t.omp_parallels.begin(), t.omp_parallels.end(), by_start);
    std::stable_sort(t.omp_implicit_tasks.begin(), t.omp_implicit_tasks.end(), by_start);
    std::stable_sort(t.omp_works.begin(), t.omp_works.end(), by_start);
    std::stable_sort(t.omp_syncs.begin(), t.omp_syncs.end(), by_start);
    std::stable_sort(t.omp_tasks.begin(), t.omp_tasks.end(), by_start);
    std::stable_sort(t.omp_mutexes.begin(), t.omp_mutexes.end(), by_start);
    std::stable_sort(t.omp_data_ops.begin(), t.omp_data_ops.end(), by_start);
    auto by_time = [](const auto& a, const auto& b) { return a.time < b.time; };
    std::stable_sort(t.omp_task_creates.begin(), t.omp_task_creates.end(), by_time);
    std::stable_sort(t.omp_instants.begin(), t.omp_instants.end(), by_time);
    std::stable_sort(t.events.begin(), t.events.end(), by_time);
    std::stable_sort(t.dual_views.begin(), t.dual_views.end(), by_time);
    t.t0 = 0;
    t.t_end = 12000;
    t.run_end = 12500;
    t.omp_records = 1;
    t.omp_target_records = 1;
    t.omp_tasks_completed = 3;
    t.problems = {"fold test problem"};
  }
};

std::string json(const kob::Summary& s) { return kob::summary_json(s, "{}"); }

// Every line that differs, for the failure message.
std::string diff(const std::string& a, const std::string& b) {
  std::string out;
  std::size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  const std::size_t from = i > 80 ? i - 80 : 0;
  out += "walk: ..." + a.substr(from, 240) + "\nfold: ..." + b.substr(from, 240);
  return out;
}

}  // namespace

TEST_CASE("summary fold: the same figures as the walk over the whole timeline, on random runs") {
  int omp_kernel_rows = 0, imbalance_rows = 0, nested_regions = 0, copy_rows = 0;
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    const RandomRun run(seed);
    const kob::Summary walk = kob::old_walk::summarize_by_walk(run.t, run.coverage);
    const kob::Summary fold = kob::summarize(run.t);
    const std::string a = json(walk), b = json(fold);
    INFO("seed " << seed << "\n" << diff(a, b));
    REQUIRE(a == b);
    CHECK(kob::summary_text(walk, "x") == kob::summary_text(fold, "x"));
    omp_kernel_rows += static_cast<int>(fold.openmp.kernels.size());
    for (const auto& k : fold.openmp.kernels) imbalance_rows += k.imbalance_regions != 0 ? 1 : 0;
    for (const auto& r : fold.regions) nested_regions += r.exclusive < r.inclusive ? 1 : 0;
    copy_rows += static_cast<int>(fold.target.deep_copies.size());
  }
  // The runs exercise the joins (not only empty tables).
  CHECK(omp_kernel_rows > 300);
  CHECK(imbalance_rows > 300);
  CHECK(nested_regions > 300);
  CHECK(copy_rows > 300);
}

TEST_CASE("summary fold: --include/--exclude on the stream gives the walk's figures of the filtered timeline") {
  const std::pair<const char*, const char*> filters[] = {{"", "fr_b|fr_setup|fk_b"}, {"fr_a|fk_a|fr_c", ""}, {"", "fr_a"}};
  for (std::uint64_t seed = 1; seed <= 150; ++seed) {
    for (const auto& [inc, exc] : filters) {
      const std::string include = inc, exclude = exc;
      const RandomRun run(seed);
      kob::Timeline filtered = run.t;
      kob::filter_timeline(filtered, include, exclude);
      const std::string walk = json(kob::old_walk::summarize_by_walk(filtered, run.coverage));
      INFO("seed " << seed << " include " << include << " exclude " << exclude);
      // The Timeline filtered first, then folded...
      {
        INFO(diff(walk, json(kob::summarize(filtered))));
        CHECK(walk == json(kob::summarize(filtered)));
      }
      // ...and the whole stream through the filter into the fold.
      kob::SummaryFold fold;
      kob::FilterSink filter(fold, include, exclude);
      kob::replay_timeline(run.t, filter);
      CHECK(filter.filtered_kernels() == filtered.filtered_kernels);
      CHECK(filter.filtered_regions() == filtered.filtered_regions);
      const kob::Summary s = fold.result();
      CHECK(s.filtered_kernels == filtered.filtered_kernels);
      CHECK(s.filtered_regions == filtered.filtered_regions);
      INFO(diff(walk, json(s)));
      CHECK(walk == json(s));
    }
  }
}
namespace {

// One Kokkos kernel call with one OpenMP parallel region on track 0 and its implicit tasks: the
// primary thread's on track 0 (it ends inside the region) and workers' on other tracks.
struct KernelCall {
  kob::KernelSpan kernel;
  kob::OmpParallelSpan parallel;
  std::vector<kob::OmpImplicitTaskSpan> tasks;  // tasks[0]: the primary thread's
};

KernelCall kernel_call(const char* name, std::uint64_t id, std::uint64_t t, const std::vector<std::pair<std::uint64_t, std::uint64_t>>& busy_wait) {
  KernelCall c;
  c.kernel = kob_test::span<kob::KernelSpan>(0, t, t + 100);
  c.kernel.id = id;
  c.kernel.name = nm(name);
  c.kernel.devid = 0x01000000;
  c.parallel = kob_test::span<kob::OmpParallelSpan>(0, t + 10, t + 90);
  c.parallel.id = id;
  c.parallel.kernel = id;
  c.parallel.team_size = static_cast<std::uint32_t>(busy_wait.size());
  for (std::uint32_t i = 0; i < busy_wait.size(); ++i) {
    const auto [busy, wait] = busy_wait[i];
    kob::OmpImplicitTaskSpan x = kob_test::span<kob::OmpImplicitTaskSpan>(i, t + 11, t + 11 + busy + wait);
    x.parallel_id = id;
    x.kernel = id;
    x.thread_num = i;
    x.team_size = c.parallel.team_size;
    x.wait_ns = wait;
    c.tasks.push_back(x);
  }
  return c;
}

kob::Timeline tail_of_run(std::uint32_t tracks) {
  kob::Timeline rest;
  for (std::uint32_t i = 0; i < tracks; ++i) {
    kob::Track tr;
    tr.index = i;
    tr.omp_thread_type = i == 0 ? 1 : 2;
    rest.tracks.push_back(tr);
  }
  rest.omp_records = 1;
  rest.t_end = 1000;
  return rest;
}

}  // namespace

TEST_CASE("summary fold: workers' implicit tasks before or after their region and kernel give the same figures") {
  // Call 1: busy 58 (wait 20), 48, 46 (wait 30); call 2: busy 78, 38.
  const KernelCall a = kernel_call("fo_k", 5, 0, {{58, 20}, {48, 0}, {46, 30}});
  const KernelCall b = kernel_call("fo_k", 6, 200, {{78, 0}, {38, 0}});
  enum Piece { Primary, Parallel, Kernel, Workers };
  auto feed = [&](kob::SummaryFold& f, const KernelCall& c, std::initializer_list<Piece> order) {
    for (Piece p : order) {
      if (p == Primary) f.omp_implicit_task(c.tasks[0]);
      if (p == Parallel) f.omp_parallel(c.parallel);
      if (p == Kernel) f.kernel(c.kernel);
      if (p == Workers)
        for (std::size_t i = 1; i < c.tasks.size(); ++i) f.omp_implicit_task(c.tasks[i]);
    }
  };
  const std::initializer_list<Piece> orders[] = {
      {Primary, Parallel, Kernel, Workers},  // as the builder gives them: workers when the next region starts
      {Workers, Primary, Parallel, Kernel},  // workers first
      {Primary, Parallel, Workers, Kernel},  // workers between region and kernel
      {Kernel, Workers, Primary, Parallel},  // the kernel before its region (a run cut short may close both at once)
  };
  std::vector<std::string> results;
  for (const auto& order : orders) {
    kob::SummaryFold f;
    feed(f, a, order);
    feed(f, b, order);
    CHECK(f.pending() == 0);  // every join complete
    f.finish(tail_of_run(3));
    const kob::Summary s = f.result();
    REQUIRE(s.openmp.kernels.size() == 1);
    const kob::OmpKernelStats& k = s.openmp.kernels[0];
    CHECK(k.name == "fo_k");
    CHECK(k.calls == 2);
    CHECK(k.parallel_regions == 2);
    CHECK(k.team_size_sum == 5);
    CHECK(k.task_time == (78 + 48 + 76) + (78 + 38));
    CHECK(k.wait_time == 50);
    CHECK(k.imbalance_regions == 2);
    // ((58 - 152/3) / 58 + (78 - 58) / 78) / 2
    CHECK(k.load_imbalance() == doctest::Approx(((58.0 - 152.0 / 3) / 58 + 20.0 / 78) / 2).epsilon(1e-12));
    CHECK(s.openmp.implicit_tasks == 5);
    CHECK(s.openmp.parallel_regions == 2);
    results.push_back(json(s));
  }
  for (const std::string& r : results) CHECK(r == results[0]);
}

TEST_CASE("summary fold: the state held stays small over 100000 kernels, kept or dropped by the filter") {
  for (const bool drop : {false, true}) {
    INFO("kernels dropped by --exclude: " << drop);
    kob::SummaryFold fold;
    kob::FilterSink filter(fold, "", drop ? "^fo_loop$|^fo_main$" : "");
    std::size_t most = 0;
    constexpr std::uint64_t kCalls = 100000;
    for (std::uint64_t i = 0; i < kCalls; ++i) {
      const std::uint64_t t = 1000 + i * 200;
      const KernelCall c = kernel_call("fo_loop", i + 1, t, {{60, 10}, {40, 0}});
      kob::RegionSpan r = kob_test::span<kob::RegionSpan>(0, t + 1, t + 99);
      r.name = nm("fo_step");
      r.path = "fo_main/fo_step";
      r.depth = 1;
      // In stream order: the primary thread's task ends inside the region, the region, the
      // kernel, the region around it; the worker's task when the next region starts.
      filter.omp_implicit_task(c.tasks[0]);
      filter.omp_parallel(c.parallel);
      filter.kernel(c.kernel);
      filter.region(r);
      most = std::max(most, fold.pending());
      filter.omp_implicit_task(c.tasks[1]);
      most = std::max(most, fold.pending());
    }
    kob::RegionSpan main = kob_test::span<kob::RegionSpan>(0, 0, 1000 + kCalls * 200);
    main.name = nm("fo_main");
    main.path = "fo_main";
    filter.region(main);
    CHECK(most <= 4);
    filter.finish(tail_of_run(2));
    const kob::Summary s = fold.result();
    CHECK(s.openmp.parallel_regions == kCalls);
    CHECK(s.openmp.implicit_tasks == 2 * kCalls);
    const kob::RegionStats* step = nullptr;
    for (const auto& x : s.regions)
      if (x.path == "fo_main/fo_step") step = &x;
    REQUIRE(step != nullptr);
    CHECK(step->calls == kCalls);
    CHECK(step->exclusive == 98 * kCalls);
    if (drop) {
      CHECK(s.kernels.empty());
      CHECK(s.openmp.kernels.empty());  // its regions are left out with it, as before
      CHECK(s.filtered_kernels == kCalls);
      CHECK(s.filtered_regions == 1);
      CHECK(s.regions.size() == 1);
    } else {
      REQUIRE(s.openmp.kernels.size() == 1);
      CHECK(s.openmp.kernels[0].calls == kCalls);
      CHECK(s.openmp.kernels[0].parallel_regions == kCalls);
      CHECK(s.openmp.kernels[0].imbalance_regions == kCalls);
      CHECK(s.openmp.kernels[0].task_time == 110 * kCalls);
      CHECK(s.openmp.kernels[0].load_imbalance() == doctest::Approx((60.0 - 50.0) / 60.0));
      REQUIRE(s.regions.size() == 2);
      CHECK(s.regions[0].path == "fo_main");
      CHECK(s.regions[0].exclusive == main.dur() - 98 * kCalls);
    }
  }
}

namespace {

// Where replay_timeline gave each span and instant: position by address.
struct OrderSink : kob::SpanSink {
  std::map<const void*, std::size_t> at;
  std::vector<const kob::OmpTaskCreate*> creates;
  std::vector<std::uint64_t> memory_times;
  std::size_t n = 0, finishes = 0;
  void put(const void* p) { at.emplace(p, n++); }
  void kernel(const kob::KernelSpan& x) override { put(&x); }
  void region(const kob::RegionSpan& x) override { put(&x); }
  void memory(const kob::MemoryEvent& x) override {
    put(&x);
    memory_times.push_back(x.time);
  }
  void omp_parallel(const kob::OmpParallelSpan& x) override { put(&x); }
  void omp_implicit_task(const kob::OmpImplicitTaskSpan& x) override { put(&x); }
  void omp_task_create(const kob::OmpTaskCreate& x) override {
    put(&x);
    creates.push_back(&x);
  }
  void omp_data_op(const kob::OmpDataOpSpan& x) override { put(&x); }
  void deep_copy(const kob::DeepCopySpan& x) override { put(&x); }
  void finish(const kob::Timeline& rest) override {
    ++finishes;
    CHECK(rest.kernels.empty());
    CHECK(rest.regions.empty());
    CHECK(rest.tracks.size() == 5);
    CHECK(rest.problems.size() == 1);
  }
};

}  // namespace

TEST_CASE("replay_timeline: each span once, nested ones first, workers' implicit tasks after their region and kernel") {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const RandomRun run(seed);
    const kob::Timeline& t = run.t;
    OrderSink o;
    kob::replay_timeline(t, o);
    CHECK(o.finishes == 1);
    CHECK(o.at.size() == t.kernels.size() + t.regions.size() + t.memory.size() + t.omp_parallels.size() + t.omp_implicit_tasks.size() +
                             t.omp_task_creates.size() + t.omp_data_ops.size() + t.deep_copies.size());
    CHECK(o.n == o.at.size());  // none twice
    // A region holding another (as the walk in start order decides) comes after it.
    for (const kob::RegionSpan& a : t.regions)
      for (const kob::RegionSpan& b : t.regions) {
        const bool holds = a.track == b.track && &a != &b && b.start < a.end &&
                           std::make_tuple(a.start, b.end, a.depth) < std::make_tuple(b.start, a.end, b.depth) && b.end <= a.end;
        if (holds) CHECK(o.at[&b] < o.at[&a]);
      }
    // Data ops come before the deep copy that caused them.
    for (const kob::OmpDataOpSpan& x : t.omp_data_ops)
      for (const kob::DeepCopySpan& d : t.deep_copies)
        if (x.deep_copy == d.id) CHECK(o.at[&x] < o.at[&d]);
    for (const kob::OmpImplicitTaskSpan& i : t.omp_implicit_tasks) {
      if (i.initial) continue;
      for (const kob::OmpParallelSpan& p : t.omp_parallels) {
        if (p.id != i.parallel_id) continue;
        if (p.track == i.track) {
          CHECK(o.at[&i] < o.at[&p]);  // the primary thread's ends inside the region
          continue;
        }
        CHECK(o.at[&p] < o.at[&i]);
        for (const kob::KernelSpan& k : t.kernels)
          if (k.id == p.kernel) CHECK(o.at[&k] < o.at[&i]);
      }
    }
    // Task creates in their vector's order (their numbers), memory in time order.
    REQUIRE(o.creates.size() == t.omp_task_creates.size());
    for (std::size_t i = 0; i < o.creates.size(); ++i) CHECK(o.creates[i] == &t.omp_task_creates[i]);
    CHECK(std::is_sorted(o.memory_times.begin(), o.memory_times.end()));
  }
}

// ---- OpenMP constructs outside kernels, by source location (OmpSummary::constructs) ----------------

namespace {

// A plain `omp parallel` region outside any kernel at code address `codeptr`, on track 0 from t to
// t + dur, and its implicit tasks (busy, wait) on tracks 0, 1, ..., given as the builder gives them:
// the primary thread's task, the region, then the workers' tasks.
void plain_region(kob::SummaryFold& f, std::uint64_t id, std::uint64_t codeptr, std::uint64_t t, std::uint64_t dur,
                  const std::vector<std::pair<std::uint64_t, std::uint64_t>>& busy_wait) {
  kob::OmpParallelSpan p = kob_test::span<kob::OmpParallelSpan>(0, t, t + dur);
  p.id = id;
  p.codeptr = codeptr;
  p.team_size = static_cast<std::uint32_t>(busy_wait.size());
  std::vector<kob::OmpImplicitTaskSpan> tasks;
  for (std::uint32_t i = 0; i < busy_wait.size(); ++i) {
    const auto [busy, wait] = busy_wait[i];
    kob::OmpImplicitTaskSpan x = kob_test::span<kob::OmpImplicitTaskSpan>(i, t + 1, t + 1 + busy + wait);
    x.parallel_id = id;
    x.thread_num = i;
    x.team_size = p.team_size;
    x.wait_ns = wait;
    tasks.push_back(x);
  }
  f.omp_implicit_task(tasks[0]);
  f.omp_parallel(p);
  for (std::size_t i = 1; i < tasks.size(); ++i) f.omp_implicit_task(tasks[i]);
}

const kob::OmpConstructStats* construct(const kob::Summary& s, const std::string& kind, const std::string& label) {
  for (const kob::OmpConstructStats& c : s.openmp.constructs)
    if (c.kind == kind && c.label == label) return &c;
  return nullptr;
}

template <class Span>
Span at(std::uint32_t track, std::uint64_t start, std::uint64_t end, std::uint64_t codeptr) {
  Span x = kob_test::span<Span>(track, start, end);
  x.codeptr = codeptr;
  return x;
}

kob::OmpWorkSpan loop_static(std::uint32_t track, std::uint64_t start, std::uint64_t end, std::uint64_t codeptr) {
  kob::OmpWorkSpan w = at<kob::OmpWorkSpan>(track, start, end, codeptr);
  w.type = 10;  // ompt_work_loop_static
  return w;
}

// Where the call returns to (a codeptr_ra as OMPT gives it), inside the function that made it.
[[gnu::noinline]] std::uint64_t return_address() {
  asm volatile("");
  return reinterpret_cast<std::uint64_t>(__builtin_return_address(0));
}
[[gnu::noinline]] std::uint64_t construct_site() {
  const std::uint64_t ra = return_address();
  asm volatile("" ::: "memory");  // no tail call: the address stays inside this function
  return ra;
}

}  // namespace

TEST_CASE("summary fold: OpenMP constructs outside kernels, a row per kind and location, largest total first") {
  kob_test::RecorderReset reset;
  kob::SourceResolver sources(std::vector<kob::modules::Module>{});  // no module: each address its own place, "0x..."
  kob::SummaryFold f;
  f.set_sources(&sources);
  kob::CallTimes times;  // kob diff's: every call's time per row
  f.set_call_times(&times);
  using kob::OmpMutexSpan;
  using kob::OmpSyncSpan;
  using kob::OmpWorkSpan;
  // Task creates are numbered in the order given: 0 and 1 at one site, 2 inside a kernel.
  for (std::uint64_t i = 0; i < 3; ++i) {
    kob::OmpTaskCreate c;
    c.time = 5 + i;
    c.task_id = 100 + i;
    c.codeptr = 0x401060;
    c.kernel = i == 2 ? 9 : 0;
    f.omp_task_create(c);
  }
  // Site P: two regions, busy (60, 40) and (50, 50); site Q: one, busy (10, 10) with a 5 ns wait.
  plain_region(f, 1, 0x401000, 100, 100, {{60, 0}, {40, 0}});
  plain_region(f, 2, 0x401000, 300, 100, {{50, 0}, {50, 0}});
  plain_region(f, 3, 0x402000, 500, 45, {{10, 0}, {10, 5}});
  plain_region(f, 4, 0, 600, 500, {{10, 0}, {10, 0}});  // no code address: no row
  kob::OmpParallelSpan helper = at<kob::OmpParallelSpan>(0, 700, 800, 0x405000);
  helper.hidden_helper = true;  // the runtime's own team: no row
  f.omp_parallel(helper);
  // A kernel with its own region (the kernel row tells it), inside a plain region at site R.
  kob::KernelSpan k = kob_test::span<kob::KernelSpan>(0, 1010, 1050);
  k.id = 7;
  k.name = nm("fc_kernel");
  k.devid = 0x01000000;
  kob::OmpParallelSpan in_kernel = at<kob::OmpParallelSpan>(0, 1011, 1049, 0x403000);
  in_kernel.id = 5;
  in_kernel.kernel = 7;
  f.omp_parallel(in_kernel);
  f.kernel(k);
  plain_region(f, 6, 0x404000, 1000, 100, {{90, 0}});
  // Work and sync: per thread; the implicit barrier and the loop inside the kernel have no row.
  f.omp_work(loop_static(0, 110, 140, 0x401010));
  f.omp_work(loop_static(1, 110, 130, 0x401010));
  OmpWorkSpan kernel_loop = loop_static(0, 1012, 1040, 0x403010);
  kernel_loop.kernel = 7;
  f.omp_work(kernel_loop);
  OmpSyncSpan barrier = at<OmpSyncSpan>(0, 150, 157, 0x401020);
  barrier.kind = 3;  // barrier_explicit
  barrier.wait_ns = 4;
  f.omp_sync(barrier);
  OmpSyncSpan implicit = at<OmpSyncSpan>(0, 160, 199, 0x401030);
  implicit.kind = 9;  // barrier_implicit_parallel
  f.omp_sync(implicit);
  // A contended critical: wait 30 then hold 10, on both threads; a lock tried (failed) and then held.
  for (std::uint32_t th = 0; th < 2; ++th) {
    OmpMutexSpan w = at<OmpMutexSpan>(th, 2000, 2030, 0x401040);
    w.kind = 5;
    f.omp_mutex(w);
    OmpMutexSpan h = at<OmpMutexSpan>(th, 2030, 2040, 0x401040);
    h.kind = 5;
    h.hold = true;
    f.omp_mutex(h);
  }
  OmpMutexSpan tried = at<OmpMutexSpan>(0, 2100, 2100, 0x401050);
  tried.kind = 2;  // test_lock: the lock family
  tried.failed = true;
  f.omp_mutex(tried);
  OmpMutexSpan lw = at<OmpMutexSpan>(0, 2101, 2103, 0x401050);
  lw.kind = 1;
  f.omp_mutex(lw);
  OmpMutexSpan lh = at<OmpMutexSpan>(0, 2103, 2106, 0x401050);
  lh.kind = 1;
  lh.hold = true;
  f.omp_mutex(lh);
  // Tasks of site 0x401060: task 0 runs twice (yield, then complete), task 1 once; task 2's kernel.
  auto stretch = [&](std::size_t create, std::uint64_t start, std::uint64_t dur, std::uint32_t status) {
    kob::OmpTaskSpan x = kob_test::span<kob::OmpTaskSpan>(1, start, start + dur);
    x.create = create;
    x.task_id = 100 + create;
    x.status = status;
    f.omp_task(x);
  };
  stretch(0, 3000, 5, 2);
  CHECK(f.pending() == 2);  // tasks 0 and 1 wait for their ends
  stretch(1, 3010, 7, 1);
  stretch(0, 3020, 6, 1);
  stretch(2, 3030, 9, 1);
  CHECK(f.pending() == 0);
  // Target regions: one of the program's; one that belongs to a deep copy has no row.
  kob::OmpTargetSpan tg = at<kob::OmpTargetSpan>(0, 4000, 4025, 0x401070);
  tg.kind = 1;
  f.omp_target(tg);
  kob::OmpTargetSpan copy = at<kob::OmpTargetSpan>(0, 4100, 4200, 0x401080);
  copy.kind = 2;
  copy.deep_copy = 3;
  f.omp_target(copy);
  f.finish(tail_of_run(2));
  const kob::Summary s = f.result();

  std::vector<std::pair<std::string, std::string>> rows;
  for (const kob::OmpConstructStats& c : s.openmp.constructs) rows.emplace_back(c.kind, c.label);
  const std::vector<std::pair<std::string, std::string>> want{
      {"parallel", "0x401000"}, {"parallel", "0x404000"}, {"critical", "0x401040"}, {"loop_static", "0x401010"},
      {"parallel", "0x402000"}, {"target", "0x401070"},  {"task", "0x401060"},     {"barrier_explicit", "0x401020"},
      {"lock", "0x401050"}};
  CHECK(rows == want);

  const kob::OmpConstructStats* p = construct(s, "parallel", "0x401000");
  REQUIRE(p != nullptr);
  CHECK(p->category == kob::OmpConstructStats::Category::Parallel);
  CHECK(p->source == "0x401000");
  CHECK((p->function.empty() && p->file.empty() && p->line == 0 && p->module.empty()));
  CHECK((p->calls == 2 && p->total == 200 && p->mean() == 100));
  CHECK((p->parallel_regions == 2 && p->team_size_sum == 4 && p->imbalance_regions == 2));
  CHECK((p->busy_max == 110 && p->busy_mean == 100 && p->task_time == 200 && p->wait_time == 0));
  CHECK(p->load_imbalance() == doctest::Approx((10.0 / 60 + 0) / 2));  // computed as for a kernel's regions
  CHECK(p->regions_with_kernels == 0);
  const kob::OmpConstructStats* q = construct(s, "parallel", "0x402000");
  REQUIRE(q != nullptr);
  CHECK((q->task_time == 25 && q->wait_time == 5));
  CHECK(q->barrier_wait_share() == doctest::Approx(0.2));
  const kob::OmpConstructStats* r = construct(s, "parallel", "0x404000");
  REQUIRE(r != nullptr);
  CHECK(r->regions_with_kernels == 1);  // the kernel ran during it
  const kob::OmpConstructStats* loop = construct(s, "loop_static", "0x401010");
  REQUIRE(loop != nullptr);
  CHECK((loop->category == kob::OmpConstructStats::Category::Work && loop->calls == 2 && loop->total == 50));
  const kob::OmpConstructStats* crit = construct(s, "critical", "0x401040");
  REQUIRE(crit != nullptr);
  CHECK((crit->calls == 2 && crit->wait == 60 && crit->hold == 20 && crit->total == 80));
  const kob::OmpConstructStats* lock = construct(s, "lock", "0x401050");
  REQUIRE(lock != nullptr);
  CHECK((lock->calls == 1 && lock->wait == 2 && lock->hold == 3 && lock->failed_tries == 1));
  const kob::OmpConstructStats* task = construct(s, "task", "0x401060");
  REQUIRE(task != nullptr);
  CHECK((task->calls == 2 && task->stretches == 3 && task->total == 18));
  const kob::OmpConstructStats* bar = construct(s, "barrier_explicit", "0x401020");
  REQUIRE(bar != nullptr);
  CHECK((bar->calls == 1 && bar->total == 7 && bar->wait == 4));
  // The aggregate figures are those of every event, as without locations.
  CHECK(s.openmp.parallel_regions == 6);
  CHECK(s.openmp.tasks_created == 3);
  // A time per call of each row (a lock: wait and hold; a task: its stretches), adding up to its total.
  for (const kob::OmpConstructStats& c : s.openmp.constructs) {
    const std::vector<std::uint64_t>& t = times.constructs[c.place_key()];
    std::uint64_t sum = 0;
    for (std::uint64_t x : t) sum += x;
    CHECK_MESSAGE(t.size() == c.calls, c.kind);
    CHECK_MESSAGE(sum == c.total, c.kind);
  }
  CHECK(times.constructs.size() == s.openmp.constructs.size());

  const std::string js = json(s);
  CHECK(kob_test::python_json_check(js, R"(
c = d['openmp']['constructs']
assert [x['kind'] for x in c][:3] == ['parallel', 'parallel', 'critical'], c
p = c[0]
for k in ('kind', 'function', 'file', 'line', 'module', 'source', 'calls', 'total_ns', 'mean_ns', 'team_size', 'load_imbalance', 'barrier_wait'):
    assert k in p, k
assert (p['calls'], p['total_ns'], p['mean_ns'], p['team_size'], p['line']) == (2, 200, 100, 2, 0), p
assert abs(p['load_imbalance'] - 1 / 12) < 1e-6 and p['barrier_wait'] == 0, p
m = c[2]
assert (m['wait_ns'], m['hold_ns'], m['category']) == (60, 20, 'mutex') and 'team_size' not in m, m
t = [x for x in c if x['kind'] == 'task'][0]
assert (t['created'], t['stretches'], t['total_ns']) == (2, 3, 18), t
)") == 0);
  const std::string text = kob::summary_text(s, "x");
  CHECK(text.find("\nOpenMP constructs outside Kokkos kernels, by source location") != std::string::npos);
  const std::size_t row = text.find("\n  0x401000 ");
  REQUIRE(row != std::string::npos);
  std::istringstream cells(text.substr(row + 1, text.find('\n', row + 1) - row - 1));
  std::vector<std::string> words{std::istream_iterator<std::string>(cells), std::istream_iterator<std::string>()};
  CHECK(words == std::vector<std::string>{"0x401000", "parallel", "2", "200", "100", "2.0", "8.3%", "0.0%", "-", "-"});
}

TEST_CASE("summary fold: a loop's team figures come from its own spans and the implicit barrier that ends it") {
  kob_test::RecorderReset reset;
  kob::SourceResolver sources(std::vector<kob::modules::Module>{});
  kob::SummaryFold f;
  f.set_sources(&sources);
  // One region of 2 at 0x406000 holding one loop at 0x406010: thread 0 works 30 ns in it and then
  // waits 10 ns of its 12 ns barrier; thread 1 works 20 ns, 2 ns barrier. In the builder's order:
  // the primary thread's spans, its task and the region, then the worker's spans and task.
  kob::OmpParallelSpan p = at<kob::OmpParallelSpan>(0, 100, 200, 0x406000);
  p.id = 20;
  p.team_size = 2;
  for (std::uint32_t th = 0; th < 2; ++th) {
    kob::OmpWorkSpan w = loop_static(th, 110, 110 + (th == 0 ? 30 : 20), 0x406010);
    w.parallel_id = 20;
    f.omp_work(w);
    kob::OmpSyncSpan b = at<kob::OmpSyncSpan>(th, w.end, w.end + (th == 0 ? 12 : 2), 0x406020);
    b.kind = 8;  // barrier_implicit_workshare
    b.parallel_id = 20;
    b.wait_ns = th == 0 ? 10 : 0;
    f.omp_sync(b);
    kob::OmpImplicitTaskSpan i = kob_test::span<kob::OmpImplicitTaskSpan>(th, 101, 190);
    i.parallel_id = 20;
    i.thread_num = th;
    i.team_size = 2;
    f.omp_implicit_task(i);
    if (th == 0) f.omp_parallel(p);
  }
  CHECK(f.pending() == 0);
  f.finish(tail_of_run(2));
  const kob::Summary s = f.result();
  const kob::OmpConstructStats* loop = construct(s, "loop_static", "0x406010");
  REQUIRE(loop != nullptr);
  CHECK((loop->calls == 2 && loop->total == 50));
  CHECK((loop->parallel_regions == 1 && loop->team_size_sum == 2 && loop->imbalance_regions == 1));
  CHECK((loop->busy_max == 30 && loop->busy_mean == 25));
  CHECK(loop->load_imbalance() == doctest::Approx(5.0 / 30));
  CHECK((loop->task_time == 64 && loop->wait_time == 10));
  CHECK(construct(s, "barrier_implicit_workshare", "0x406020") == nullptr);  // implicit: no row of its own
  const kob::OmpConstructStats* region = construct(s, "parallel", "0x406000");
  REQUIRE(region != nullptr);
  CHECK((region->calls == 1 && region->team_size_sum == 2 && region->imbalance_regions == 1));
  CHECK(kob_test::python_json_check(json(s), R"(
c = {x['kind']: x for x in d['openmp']['constructs']}
l = c['loop_static']
assert (l['category'], l['team_size'], l['barrier_wait_ns'], l['busy_max_ns']) == ('work', 2, 10, 30), l
assert abs(l['load_imbalance'] - 5 / 30) < 1e-6 and abs(l['barrier_wait'] - 10 / 64) < 1e-6, l
)") == 0);
}

TEST_CASE("summary fold: without a resolver no constructs table, and every other figure the same") {
  kob_test::RecorderReset reset;
  kob::SourceResolver sources(std::vector<kob::modules::Module>{});
  std::string plain, with_rows;
  for (kob::SourceResolver* r : {static_cast<kob::SourceResolver*>(nullptr), &sources}) {
    kob::SummaryFold f;
    f.set_sources(r);
    plain_region(f, 1, 0x401000, 100, 100, {{60, 0}, {40, 0}});
    f.omp_work(loop_static(0, 110, 140, 0x401010));
    f.finish(tail_of_run(2));
    kob::Summary s = f.result();
    CHECK(s.openmp.constructs.size() == (r ? 2u : 0u));
    s.openmp.constructs.clear();
    (r ? with_rows : plain) = json(s);
  }
  CHECK(plain == with_rows);
  CHECK(plain.find("\"constructs\": []") != std::string::npos);
}

TEST_CASE("summary fold: the addresses of one directive share a row; without a line, each address is its own") {
  kob_test::RawReset reset;  // poll() writes the modules as the raw trace's entries
  kob::modules::poll();
  kob::SourceResolver sources(kob::modules::seen());
  const std::uint64_t site = construct_site();
  // Two addresses in the same call instruction (codeptr - 1 is looked up), as a loop the compiler
  // emitted twice gives two addresses of one line; and an address in another function.
  const std::uint64_t other = reinterpret_cast<std::uint64_t>(&plain_region) + 1;
  const kob::SourceLocation a = sources.at(site), b = sources.at(site - 1), c = sources.at(other);
  REQUIRE(a.module.find("unit_tests") != std::string::npos);
  kob::SummaryFold f;
  f.set_sources(&sources);
  f.omp_work(loop_static(0, 10, 20, site));
  f.omp_work(loop_static(1, 10, 25, site - 1));
  f.omp_work(loop_static(0, 30, 31, other));
  f.finish(tail_of_run(2));
  const kob::Summary s = f.result();
  CAPTURE(a.source);
  CAPTURE(b.source);
  if (a.line != 0 && a.same_place(b)) {  // built with line information (-g): one directive, one row
    REQUIRE(s.openmp.constructs.size() == 2);
    CHECK(s.openmp.constructs[0].calls == 2);
    CHECK(s.openmp.constructs[0].total == 25);
    CHECK(s.openmp.constructs[0].label == a.label);
    CHECK(s.openmp.constructs[0].line == a.line);
    CHECK(s.openmp.constructs[0].file.find("test_summary_fold.cpp") != std::string::npos);
  } else {  // no line: the offsets differ, and so do the rows
    CHECK(a.line == 0);
    CHECK(s.openmp.constructs.size() == 3);
  }
  CHECK(s.openmp.constructs.back().label == c.label);
}

TEST_CASE("summary fold: a region's work is its threads' time in worksharing constructs and tasks; tasks' creation and start") {
  // One region at 0x406000 on threads 0 and 1. Thread 0 runs a `single` (110-250) that creates four
  // tasks at 0x406100 (120, 130, 140, 170) and runs one of them itself inside it (150-160); thread
  // 1 skips the single (110-111) and runs the other three (125-135, 145-155, 175-185). As the
  // builder gives them: nested spans first, each at its end.
  kob_test::RecorderReset reset;
  kob::SourceResolver sources(std::vector<kob::modules::Module>{});
  kob::SummaryFold f;
  f.set_sources(&sources);
  auto create = [&](std::uint64_t time) {
    kob::OmpTaskCreate c;
    c.time = time;
    c.track = 0;
    c.codeptr = 0x406100;
    f.omp_task_create(c);
  };
  auto stretch = [&](std::uint32_t track, std::size_t number, std::uint64_t start) {
    kob::OmpTaskSpan x = kob_test::span<kob::OmpTaskSpan>(track, start, start + 10);
    x.create = number;
    x.status = 1;  // complete
    f.omp_task(x);
  };
  kob::OmpWorkSpan skip = at<kob::OmpWorkSpan>(1, 110, 111, 0x406010);
  skip.type = 4;  // single_other
  kob::OmpWorkSpan single = at<kob::OmpWorkSpan>(0, 110, 250, 0x406010);
  single.type = 3;  // single_executor
  skip.parallel_id = single.parallel_id = 10;
  f.omp_work(skip);
  create(120);
  create(130);
  stretch(1, 0, 125);
  create(140);
  stretch(1, 1, 145);
  stretch(0, 2, 150);
  create(170);  // after a task ran on this thread: no creation gap
  stretch(1, 3, 175);
  f.omp_work(single);
  plain_region(f, 10, 0x406000, 100, 200, {{159, 30}, {19, 170}});
  f.finish(tail_of_run(2));
  const kob::Summary s = f.result();

  const kob::OmpConstructStats* p = construct(s, "parallel", "0x406000");
  REQUIRE(p != nullptr);
  CHECK(p->busy_max == 140);         // the single, less the task run inside it
  CHECK(p->busy_mean == (140 + 31) / 2);  // thread 1: 1 in the skipped single, 30 in tasks
  CHECK(p->implicit_busy_max == 159);
  CHECK(p->load_imbalance() == doctest::Approx((140.0 - 85.5) / 140.0));
  CHECK(p->construct_regions == 1);
  CHECK(p->loop_regions == 0);
  CHECK(p->task_regions == 1);
  CHECK(p->producer_regions == 1);
  CHECK((p->requested_one == 0 && p->nested_regions == 0));
  const kob::OmpConstructStats* t = construct(s, "task", "0x406100");
  REQUIRE(t != nullptr);
  CHECK(t->calls == 4);
  CHECK(t->tasks_started == 4);
  CHECK(t->total == 40);
  CHECK(t->start_delay == 5 + 15 + 10 + 5);
  CHECK(t->create_gaps == 2);
  CHECK(t->create_gap == 20);
}

TEST_CASE("summary fold: a kernel whose regions hold worksharing loops (Kokkos 4's OpenMP backend) counts the loops as work") {
  // One call: the implicit tasks are busy 58 and 48 but the loops inside them take 20 and 10
  // (the rest is the runtime's and Kokkos' dispatch): the kernel's work figures are the loops'.
  const KernelCall c = kernel_call("fw_k", 5, 0, {{58, 0}, {48, 0}});
  kob::SummaryFold f;
  for (std::uint32_t th = 0; th < 2; ++th) {
    kob::OmpWorkSpan w = kob_test::span<kob::OmpWorkSpan>(th, 20, th == 0 ? 40 : 30);
    w.type = 10;  // loop_static
    w.parallel_id = 5;
    w.kernel = 5;
    f.omp_work(w);
  }
  f.omp_implicit_task(c.tasks[0]);
  f.omp_parallel(c.parallel);
  f.kernel(c.kernel);
  f.omp_implicit_task(c.tasks[1]);
  f.finish(tail_of_run(2));
  const kob::Summary s = f.result();
  REQUIRE(s.openmp.kernels.size() == 1);
  const kob::OmpKernelStats& k = s.openmp.kernels[0];
  CHECK(k.busy_max == 20);
  CHECK(k.busy_mean == 15);
  CHECK(k.implicit_busy_max == 58);
  CHECK(k.construct_regions == 1);
  CHECK(k.loop_regions == 1);
  CHECK(k.load_imbalance() == doctest::Approx(0.25));
}

TEST_CASE("constructs table: ties in total go by each row's first call, not the order the rows were made") {
  // The per-thread engine makes rows epoch by epoch; a call of an earlier epoch can end after one
  // of the next (a thread's chunk runs past the epoch's bound). seen_first keeps each row's earliest
  // first call, which the table's ties follow.
  kob::SourceResolver sources(std::vector<kob::modules::Module>{});  // no module: each address its own place
  kob::summary_fold_detail::ConstructRows rows;
  rows.set_sources(&sources);
  using Category = kob::OmpConstructStats::Category;
  const std::uint32_t a = rows.row_of(Category::Parallel, 0, 0x1000);  // made first, seen first at 500
  const std::uint32_t b = rows.row_of(Category::Parallel, 0, 0x2000);  // made second, seen first at 300
  const std::uint32_t c = rows.row_of(Category::Parallel, 0, 0x3000);  // more time: first whatever its call
  REQUIRE(a != b);
  CHECK(rows.known_row(Category::Parallel, 0, 0x2000) == b);
  CHECK(rows.known_row(Category::Parallel, 0, 0x4000) == kob::summary_fold_detail::ConstructRows::kNoRow);
  rows.seen_first(a, 500, 0, 1);
  rows.seen_first(b, 400, 1, 1);
  rows.seen_first(b, 300, 1, 2);  // an earlier call of b's, from a later epoch
  rows.seen_first(b, 600, 0, 0);  // a later one changes nothing
  rows.seen_first(c, 100, 0, 0);
  for (const std::uint32_t r : {a, b}) rows.add_parallel(r, 50, 2, false);
  rows.add_parallel(c, 80, 2, false);
  const std::vector<kob::OmpConstructStats> out = rows.result(false);
  REQUIRE(out.size() == 3);
  CHECK(out[0].total == 80);
  CHECK(out[1].offset == 0x2000 - 1);  // b (the call's byte: one before the return address)
  CHECK(out[2].offset == 0x1000 - 1);  // then a
}
