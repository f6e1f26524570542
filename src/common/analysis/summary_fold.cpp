// SummaryFold, Kokkos: kernels, regions (exclusive time), memory, copies, fences, sections; and
// the figures at finish.
#include "common/analysis/summary_fold.hpp"

#include "common/timeline/devid.hpp"
#include "common/analysis/findings.hpp"
#include "common/record/intern.hpp"
#include "common/record/mpi_calls.hpp"
#include "common/analysis/summary_fold_state.hpp"

namespace kob {

using namespace summary_fold_detail;  // the state's helper types

SummaryFold::SummaryFold() : s_(std::make_unique<State>()) {}
SummaryFold::~SummaryFold() = default;

void SummaryFold::set_sources(SourceResolver* sources) { s_->constructs.set_sources(sources); }

void SummaryFold::set_call_times(CallTimes* out) {
  call_times_ = out;
  s_->constructs.keep_calls(out != nullptr);
}

std::size_t SummaryFold::pending() const {
  std::size_t n = s_->joins.size() + s_->waits.size() + s_->refs.size() + s_->submits_waiting.size() + s_->copy_ops_waiting.size() +
                  s_->constructs.pending();
  for (const TrackRegions& t : s_->region_tracks) n += t.by_path.size();
  return n;
}

void SummaryFold::kernel(const KernelSpan& k) {
  State& s = *s_;
  const KernelKey key{k.name, k.kind, summary_fold_detail::space_of(k.devid)};
  KernelAcc& st = s.kernels[key];
  add_track(st.tracks, k.track);
  if (st.calls == 0 || k.start < st.first_start) {
    st.first_start = k.start;
    st.devid = k.devid;
  }
  if (st.calls == 0) st.min = k.dur();
  ++st.calls;
  st.total += k.dur();
  st.min = std::min(st.min, k.dur());
  st.max = std::max(st.max, k.dur());
  if (call_times_ != nullptr) st.durations.push_back(k.dur());

  s.latest_kernel_start = std::max(s.latest_kernel_start, k.start);
  s.kernel_seen = true;
  s.expire_waits(k.track, k.start, k.id);
  s.recent_kernels.put(k.id, key);
  auto w = s.waits.find(k.id);
  if (w != s.waits.end()) {
    s.omp_kernels[key].add(w->second.acc);
    s.waits.erase(w);
  }
  auto r = s.refs.find(k.id);
  if (r != s.refs.end()) {
    r->second.known = true;
    r->second.key = key;
  }
}

void SummaryFold::fence(const FenceSpan& f) {
  NamedStats& st = s_->fences[f.name];
  ++st.calls;
  st.total += f.dur();
}

void SummaryFold::mpi(const MpiSpan& m) {
  NamedStats& st = s_->mpi_calls[m.call];
  ++st.calls;
  st.total += m.dur();
}

// Exclusive time, as a walk of each track's regions in start order with a stack of open ones
// gives it: a region's children are the kept regions it holds directly. They arrive before it.
// Each kept region waits in its track's list until the region that holds it arrives; the
// arriving region takes every waiting one that starts inside it (ties as the walk decides: by
// start, then longer first, then shallower first; a region of no length at the very end of
// another is not inside it). Two waiting regions of one path with some length have the same
// ancestors by name, so (kept or dropped by name alike) the same innermost kept ancestor still
// open: they wait as one entry, and the list is bounded by the distinct paths. (A region of no
// length adds nothing to its holder and need not wait; it would break that rule when it sits at
// the very end of its parent, where the walk gives it to the next region.)
void SummaryFold::region(const RegionSpan& r) {
  State& s = *s_;
  TrackRegions& tr = s.region_track(r.track);
  std::uint64_t child = 0;
  for (auto it = tr.by_start.lower_bound(r.start); it != tr.by_start.end() && it->first < r.end;) {
    const RegionWait& e = it->second;
    const bool inside = it->first > r.start || e.end < r.end || (e.end == r.end && e.depth > r.depth);
    if (!inside) {
      ++it;
      continue;
    }
    child += e.sum;
    tr.by_path.erase(*e.path);
    it = tr.by_start.erase(it);
  }
  RegionAcc& acc = s.regions[r.path];
  RegionStats& st = acc.st;
  if (st.calls == 0) {
    st.path = r.path;
    st.name = names().str(r.name);
    st.depth = r.depth;
  }
  add_track(acc.tracks, r.track);
  ++st.calls;
  st.inclusive += r.dur();
  st.exclusive += r.dur() - std::min(child, r.dur());
  if (call_times_ != nullptr) acc.durations.push_back(r.dur());

  if (r.depth == 0) {
    // Nothing can hold an outermost region, nor anything before it: a region holding an earlier
    // one and ending after this one would hold this one too.
    tr.by_start.clear();
    tr.by_path.clear();
    return;
  }
  if (r.start == r.end) return;  // adds nothing to the time of the region that holds it
  auto p = tr.by_path.find(r.path);
  if (p == tr.by_path.end()) {
    RegionWait w;
    w.end = r.end;
    w.depth = r.depth;
    auto it = tr.by_start.emplace(r.start, w);
    p = tr.by_path.emplace(r.path, it).first;
    it->second.path = &p->first;
  }
  p->second->second.sum += r.dur();
}

void SummaryFold::section(const SectionSpan& sec) {
  NamedStats& st = s_->sections[sec.name];
  ++st.calls;
  st.total += sec.dur();
}

void SummaryFold::deep_copy(const DeepCopySpan& d) {
  CopyStats& st = s_->copies[{d.dst_space, d.src_space}];
  ++st.calls;
  st.bytes += d.bytes;
  st.time += d.dur();

  State& s = *s_;
  const CopySiteKey site{{d.dst_name, d.src_name, d.dst_space, d.src_space}, d.bytes};
  auto it = s.copy_sites.find(site);
  if (it == s.copy_sites.end() && s.copy_sites.size() >= kMaxSites) {
    ++s.sites_untracked;
  } else {
    CopySiteStats& cs = s.copy_sites[site];
    ++cs.calls;
    cs.time += d.dur();
  }

  target_copy(d);
}

void SummaryFold::memory(const MemoryEvent& m) {
  MemoryStats& st = s_->memory[m.space];
  if (m.alloc) {
    ++st.allocations;
    st.bytes_allocated += m.bytes;
    const AllocSiteKey site{m.name, m.space, m.bytes};
    auto it = s_->alloc_sites.find(site);
    if (it != s_->alloc_sites.end()) {
      ++it->second;
    } else if (s_->alloc_sites.size() >= kMaxSites) {
      ++s_->sites_untracked;
    } else {
      s_->alloc_sites.emplace(site, 1);
    }
  } else {
    ++st.deallocations;
    st.unmatched_frees += m.unmatched != 0 ? 1 : 0;
    st.unmatched_bytes += m.unmatched;
  }
  st.high_water = std::max(st.high_water, m.space_level);
  st.final_level = m.space_level;
}

void SummaryFold::instant(const InstantEvent&) { ++s_->profile_events; }

void SummaryFold::dual_view(const DualViewEvent& d) { ++(d.modify ? s_->dual_view_modifies : s_->dual_view_syncs); }

namespace {

void finish_coverage(const Timeline& t, Summary& s) {
  Coverage& c = s.coverage;
  const auto from_start = [&](std::uint64_t ns) { return ns > t.t0 ? ns - t.t0 : 0; };
  c.run_end = from_start(std::max(t.t_end, t.run_end));
  c.complete_until = c.run_end;
  std::vector<std::uint64_t> located(t.tracks.size(), 0);  // events lost in known stretches, by track
  for (const LostSpan& l : t.lost) {
    if (l.track >= t.tracks.size()) continue;
    const Track& tr = t.tracks[l.track];
    c.lost.push_back({tr.index, tr.os_tid, from_start(l.start), from_start(l.end), l.events, loss_reason_name(l.reason)});
    c.complete_until = std::min(c.complete_until, from_start(l.start));
    located[l.track] += l.events;
  }
  for (std::size_t i = 0; i < t.tracks.size(); ++i) {
    const Track& tr = t.tracks[i];
    if (tr.dropped == 0) continue;
    const std::uint64_t until = tr.last_ns ? from_start(tr.last_ns) : 0;
    c.threads.push_back({tr.index, tr.os_tid, tr.dropped, until});
    if (tr.dropped > located[i]) c.complete_until = std::min(c.complete_until, until);  // some after its last event
  }
  if (!c.complete()) s.run_time = c.run_end;
}

void finish_tool_cost(const Timeline& t, Summary& s) {
  for (const Track& tr : t.tracks) {
    if (tr.tool_flushes == 0) continue;
    s.tool.threads.push_back({tr.index, tr.os_tid, tr.tool_flushes, tr.tool_flush_ns});
    s.tool.flushes += tr.tool_flushes;
    s.tool.flush_ns += tr.tool_flush_ns;
  }
}

// Kokkos 3 reports device id 0 (Serial) for a View's initialization kernel whatever space ran it:
// a kernel that opened OpenMP parallel regions ran on the OpenMP backend. Shown so, marked.
// (openmp.kernels is in the order of s.kernels: one walk.)
void infer_devices(Summary& s) {
  std::size_t next = 0;
  for (KernelStats& ks : s.kernels) {
    if (next == s.openmp.kernels.size()) break;
    const OmpKernelStats& ok = s.openmp.kernels[next];
    if (ks.name != ok.name || ks.kind != ok.kind || ks.device != ok.device) continue;
    ++next;
    if (ks.device == "Serial" && ok.parallel_regions != 0) ks.device = s.openmp.kernels[next - 1].device = std::string(kInferredOpenMP);
  }
}

}  // namespace

void SummaryFold::finish(const Timeline& t) {
  State& st = *s_;
  const InternTable& names = kob::names();
  Summary s;
  s.run_time = t.t_end - t.t0;
  s.dropped = t.dropped;
  s.problems = t.problems;
  s.filtered_kernels = t.filtered_kernels;
  s.filtered_regions = t.filtered_regions;
  s.cut_short = t.cut_short;
  s.cut_spans = t.cut_spans;
  finish_coverage(t, s);
  finish_tool_cost(t, s);
  const auto on_lossy = [&](const std::vector<std::uint32_t>& tracks) {
    for (std::uint32_t i : tracks)
      if (i < t.tracks.size() && t.tracks[i].dropped != 0) return true;
    return false;
  };

  for (auto& [key, k] : st.kernels) {
    KernelStats ks;
    ks.name = names.str(key.name);
    ks.kind = kernel_kind_name(key.kind);
    ks.device = device_label(k.devid);
    ks.space = key.space;
    ks.calls = k.calls;
    ks.total = k.total;
    ks.min = k.min;
    ks.max = k.max;
    ks.partial = on_lossy(k.tracks);
    if (call_times_ != nullptr) call_times_->kernels[{ks.name, ks.kind, ks.space}] = std::move(k.durations);
    s.kernels.push_back(ks);
  }
  std::stable_sort(s.kernels.begin(), s.kernels.end(), [](const KernelStats& a, const KernelStats& b) { return a.total > b.total; });
  for (auto& [path, r] : st.regions) {
    s.regions.push_back(r.st);
    s.regions.back().partial = on_lossy(r.tracks);
    if (call_times_ != nullptr) call_times_->regions[path] = std::move(r.durations);
  }
  for (auto& [space, m] : st.memory) {
    s.memory.push_back(m);
    s.memory.back().space = names.str(space);
  }
  for (auto& [key, c] : st.copies) {
    s.copies.push_back(c);
    s.copies.back().dst_space = names.str(key.first);
    s.copies.back().src_space = names.str(key.second);
  }
  for (auto& [n, f] : st.fences) {
    s.fences.push_back(f);
    s.fences.back().name = names.str(n);
  }
  for (auto& [call, m] : st.mpi_calls) {
    s.mpi_calls.push_back(m);
    s.mpi_calls.back().name = kob_mpi_call_name(call);
  }
  for (auto& [n, sec] : st.sections) {
    s.sections.push_back(sec);
    s.sections.back().name = names.str(n);
  }
  for (const auto& [key, c] : st.copy_sites) {
    CopySiteStats cs = c;
    cs.dst_name = names.str(std::get<0>(key.first));
    cs.src_name = names.str(std::get<1>(key.first));
    cs.dst_space = names.str(std::get<2>(key.first));
    cs.src_space = names.str(std::get<3>(key.first));
    cs.bytes = key.second;
    s.copy_sites.push_back(cs);
  }
  std::stable_sort(s.copy_sites.begin(), s.copy_sites.end(),
                   [](const CopySiteStats& a, const CopySiteStats& b) { return a.time > b.time; });
  for (const auto& [key, n] : st.alloc_sites)
    s.alloc_sites.push_back({names.str(std::get<0>(key)), names.str(std::get<1>(key)), std::get<2>(key), n});
  std::stable_sort(s.alloc_sites.begin(), s.alloc_sites.end(),
                   [](const AllocSiteStats& a, const AllocSiteStats& b) { return a.allocations > b.allocations; });
  s.sites_untracked = st.sites_untracked;
  s.profile_events = st.profile_events;
  s.dual_view_syncs = st.dual_view_syncs;
  s.dual_view_modifies = st.dual_view_modifies;

  finish_omp(t, s);
  if (call_times_ != nullptr) st.constructs.take_calls(call_times_->constructs);
  s.openmp.available_threads = available_threads_;
  infer_devices(s);
  finish_target(t, s);
  s.findings = findings::find(s);
  // Joins that never completed (a kernel dropped by --include/--exclude, a region whose tasks were
  // lost) add nothing more: drop them.
  st.joins.clear();
  st.waits.clear();
  st.refs.clear();
  st.copy_ops_waiting.clear();
  st.region_tracks.clear();
  st.constructs.clear_pending();
  summary_ = std::move(s);
}

}  // namespace kob
